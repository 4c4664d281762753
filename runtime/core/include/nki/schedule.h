/** \file Which grid instances a NeuronCore runs, and in what order. */
#pragma once

#include <cstdint>
#include <vector>

namespace nki {

/** The instances (logical program ids) one NeuronCore runs, in the order it runs them. */
struct CoreSchedule {
  int nc;
  std::vector<std::vector<std::int64_t>> instances;
};

}  // namespace nki
