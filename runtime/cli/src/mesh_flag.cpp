/** \file Parsing `--mesh x=2,y=4` and `--device-ids` into a nki::Mesh. */
#include "cli/mesh_flag.h"

#include <fmt/format.h>

#include <charconv>
#include <climits>

#include "nki/error.h"

namespace nki::cli {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const std::size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

namespace {

std::optional<std::int64_t> parse_int(std::string_view s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

/** `--mesh x=2,y=4` -> names and sizes. */
std::pair<std::vector<std::string>, Shape> parse_mesh_flag(const std::string& text) {
  std::vector<std::string> names;
  Shape sizes;
  for (std::string_view entry : split(text, ',')) {
    const std::size_t eq = entry.find('=');
    const std::optional<std::int64_t> size = eq == std::string_view::npos ? std::nullopt : parse_int(entry.substr(eq + 1));
    if (!size || eq == 0) {
      throw UserError("err_invalid_mesh", "", {},
                      fmt::format("--mesh \"{}\": entry \"{}\" is not name=size; expected e.g. x=2,y=4", text, entry));
    }
    names.emplace_back(entry.substr(0, eq));
    sizes.push_back(*size);
  }
  return {names, sizes};
}

}  // namespace

Mesh make_mesh(const std::string& mesh_flag, const std::optional<std::string>& ids_flag) {
  auto [names, sizes] = parse_mesh_flag(mesh_flag);
  if (!ids_flag) return Mesh::iota(sizes, names);
  std::vector<int> ids;
  for (std::string_view v : split(*ids_flag, ',')) {
    const std::optional<std::int64_t> id = parse_int(v);
    if (!id || *id < INT32_MIN || *id > INT32_MAX) {
      throw UserError("err_invalid_mesh", "", {},
                      fmt::format("--device-ids \"{}\": \"{}\" is not an integer; expected e.g. 7,6,5,4,3,2,1,0",
                                  *ids_flag, v));
    }
    ids.push_back(static_cast<int>(*id));
  }
  return Mesh(ids, sizes, names);
}

}  // namespace nki::cli
