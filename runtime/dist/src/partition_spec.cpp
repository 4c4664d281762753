/** \file Partition specs: a small recursive-descent parser for Python tuples, printing, resolution. */
#include "nki/partition_spec.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <optional>

#include "nki/error.h"

namespace nki {

namespace {

/** A parsed Python value: None, a string, an integer, or a tuple of values. */
struct PyValue {
  enum class Kind { none, str, integer, tuple } kind = Kind::none;
  std::string text;
  int integer = 0;
  std::vector<PyValue> items;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  PyValue top() {
    skip_space();
    if (pos_ == s_.size()) fail("it is empty; expected a tuple such as ('x', None)");
    const std::size_t start = pos_;
    PyValue v = value();
    skip_space();
    if (pos_ != s_.size()) fail(fmt::format("unexpected \"{}\" at position {} after the tuple", rest(), pos_));
    if (v.kind != PyValue::Kind::tuple) {
      const std::string_view what = s_.substr(start, pos_ - start);
      if (s_[start] == '(') fail("it is not a tuple: a one-element tuple needs a trailing comma, as in ('x',)");
      fail(fmt::format("{} is not a tuple; expected a tuple such as ('x', None)", trim(what)));
    }
    return v;
  }

 private:
  PyValue value() {
    skip_space();
    if (pos_ == s_.size()) fail("it ends early; expected None, a quoted axis name, an integer or a tuple");
    const char c = s_[pos_];
    if (c == '(') return tuple();
    if (c == '\'' || c == '"') return string();
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return integer();
    if (s_.substr(pos_, 4) == "None" && !ident_char_at(pos_ + 4)) {
      pos_ += 4;
      return {};
    }
    fail(fmt::format("unexpected \"{}\" at position {}; expected None, a quoted axis name, an integer or a tuple", word(),
                     pos_));
  }

  /** `(` [value (`,` value)* [`,`]] `)`; a parenthesised single value without a comma is that value. */
  PyValue tuple() {
    ++pos_;  // (
    PyValue t;
    t.kind = PyValue::Kind::tuple;
    bool comma = false;
    skip_space();
    while (true) {
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == ')') {
        ++pos_;
        break;
      }
      t.items.push_back(value());
      skip_space();
      if (pos_ == s_.size()) fail("a tuple is not closed; expected ',' or ')'");
      if (s_[pos_] == ',') {
        ++pos_;
        comma = true;
      } else if (s_[pos_] != ')') {
        fail(fmt::format("unexpected \"{}\" at position {}; expected ',' or ')'", word(), pos_));
      }
    }
    if (t.items.size() == 1 && !comma) return t.items[0];  // (x) is x, as in Python
    return t;
  }

  PyValue string() {
    const char quote = s_[pos_++];
    const std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != quote) ++pos_;
    if (pos_ == s_.size()) fail(fmt::format("the string starting at position {} is not closed", start - 1));
    PyValue v;
    v.kind = PyValue::Kind::str;
    v.text = std::string(s_.substr(start, pos_ - start));
    ++pos_;
    if (v.text.empty()) fail(fmt::format("an empty axis name at position {}", start - 1));
    return v;
  }

  PyValue integer() {
    const std::size_t start = pos_;
    if (s_[pos_] == '-') ++pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    if (ident_char_at(pos_)) {
      pos_ = start;
      fail(fmt::format("unexpected \"{}\" at position {}; expected an integer", word(), start));
    }
    PyValue v;
    v.kind = PyValue::Kind::integer;
    const std::string_view digits = s_.substr(start, pos_ - start);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v.integer);
    if (ec != std::errc() || end != digits.data() + digits.size()) {
      fail(fmt::format("\"{}\" at position {} is not a valid axis index", digits, start));
    }
    return v;
  }

  bool ident_char_at(std::size_t i) const {
    return i < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i])) || s_[i] == '_');
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  std::string_view rest() const { return s_.substr(pos_); }
  /** The token at the cursor: an identifier run, or one character. */
  std::string_view word() const {
    std::size_t e = pos_;
    while (ident_char_at(e)) ++e;
    return s_.substr(pos_, std::max<std::size_t>(e - pos_, 1));
  }
  static std::string_view trim(std::string_view v) {
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.remove_prefix(1);
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.remove_suffix(1);
    return v;
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw UserError("err_invalid_partition_spec", "", {}, fmt::format("spec \"{}\": {}", s_, why));
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

std::string axis_repr(const MeshAxis& a) {
  // As Python's repr: single quotes unless the name holds one. The parser has no escapes,
  // so a name never holds both kinds and the repr always parses back to the same name.
  if (const auto* name = std::get_if<std::string>(&a)) {
    return name->find('\'') == std::string::npos ? fmt::format("'{}'", *name) : fmt::format("\"{}\"", *name);
  }
  return std::to_string(std::get<int>(a));
}

}  // namespace

PartitionSpec PartitionSpec::parse(std::string_view text) {
  Parser parser(text);
  const PyValue top = parser.top();
  std::vector<Entry> entries;
  for (const PyValue& item : top.items) {
    Entry e;
    auto add = [&](const PyValue& v) {
      if (v.kind == PyValue::Kind::str) e.emplace_back(v.text);
      else if (v.kind == PyValue::Kind::integer) e.emplace_back(v.integer);
      else
        throw UserError("err_invalid_partition_spec", "", {},
                        fmt::format("spec \"{}\": a tuple inside a dimension's tuple may hold only axis names and "
                                    "indices, not {}",
                                    text, v.kind == PyValue::Kind::none ? "None" : "another tuple"));
    };
    if (item.kind == PyValue::Kind::tuple) {
      for (const PyValue& sub : item.items) add(sub);
    } else if (item.kind != PyValue::Kind::none) {
      add(item);
    }
    entries.push_back(std::move(e));
  }
  return PartitionSpec(std::move(entries));
}

std::string PartitionSpec::str() const {
  std::vector<std::string> parts;
  for (const Entry& e : entries_) {
    if (e.empty()) {
      parts.emplace_back("None");
    } else if (e.size() == 1) {
      parts.push_back(axis_repr(e[0]));
    } else {
      std::vector<std::string> axes;
      for (const MeshAxis& a : e) axes.push_back(axis_repr(a));
      parts.push_back(fmt::format("({})", fmt::join(axes, ", ")));
    }
  }
  if (parts.size() == 1) return fmt::format("({},)", parts[0]);
  return fmt::format("({})", fmt::join(parts, ", "));
}

std::vector<std::vector<int>> PartitionSpec::resolve(const Mesh& mesh, std::size_t rank) const {
  if (entries_.size() != rank) {
    throw UserError("err_partition_spec_rank_mismatch", "", {},
                    fmt::format("spec {} has {} entr{} for a tensor of rank {}; give one per dimension", str(),
                                entries_.size(), entries_.size() == 1 ? "y" : "ies", rank));
  }
  std::vector<std::vector<int>> out;
  std::vector<int> used_by(static_cast<std::size_t>(mesh.rank()), -1);
  for (const Entry& e : entries_) {
    std::vector<int> axes;
    for (const MeshAxis& a : e) {
      int index = -1;
      if (const auto* name = std::get_if<std::string>(&a)) {
        const std::optional<int> i = mesh.axis_index(*name);
        if (!i) {
          std::vector<std::string> known;
          for (const std::string& n : mesh.axis_names()) known.push_back(fmt::format("'{}'", n));
          throw UserError("err_unknown_mesh_axis", "", {},
                          known.empty() ? fmt::format("spec {} names axis '{}', but the mesh axes have no names; use "
                                                      "indices 0 to {}",
                                                      str(), *name, mesh.rank() - 1)
                                        : fmt::format("spec {} names axis '{}'; the mesh axes are {}", str(), *name,
                                                      fmt::join(known, ", ")));
        }
        index = *i;
      } else {
        index = std::get<int>(a);
        if (index < 0 || index >= mesh.rank()) {
          throw UserError("err_unknown_mesh_axis", "", {},
                          fmt::format("spec {} uses mesh axis index {}; the mesh has {} ax{} (0 to {})", str(), index,
                                      mesh.rank(), mesh.rank() == 1 ? "is" : "es", mesh.rank() - 1));
        }
      }
      if (used_by[static_cast<std::size_t>(index)] >= 0) {
        throw UserError("err_mesh_axis_used_twice", "", {},
                        fmt::format("spec {} uses mesh axis {} twice; each mesh axis may shard at most one dimension, "
                                    "once",
                                    str(), mesh.axis_label(index)));
      }
      used_by[static_cast<std::size_t>(index)] = static_cast<int>(out.size());
      axes.push_back(index);
    }
    out.push_back(std::move(axes));
  }
  return out;
}

}  // namespace nki
