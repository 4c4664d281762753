/** \file One configuration's figures in a tile sweep (`nki bench`). */
#pragma once

#include <optional>
#include <string>

#include "nki/tunable_kernel.h"

namespace nki::cli {

struct SweepRow {
  TuningConfig config;
  std::optional<std::string> forbidden;  ///< why the hardware cannot run it; no figures then
  double simulated_us = 0;               ///< the cost model's device latency
  bool host_measured = false;
  double host_us = 0;    ///< median wall time of a launch here
  double host_gbps = 0;  ///< bytes of the arguments and outputs / host_us, decimal GB/s
  bool best = false;
};

}  // namespace nki::cli
