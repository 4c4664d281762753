/**
 * \file Which launch a command makes of a kernel given by name: the registered kernel, or a
 * configuration of its tunable family (`--autotune`: the one `nki bench` recorded; `--config`:
 * the one given), on its grid or a `--grid` that fits.
 */
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "nki/profile.h"
#include "nki/registry.h"

namespace nki::cli {

/**
 * The tunable family of the kernel `name`; throws nki::UserError (err_not_tunable, in its
 * name) saying `why_not` ("--autotune: has no tile parameters to tune") and listing the
 * tunable kernels when it has none.
 */
const TunableKernel& require_tunable(const KernelRegistry& registry, const std::string& name, const std::string& why_not);

/**
 * The tunable kernel `name` a sweep runs: nki::UserError err_unknown_kernel listing the tunable
 * kernels when no kernel has that name, err_not_tunable when it has no tile parameters.
 */
const TunableKernel& find_tunable_kernel(const KernelRegistry& registry, const std::string& name);

/** What a command asks of a tunable kernel. */
struct TuningRequest {
  const TunableKernel* tunable = nullptr;  ///< nullptr: the registered kernel, as is
  std::optional<TuningConfig> config;      ///< --config (checked); without it, a tunable kernel is autotuned
  std::string described_as;                ///< how messages name the config: --config "P=64,F=2048"
};

/**
 * --autotune or --config (parsed, and checked against the kernel's tunable family): what
 * choose_tuned_launch is asked. Throws nki::UserError err_conflicting_flags for both,
 * err_not_tunable for a kernel without parameters, err_invalid_config for a bad config.
 */
TuningRequest tuning_request(const KernelRegistry& registry, const RegisteredKernel& k, bool autotune,
                             const std::optional<std::string>& config);

/** The launch chosen, and the configuration it runs when a tunable kernel's was chosen. */
struct LaunchChoice {
  BoundLaunch launch;
  std::optional<TuningConfig> config;
  bool autotuned = false;  ///< config is the recorded one
};

/**
 * The launch for these arguments on `target`: with request.config that configuration (when
 * the hardware can run it: else nki::UserError err_config_forbidden with config_rejection's
 * reason), with request.tunable alone the one autotune::tuned_launch finds recorded (or the
 * defaults, saying "COMMAND: KERNEL: no autotuned configuration (WHY); using CONFIG" on `err`),
 * else the registered kernel. Its grid is the kernel's for the shapes; `grid` replaces it when
 * it fits (check_grid_fits). Throws nki::UserError when the shapes do not tile.
 */
LaunchChoice choose_tuned_launch(const std::string& command, const RegisteredKernel& k, const TuningRequest& request,
                           const std::vector<TensorSpec>& args, const std::string& target,
                           const std::optional<GridSpec>& grid, std::ostream& err);

}  // namespace nki::cli
