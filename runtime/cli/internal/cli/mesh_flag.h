/** \file The mesh flags of the command line: `--mesh x=2,y=4` and `--device-ids 7,6,...`. */
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nki/mesh.h"

namespace nki::cli {

/** `s` cut at every `sep`. */
std::vector<std::string_view> split(std::string_view s, char sep);

/**
 * The mesh `--mesh x=2,y=4` names (axes in order, name=size), its device ids 0, 1, ... or
 * `--device-ids`; throws nki::UserError err_invalid_mesh naming the entry.
 */
Mesh make_mesh(const std::string& mesh_flag, const std::optional<std::string>& ids_flag = std::nullopt);

}  // namespace nki::cli
