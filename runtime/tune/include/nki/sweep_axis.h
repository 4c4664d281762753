/** \file One swept parameter of a tile sweep and its values (nki/sweep.h sweeps them). */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nki {

/** One swept parameter and its values, in the order given. */
struct SweepAxis {
  std::string name;
  std::vector<std::int64_t> values;
  bool operator==(const SweepAxis&) const = default;
};

}  // namespace nki
