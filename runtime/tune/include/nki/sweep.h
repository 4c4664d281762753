/**
 * \file Tile sweeps: every configuration of a tunable kernel checked against the hardware,
 * estimated by the cost model and timed on the host, sorted by a metric with the best marked;
 * the best can become the autotune record (nki/autotune.h). `nki bench` is this plus its flags
 * and its table, CSV, JSON and plot.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nki/autotune.h"
#include "nki/profile.h"
#include "nki/sweep_axis.h"
#include "nki/tensor.h"
#include "nki/tunable_kernel.h"

namespace nki {

/** What a sweep sorts its rows by and chooses the best by. */
enum class SweepMetric {
  simulated,  ///< the cost model's device latency
  host,       ///< the median wall time of a launch here (needs iters >= 1)
};

/**
 * The rule for a sweep's timed host launches: a count >= 0, >= 1 when `metric` is host. Throws
 * nki::UserError err_invalid_iters as "{named_as}{iters}: expected a count >= N"; `named_as` is
 * how the caller's user wrote it ("iters " for SweepOptions, "--iters " for the command,
 * "iters=" for Python).
 */
void check_iters(int iters, SweepMetric metric, std::string_view named_as = "iters ");

/** "simulated" or "host": how autotune records and `nki bench --metric` name it. */
std::string_view sweep_metric_name(SweepMetric metric);

/** One configuration's figures in a sweep. */
struct SweepRow {
  TuningConfig config;
  std::optional<std::string> forbidden;  ///< why the hardware cannot run it; no figures then
  double simulated_us = 0;               ///< the cost model's device latency
  bool host_measured = false;
  double host_us = 0;    ///< median wall time of a launch here
  double host_gbps = 0;  ///< bytes of the arguments and outputs / host_us, decimal GB/s
  /// The cost model's Tensor engine FLOPs of one launch (2 x K x M x N per matmul); 0 for a
  /// kernel without matmuls, which then has no FLOP figures.
  std::int64_t flops = 0;
  double simulated_tflops = 0;    ///< flops / simulated_us, in TFLOP/s
  double hfu = 0;                 ///< the profile's hardware FLOP utilization, 0..1 (nki::profile)
  double tensor_utilization = 0;  ///< Tensor engine busy time / (simulated_us x cores that ran), 0..1
  double host_gflops = 0;         ///< flops / host_us, in GFLOP/s (when host_measured)
  bool best = false;

  /** The row's figure in `metric`: simulated_us or host_us. */
  double figure(SweepMetric metric) const;
};

/** How a sweep measures, and what it tells while it runs. */
struct SweepOptions {
  SweepMetric metric = SweepMetric::simulated;
  /// Timed host launches per configuration (the median is kept), after one untimed launch that
  /// compiles and checks the output; 0: the cost model only.
  int iters = 3;
  /// Store the best configuration as the autotune record of these arguments and target, for
  /// launches that ask for it (autotune::tuned_launch, `nki run --autotune`).
  bool record = false;
  /// What error messages call the sweep (`nki bench` names its flag: `--sweep "P=32,64"`).
  std::string described_as = "the sweep";
  std::function<void(std::size_t index, const TuningConfig& config)> on_start;  ///< before configuration `index` is measured
  std::function<void(std::size_t index, const SweepRow& row)> on_done;        ///< after it, with its figures
};

/** More configurations than this is a mistake in the axes, not a sweep anyone waits for. */
inline constexpr std::size_t kMaxSweepConfigs = 4096;

/**
 * Every combination of the axes' values, the kernel's first parameter outermost; a parameter
 * without an axis keeps its default. Throws nki::UserError (err_invalid_sweep, naming the
 * sweep as `described_as`) for a name that is not a parameter of `k`, a value the parameter
 * cannot take, or more than kMaxSweepConfigs configurations.
 */
std::vector<TuningConfig> sweep_configs(const TunableKernel& k, const std::vector<SweepAxis>& axes,
                                        const std::string& described_as = "the sweep");

/**
 * Sweeps `configs` (of `k`'s parameters; sweep_configs makes them) for arguments of these
 * shapes and dtypes on `target`. Each configuration is checked first (config_rejection): a
 * forbidden one becomes a row with the reason and no figures; when every one is forbidden,
 * throws nki::UserError (err_no_legal_configuration) before measuring anything. Then each
 * legal one is estimated by the cost model and, with options.iters > 0, timed on the host on
 * generated values (multiples of 1/8 in [-64, 64), different per argument) on a device of
 * `target` with 2 cores. Every configuration's output is compared with the first one's
 * (within k.result_tolerance): a difference is an nki::InternalError. Returns the rows sorted
 * by options.metric, forbidden ones last in the order given, the first one marked best.
 */
std::vector<SweepRow> sweep(const TunableKernel& k, const std::vector<TuningConfig>& configs,
                            const std::vector<TensorSpec>& args, const std::string& target,
                            const SweepOptions& options = {});

/** The same for these tensors: their shapes and dtypes, their data for the host runs, their device's target. */
std::vector<SweepRow> sweep(const TunableKernel& k, const std::vector<TuningConfig>& configs,
                            const std::vector<Tensor>& args, const SweepOptions& options = {});

/**
 * Stores the row marked best as the autotune record of `k` for these arguments and target,
 * with its figure in `metric` (what SweepOptions::record does at the end of a sweep; a caller
 * that writes files of its own first calls it afterwards). Returns the record it replaced
 * (autotune::store). Throws nki::UserError (err_no_legal_configuration) when no row is marked best.
 */
std::optional<autotune::Record> record_best(const TunableKernel& k, const std::vector<TensorSpec>& args,
                                           const std::string& target, SweepMetric metric,
                                           const std::vector<SweepRow>& rows);

}  // namespace nki
