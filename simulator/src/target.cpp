/** \file Target specs from the published hardware numbers (see the REFERENCE table). */
#include "nki/simulator/target.h"

#include <fmt/format.h>

#include <array>

#include "nki/error.h"

namespace nki::sim {

namespace {
constexpr std::int64_t KiB = 1024, GiB = 1024 * 1024 * KiB;
const std::array<TargetSpec, 3> specs = {{
    {"trn1", 2, 1, 32 * GiB, 128 * 192 * KiB, 128 * 16 * KiB},
    {"inf2", 2, 1, 32 * GiB, 128 * 192 * KiB, 128 * 16 * KiB},
    {"trn2", 8, 2, 96 * GiB, 128 * 192 * KiB, 128 * 16 * KiB},
}};
}  // namespace

const TargetSpec& target_spec(std::string_view name) {
  for (const TargetSpec& s : specs)
    if (s.name == name) return s;
  throw UserError("err_unknown_target", "", {},
                  fmt::format("unknown target \"{}\"; expected one of {}", name, fmt::join(target_names(), ", ")));
}

std::vector<std::string> target_names() {
  std::vector<std::string> out;
  for (const TargetSpec& s : specs) out.push_back(s.name);
  return out;
}

}  // namespace nki::sim
