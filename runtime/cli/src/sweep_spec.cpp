/** \file The --sweep parser. */
#include "sweep_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>

#include "nki/error.h"

namespace nki::cli {

namespace {

constexpr std::string_view kExpected = "expected NAME=VALUES[;NAME=VALUES...], e.g. \"P=32,64,128;F=64..8192\"";

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

[[noreturn]] void fail(std::string_view spec, const std::string& why) {
  throw UserError("err_invalid_sweep", "", {}, fmt::format("--sweep \"{}\": {}", spec, why));
}

bool is_name(std::string_view s) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (s.empty() || !alpha(s.front())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alpha(c) || (c >= '0' && c <= '9'); });
}

std::int64_t positive(std::string_view spec, std::string_view name, std::string_view v) {
  std::int64_t x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || x < 1) {
    fail(spec, fmt::format("value \"{}\" of {} is not a positive integer", v, name));
  }
  return x;
}

/** LO..HI: LO, 2 LO, ..., HI. */
void append_range(std::string_view spec, std::string_view name, std::string_view item, std::size_t dots,
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

}  // namespace

std::vector<SweepAxis> parse_sweep(std::string_view text) {
  if (trim(text).empty()) fail(text, fmt::format("empty; {}", kExpected));
  std::vector<SweepAxis> axes;
  std::string_view rest = text;
  while (true) {
    const std::size_t semi = rest.find(';');
    const std::string_view part = trim(rest.substr(0, semi));
    const std::size_t eq = part.find('=');
    if (part.empty()) fail(text, fmt::format("an empty parameter between ';'; {}", kExpected));
    if (eq == std::string_view::npos) fail(text, fmt::format("\"{}\" has no '='; {}", part, kExpected));
    const std::string_view name = trim(part.substr(0, eq));
    if (!is_name(name)) {
      fail(text, fmt::format("\"{}\" is not a parameter name (letters, digits and _, not starting with a digit)", name));
    }
    for (const SweepAxis& a : axes)
      if (a.name == name) fail(text, fmt::format("parameter {} is given twice", name));
    SweepAxis axis{std::string(name), {}};
    std::string_view values = part.substr(eq + 1);
    if (trim(values).empty()) fail(text, fmt::format("parameter {} has no values", name));
    while (true) {
      const std::size_t comma = values.find(',');
      const std::string_view item = trim(values.substr(0, comma));
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
      if (comma == std::string_view::npos) break;
      values.remove_prefix(comma + 1);
    }
    axes.push_back(std::move(axis));
    if (semi == std::string_view::npos) break;
    rest.remove_prefix(semi + 1);
  }
  return axes;
}

std::string sweep_str(const std::vector<SweepAxis>& axes) {
  std::vector<std::string> parts;
  for (const SweepAxis& a : axes) parts.push_back(fmt::format("{}={}", a.name, fmt::join(a.values, ",")));
  return fmt::format("{}", fmt::join(parts, ";"));
}

}  // namespace nki::cli
