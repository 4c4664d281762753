/** \file Tunable kernels: configurations, and whether the hardware can run one. */
#include "nki/tunable_kernel.h"

#include <fmt/format.h>

#include "nki/ir/kernel_ir.h"
#include "nki/simulator/capacity.h"
#include "nki/traced_kernel.h"

namespace nki {

std::int64_t TuningConfig::at(const std::string& name) const {
  for (const auto& [n, v] : values)
    if (n == name) return v;
  throw InternalError(fmt::format("tuning configuration \"{}\" has no parameter {}", str(), name));
}

std::string TuningConfig::str() const {
  std::string s;
  for (const auto& [n, v] : values) s += fmt::format("{}{}={}", s.empty() ? "" : " ", n, v);
  return s;
}

TuningConfig TunableKernel::defaults() const {
  TuningConfig c;
  for (const TunableParam& p : params) c.values.emplace_back(p.name, p.default_value);
  return c;
}

const TunableParam* TunableKernel::param(const std::string& n) const {
  for (const TunableParam& p : params)
    if (p.name == n) return &p;
  return nullptr;
}

std::optional<std::string> config_rejection(const TunableKernel& k, const TuningConfig& config,
                                            const std::vector<TensorSpec>& args, const std::string& target) {
  const sim::TargetSpec& spec = sim::target_spec(target);
  if (k.forbidden) {
    if (std::optional<std::string> why = k.forbidden(config, args, spec)) return why;
  }
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const TensorSpec& a : args) {
    shapes.push_back(a.shape);
    dtypes.push_back(a.dtype);
  }
  // The backstop: what a launch of this configuration would refuse, with the launch's own message.
  try {
    const GridSpec grid = k.grid(config, shapes);
    const Kernel kernel = k.make(config);
    sim::check_capacity(*kernel.trace(shapes, dtypes, grid, spec.nc_version)->ir, spec);
  } catch (const UserError& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace nki
