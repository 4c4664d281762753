/** \file `--shape 16x16` parsing. */
#include "cli/shape_flag.h"

#include <fmt/format.h>

#include <charconv>
#include <string_view>

#include "nki/error.h"

namespace nki::cli {

Shape parse_shape_flag(const std::string& text) {
  Shape shape;
  std::string_view rest(text);
  while (true) {
    const std::size_t at = rest.find('x');
    const std::string_view v = rest.substr(0, at);
    std::int64_t d = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
    if (v.empty() || ec != std::errc() || end != v.data() + v.size() || d < 1) {
      throw UserError("err_invalid_shape", "", {},
                      fmt::format("--shape \"{}\": \"{}\" is not a positive size; expected sizes joined by x, e.g. "
                                  "16x16",
                                  text, v));
    }
    shape.push_back(d);
    if (at == std::string_view::npos) return shape;
    rest.remove_prefix(at + 1);
  }
}

}  // namespace nki::cli
