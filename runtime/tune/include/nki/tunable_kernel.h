/** \file Tunable kernels: a kernel family parametrized by tile sizes, with a legality check per configuration. */
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nki/kernel.h"
#include "nki/profile.h"
#include "nki/simulator/target.h"

namespace nki {

/** A tile-size parameter: its name, the values it may take, and the value a plain launch uses. */
struct TunableParam {
  std::string name;  ///< as written in a sweep: "P", "F", "tiles_m"
  std::string description;
  std::vector<std::int64_t> values;  ///< every value the kernel can be built with, ascending
  std::int64_t default_value = 0;
};

/** One value per parameter, in the kernel's parameter order. */
struct TuningConfig {
  std::vector<std::pair<std::string, std::int64_t>> values;

  /** The value of parameter `name`; throws nki::InternalError when the configuration has none. */
  std::int64_t at(const std::string& name) const;
  /** "P=128 F=512". */
  std::string str() const;
  bool operator==(const TuningConfig&) const = default;
};

/**
 * A kernel family: `make` builds the kernel of a configuration, `grid` its launch grid for the
 * argument shapes (throwing nki::UserError when the shapes do not tile), and `forbidden` says
 * why the hardware cannot run a configuration (partitions over 128, tiles over the SBUF of a
 * partition...) or nullopt when it can.
 */
struct TunableKernel {
  std::string name;
  std::string description;
  std::vector<TunableParam> params;
  std::function<Kernel(const TuningConfig&)> make;
  std::function<GridSpec(const TuningConfig&, const std::vector<Shape>&)> grid;
  std::function<std::optional<std::string>(const TuningConfig&, const std::vector<TensorSpec>&, const sim::TargetSpec&)>
      forbidden;
  /// How far two configurations' outputs may differ, relative to the largest magnitude of the
  /// output: 0 (bit-identical) unless a parameter reorders a sum (a matmul's K blocking rounds
  /// its partial sums differently).
  double result_tolerance = 0;

  /** Every parameter at its default value. */
  TuningConfig defaults() const;
  /** The parameter named `name`, or nullptr. */
  const TunableParam* param(const std::string& name) const;
  /** The launch of `config`'s kernel on its grid for these argument shapes (make, then grid). */
  BoundLaunch launch(const TuningConfig& config, const std::vector<Shape>& shapes) const;
};

/**
 * The parameter `name` of `k`; throws nki::UserError (`error`, in `k`'s name) saying that
 * `described_as` names something that is not a parameter, and listing the parameters.
 */
const TunableParam& known_param(const TunableKernel& k, const std::string& name, const std::string& described_as,
                                const std::string& error);

/** Throws nki::UserError (`error`) naming `described_as` and listing `p`'s values when `value` is not one of them. */
void check_param_value(const TunableKernel& k, const TunableParam& p, std::int64_t value,
                       const std::string& described_as, const std::string& error);

/**
 * The configuration giving each parameter of `k` its value in `given` (name and value pairs in
 * any order, e.g. `--config "P=64,F=2048"` parsed). Throws nki::UserError (err_invalid_config,
 * naming `described_as`) for a name that is not a parameter, a value the parameter cannot take,
 * a parameter given twice, or one not given.
 */
TuningConfig checked_config(const TunableKernel& k, const std::vector<std::pair<std::string, std::int64_t>>& given,
                            const std::string& described_as);

/**
 * Why `config` cannot run these arguments on `target`, or nullopt when it can: the kernel's
 * own check first, then its grid for the shapes, the trace's validation (partition and
 * per-partition limits) and the simulator's SBUF/PSUM capacity check, so a limit the
 * kernel's check misses is still found before anything runs.
 */
std::optional<std::string> config_rejection(const TunableKernel& k, const TuningConfig& config,
                                            const std::vector<TensorSpec>& args, const std::string& target);

}  // namespace nki
