/** \file Launch grid specs: sizes, NeuronCore factors, NKI spelling both ways. */
#include "nki/grid.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

#include "nki/error.h"

namespace nki {

namespace {

/** n * m, or err_grid_too_large naming the grid (spelled by `grid()`) when the product does not fit 64 bits. */
template <class Spelling>
std::int64_t grid_product(std::int64_t n, std::int64_t m, const Spelling& grid) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(n, m, &out)) {
    throw UserError("err_grid_too_large", "", {},
                    fmt::format("grid \"{}\" has more instances than fit in 64 bits", grid()));
  }
  return out;
}

std::string factors_str(const std::vector<GridFactor>& factors);

}  // namespace

std::int64_t GridAxis::size() const {
  std::int64_t n = 1;
  for (const GridFactor& f : factors) {
    n = grid_product(n, f.size, [&] { return factors_str(factors); });
  }
  return n;
}

std::vector<std::int64_t> GridSpec::logical_shape() const {
  std::vector<std::int64_t> out;
  for (const GridAxis& a : axes) out.push_back(a.size());
  return out;
}

std::int64_t GridSpec::instances() const {
  std::int64_t n = 1;
  for (const GridAxis& a : axes) n = grid_product(n, a.size(), [&] { return str(); });
  return n;
}

std::int64_t GridSpec::nc_cores() const {
  std::int64_t n = 1;
  for (const GridAxis& a : axes)
    for (const GridFactor& f : a.factors)
      if (f.nc) n = grid_product(n, f.size, [&] { return str(); });
  return n;
}

static std::string factor_str(const GridFactor& f) {
  return f.nc ? fmt::format("nc({})", f.size) : fmt::format("{}", f.size);
}

namespace {
/** One axis in NKI spelling: "4", "nc(2)" or "spmd_dim(2,nc(2))". */
std::string factors_str(const std::vector<GridFactor>& factors) {
  if (factors.size() == 1) return factor_str(factors[0]);
  std::vector<std::string> fs;
  for (const GridFactor& f : factors) fs.push_back(factor_str(f));
  return fmt::format("spmd_dim({})", fmt::join(fs, ","));
}
}  // namespace

std::string GridSpec::str() const {
  std::vector<std::string> parts;
  for (const GridAxis& a : axes) parts.push_back(factors_str(a.factors));
  return fmt::format("{}", fmt::join(parts, ","));
}

namespace {

/** Recursive-descent parser over the grid text; every failure quotes the text. */
class GridParser {
 public:
  explicit GridParser(std::string_view text) : text_(text) {}

  GridSpec parse() {
    GridSpec spec;
    skip_space();
    // Python's spellings of the same grid: kernel[4, 2] or a tuple, (4, 2) or (4,).
    char close = 0;
    if (accept('[')) close = ']';
    else if (accept('(')) close = ')';
    skip_space();
    if (pos_ == text_.size()) fail("an axis");
    spec.axes.push_back(axis());
    while (accept(',')) {
      skip_space();
      if (close != 0 && pos_ < text_.size() && text_[pos_] == close) break;  // a trailing comma: (4,)
      spec.axes.push_back(axis());
    }
    if (close != 0) expect(close);
    skip_space();
    if (pos_ != text_.size()) fail(close != 0 ? "the end after the closing bracket" : "',' or the end");
    spec.instances();  // a grid whose size overflows is refused here, as err_grid_too_large
    spec.nc_cores();
    return spec;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;

  [[noreturn]] void fail(const char* expected) const {
    throw UserError("err_invalid_grid", "", {},
                    fmt::format("cannot parse grid \"{}\" at position {}: expected {} (examples: "
                                "\"4,2\", \"spmd_dim(2,nc(2)),4\", \"nc(2)*2,2\")",
                                text_, pos_, expected));
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  /** `w`, alone or with NKI's module prefix as Python writes it: nl.nc(2), nki.language.spmd_dim(...). */
  bool accept_word(std::string_view w) {
    skip_space();
    for (std::string_view prefix : {"nki.language.", "nl."}) {
      if (text_.substr(pos_, prefix.size()) == prefix && text_.substr(pos_ + prefix.size(), w.size()) == w) {
        pos_ += prefix.size() + w.size();
        return true;
      }
    }
    if (text_.substr(pos_, w.size()) == w) {
      pos_ += w.size();
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) {
      const char s[] = {'\'', c, '\'', 0};
      fail(s);
    }
  }
  std::int64_t positive_int() {
    skip_space();
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), v);
    if (ec != std::errc() || v <= 0) fail("a positive integer");
    pos_ = static_cast<std::size_t>(end - text_.data());
    return v;
  }
  GridFactor factor() {
    if (accept_word("nc")) {
      expect('(');
      const std::int64_t n = positive_int();
      expect(')');
      return {n, true};
    }
    return {positive_int(), false};
  }
  GridAxis axis() {
    std::vector<GridFactor> fs;
    if (accept_word("spmd_dim")) {
      expect('(');
      fs.push_back(factor());
      while (accept(',')) fs.push_back(factor());
      expect(')');
      return GridAxis(std::move(fs));
    }
    fs.push_back(factor());
    while (accept('*')) fs.push_back(factor());
    return GridAxis(std::move(fs));
  }
};

}  // namespace

GridSpec parse_grid(std::string_view text) { return GridParser(text).parse(); }

namespace language {

GridAxis spmd_dim(std::initializer_list<grid_arg> factors) {
  std::vector<GridFactor> fs;
  for (const grid_arg& a : factors)
    for (const GridFactor& f : a.axis.factors) fs.push_back(f);
  return GridAxis(std::move(fs));
}

}  // namespace language
}  // namespace nki
