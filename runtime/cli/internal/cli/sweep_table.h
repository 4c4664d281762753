/** \file A sweep's rows as `nki bench` prints and writes them: the table on stdout, --csv and --json. */
#pragma once

#include <string>
#include <vector>

#include "nki/sweep.h"

namespace nki::cli {

/**
 * The table: "TITLE: N configurations, F forbidden; sorted by simulated latency", the column
 * names (a column per parameter, then simulated_us, host_us, host_GBps and, when some
 * configuration does Tensor engine FLOPs, sim_TFLOPs, hfu, tensor_util, host_GFLOPs), then a
 * line per row, the best one led by "best" and a forbidden one ending in its reason.
 */
std::string sweep_table(const TunableKernel& k, const std::string& title, SweepMetric metric,
                        const std::vector<SweepRow>& rows);

/**
 * --csv: a column per parameter, then status, simulated_us, host_us, host_GBps, (with FLOPs:
 * simulated_TFLOPs, hfu, tensor_util, host_GFLOPs,) best and reason.
 */
std::string sweep_csv(const TunableKernel& k, const std::vector<SweepRow>& rows);

/**
 * --json: the kernel, its arguments, target, metric, iters, the best configuration and every
 * row (with FLOPs: each legal row's flops, simulated_TFLOPs, hfu, tensor_util, host_GFLOPs).
 */
std::string sweep_json(const std::string& kernel, const std::vector<TensorSpec>& args, const std::string& target,
                       SweepMetric metric, int iters, const std::vector<SweepRow>& rows);

}  // namespace nki::cli
