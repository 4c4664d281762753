/** \file Tunable kernels: configurations, and whether the hardware can run one. */
#include "nki/tunable_kernel.h"

#include <fmt/format.h>

#include <algorithm>

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

BoundLaunch TunableKernel::launch(const TuningConfig& config, const std::vector<Shape>& shapes) const {
  return make(config).launch(grid(config, shapes));
}

const TunableParam& known_param(const TunableKernel& k, const std::string& name, const std::string& described_as,
                                const std::string& error) {
  if (const TunableParam* p = k.param(name)) return *p;
  std::vector<std::string> names;
  for (const TunableParam& q : k.params) names.push_back(q.name);
  throw UserError(error, k.name, {},
                  fmt::format("{}: {} is not a parameter of {}; its parameters: {}", described_as, name, k.name,
                              fmt::join(names, ", ")));
}

void check_param_value(const TunableKernel& k, const TunableParam& p, std::int64_t value,
                       const std::string& described_as, const std::string& error) {
  if (std::find(p.values.begin(), p.values.end(), value) != p.values.end()) return;
  throw UserError(error, k.name, {},
                  fmt::format("{}: {}={} is not a value of {}'s {}; its values: {}", described_as, p.name, value,
                              k.name, p.name, fmt::join(p.values, ", ")));
}

TuningConfig checked_config(const TunableKernel& k, const std::vector<std::pair<std::string, std::int64_t>>& given,
                            const std::string& described_as) {
  constexpr const char* kError = "err_invalid_config";
  for (std::size_t i = 0; i < given.size(); ++i) {
    const auto& [name, value] = given[i];
    check_param_value(k, known_param(k, name, described_as, kError), value, described_as, kError);
    for (std::size_t j = 0; j < i; ++j) {
      if (given[j].first == name) {
        throw UserError(kError, k.name, {}, fmt::format("{}: parameter {} is given twice", described_as, name));
      }
    }
  }
  TuningConfig config;
  std::vector<std::string> missing, names;
  for (const TunableParam& p : k.params) {
    names.push_back(p.name);
    const auto v = std::find_if(given.begin(), given.end(), [&](const auto& g) { return g.first == p.name; });
    if (v == given.end()) missing.push_back(p.name);
    else config.values.emplace_back(p.name, v->second);
  }
  if (!missing.empty()) {
    throw UserError(kError, k.name, {},
                    fmt::format("{}: no value for {}; expected a value for each of {}", described_as,
                                fmt::join(missing, ", "), fmt::join(names, ", ")));
  }
  return config;
}

std::optional<std::string> config_rejection(const TunableKernel& k, const TuningConfig& config,
                                            const std::vector<TensorSpec>& args, const std::string& target) {
  const sim::TargetSpec& spec = sim::target_spec(target);
  if (k.forbidden) {
    if (std::optional<std::string> why = k.forbidden(config, args, spec)) return why;
  }
  const std::vector<Shape> shapes = shapes_of(args);
  const std::vector<DType> dtypes = dtypes_of(args);
  // The backstop: what a launch of this configuration would refuse, with the launch's own message.
  try {
    const BoundLaunch launch = k.launch(config, shapes);
    sim::check_capacity(*launch.kernel().trace(shapes, dtypes, launch.grid(), spec.nc_version)->ir, spec);
  } catch (const UserError& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace nki
