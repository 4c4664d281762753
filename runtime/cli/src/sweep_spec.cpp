/** \file The --sweep and --config parsers. */
#include "cli/sweep_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>

#include "nki/error.h"

namespace nki::cli {

namespace {

constexpr std::string_view kExpected = "expected NAME=VALUES[;NAME=VALUES...], e.g. \"P=32,64,128;F=64..8192\"";
constexpr std::string_view kConfigExpected = "expected NAME=VALUE[,NAME=VALUE...], e.g. \"P=64,F=2048\"";

/** The flag being parsed, as its errors name it. */
struct Flag {
  std::string_view name;   ///< "--sweep"
  std::string_view error;  ///< "err_invalid_sweep"
  std::string_view text;   ///< the value given
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

[[noreturn]] void fail(const Flag& flag, const std::string& why) {
  throw UserError(std::string(flag.error), "", {}, fmt::format("{} \"{}\": {}", flag.name, flag.text, why));
}

bool is_name(std::string_view s) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (s.empty() || !alpha(s.front())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alpha(c) || (c >= '0' && c <= '9'); });
}

std::int64_t positive(const Flag& spec, std::string_view name, std::string_view v) {
  std::int64_t x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || x < 1) {
    fail(spec, fmt::format("value \"{}\" of {} is not a positive integer", v, name));
  }
  return x;
}

/** LO..HI: LO, 2 LO, ..., HI. */
void append_range(const Flag& spec, std::string_view name, std::string_view item, std::size_t dots,
                  std::vector<std::int64_t>& out) {
  const std::int64_t lo = positive(spec, name, trim(item.substr(0, dots)));
  const std::int64_t hi = positive(spec, name, trim(item.substr(dots + 2)));
  if (hi < lo) fail(spec, fmt::format("range {} of {} is empty: {} > {}", trim(item), name, lo, hi));
  std::int64_t x = lo;
  out.push_back(x);
  while (x < hi) {
    if (x > std::numeric_limits<std::int64_t>::max() / 2) break;
    x *= 2;
    out.push_back(x);
  }
  if (x != hi) {
    fail(spec, fmt::format("range {} of {}: {} is not {} times a power of 2 (LO..HI doubles from LO to HI)",
                           trim(item), name, hi, lo));
  }
}

/** The parts of `s` between `sep`s, trimmed; "a;;b" has an empty middle part. */
std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (std::size_t at = s.find(sep); at != std::string_view::npos; at = s.find(sep)) {
    parts.push_back(trim(s.substr(0, at)));
    s.remove_prefix(at + 1);
  }
  parts.push_back(trim(s));
  return parts;
}

/** NAME=... with NAME checked: the name and what follows '='. */
std::pair<std::string_view, std::string_view> name_and_values(const Flag& flag, std::string_view part,
                                                              std::string_view expected) {
  const std::size_t eq = part.find('=');
  if (eq == std::string_view::npos) fail(flag, fmt::format("\"{}\" has no '='; {}", part, expected));
  const std::string_view name = trim(part.substr(0, eq));
  if (!is_name(name)) {
    fail(flag, fmt::format("\"{}\" is not a parameter name (letters, digits and _, not starting with a digit)", name));
  }
  return {name, part.substr(eq + 1)};
}

}  // namespace

std::vector<SweepAxis> parse_sweep(std::string_view spec) {
  const Flag text{"--sweep", "err_invalid_sweep", spec};
  if (trim(spec).empty()) fail(text, fmt::format("empty; {}", kExpected));
  std::vector<SweepAxis> axes;
  for (const std::string_view part : split(spec, ';')) {
    if (part.empty()) fail(text, fmt::format("an empty parameter between ';'; {}", kExpected));
    const auto [name, given] = name_and_values(text, part, kExpected);
    for (const SweepAxis& a : axes)
      if (a.name == name) fail(text, fmt::format("parameter {} is given twice", name));
    SweepAxis axis{std::string(name), {}};
    if (trim(given).empty()) fail(text, fmt::format("parameter {} has no values", name));
    for (const std::string_view item : split(given, ',')) {
      const std::size_t before = axis.values.size();
      if (const std::size_t dots = item.find(".."); dots != std::string_view::npos) {
        append_range(text, name, item, dots, axis.values);
      } else {
        axis.values.push_back(positive(text, name, item));
      }
      for (std::size_t i = before; i < axis.values.size(); ++i) {
        if (std::find(axis.values.begin(), axis.values.begin() + static_cast<std::ptrdiff_t>(i), axis.values[i]) !=
            axis.values.begin() + static_cast<std::ptrdiff_t>(i)) {
          fail(text, fmt::format("value {} of {} is given twice", axis.values[i], name));
        }
      }
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

std::vector<std::pair<std::string, std::int64_t>> parse_config(std::string_view config) {
  const Flag text{"--config", "err_invalid_config", config};
  if (trim(config).empty()) fail(text, fmt::format("empty; {}", kConfigExpected));
  std::vector<std::pair<std::string, std::int64_t>> values;
  for (const std::string_view part : split(config, ',')) {
    if (part.empty()) fail(text, fmt::format("an empty parameter between ','; {}", kConfigExpected));
    const auto [name, value] = name_and_values(text, part, kConfigExpected);
    if (value.find(';') != std::string_view::npos) {
      fail(text, fmt::format("parameters are joined by ',' here (';' joins them in --sweep); {}", kConfigExpected));
    }
    for (const auto& [n, v] : values)
      if (n == name) fail(text, fmt::format("parameter {} is given twice", name));
    values.emplace_back(std::string(name), positive(text, name, trim(value)));
  }
  return values;
}

std::string sweep_str(const std::vector<SweepAxis>& axes) {
  std::vector<std::string> parts;
  for (const SweepAxis& a : axes) parts.push_back(fmt::format("{}={}", a.name, fmt::join(a.values, ",")));
  return fmt::format("{}", fmt::join(parts, ";"));
}

}  // namespace nki::cli
