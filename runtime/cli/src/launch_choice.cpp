/** \file The registered kernel, the autotuned or the given configuration, and the grid. */
#include "cli/launch_choice.h"

#include <fmt/format.h>

#include "nki/autotune.h"
#include "cli/sweep_spec.h"

namespace nki::cli {

const TunableKernel& require_tunable(const KernelRegistry& registry, const std::string& name, const std::string& why_not) {
  if (const TunableKernel* tunable = registry.find_tunable(name)) return *tunable;
  throw UserError("err_not_tunable", name, {},
                  fmt::format("{}; tunable kernels: {}", why_not, fmt::join(registry.tunable_names(), ", ")));
}

const TunableKernel& find_tunable_kernel(const KernelRegistry& registry, const std::string& name) {
  if (registry.find(name) == nullptr && registry.find_tunable(name) == nullptr) {
    throw UserError("err_unknown_kernel", "", {},
                    fmt::format("unknown kernel \"{}\"; tunable kernels: {}", name, fmt::join(registry.tunable_names(), ", ")));
  }
  return require_tunable(registry, name, "has no tile parameters to sweep");
}

TuningRequest tuning_request(const KernelRegistry& registry, const RegisteredKernel& k, bool autotune,
                             const std::optional<std::string>& config) {
  TuningRequest request;
  if (autotune && config) {
    throw UserError("err_conflicting_flags", k.name, {},
                    fmt::format("give --autotune or --config \"{}\", not both", *config));
  }
  if (autotune) request.tunable = &require_tunable(registry, k.name, "--autotune: has no tile parameters to tune");
  if (config) {
    request.tunable = &require_tunable(registry, k.name, fmt::format("--config \"{}\": has no tile parameters", *config));
    request.described_as = fmt::format("--config \"{}\"", *config);
    request.config = checked_config(*request.tunable, parse_config(*config), request.described_as);
  }
  return request;
}

LaunchChoice choose_tuned_launch(const std::string& command, const RegisteredKernel& k, const TuningRequest& request,
                           const std::vector<TensorSpec>& args, const std::string& target,
                           const std::optional<GridSpec>& grid, std::ostream& err) {
  std::vector<Shape> shapes;
  for (const TensorSpec& a : args) shapes.push_back(a.shape);
  std::optional<LaunchChoice> tuned;
  if (request.config) {
    // What the sweep lists as forbidden, with its reason, rather than a launch's later failure.
    if (std::optional<std::string> why = config_rejection(*request.tunable, *request.config, args, target)) {
      throw UserError("err_config_forbidden", k.name, {},
                      fmt::format("{}: forbidden on {}: {}", request.described_as, target, *why));
    }
    tuned = LaunchChoice{request.tunable->launch(*request.config, shapes), request.config, false};
  } else if (request.tunable) {
    autotune::TunedLaunch t = autotune::tuned_launch(*request.tunable, args, target);
    if (!t.autotuned) {
      err << fmt::format("{}: {}: no autotuned configuration ({}); using {}\n", command, k.name, t.miss, t.config.str());
    }
    tuned = LaunchChoice{t.launch, t.config, t.autotuned};
  }
  const GridSpec expected = tuned ? tuned->launch.grid() : k.default_grid(shapes);  // validates the shapes
  if (grid) check_grid_fits(k, *grid, expected, shapes);
  const Kernel& kernel = tuned ? tuned->launch.kernel() : k.kernel;
  return {kernel.launch(grid ? *grid : expected), tuned ? tuned->config : std::nullopt, tuned && tuned->autotuned};
}

}  // namespace nki::cli
