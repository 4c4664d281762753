/** \file nki::sweep: check, estimate and time each configuration of a tunable kernel; sort; record the best. */
#include "nki/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "nki/autotune.h"
#include "nki/error.h"
#include "nki/simulator/device.h"

namespace nki {

namespace {

/** Deterministic test values for arguments given by shape: small multiples of 1/8, different per argument. */
std::vector<float> generated_values(std::int64_t n, std::size_t arg) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::uint64_t h = (i + 1) * 2654435761ull + arg * 40503ull;
    v[i] = static_cast<float>(static_cast<std::int64_t>(h % 1024) - 512) / 8.0f;
  }
  return v;
}

/**
 * Empty when `got` matches `want`: bit for bit with tolerance 0, else every element within
 * tolerance x the largest magnitude of `want`; otherwise the first element that does not.
 */
std::string result_difference(const Tensor& got, const Tensor& want, double tolerance) {
  if (got.shape() != want.shape() || got.dtype() != want.dtype()) {
    return fmt::format("output {} {} against {} {}", shape_str(got.shape()), dtype_name(got.dtype()),
                       shape_str(want.shape()), dtype_name(want.dtype()));
  }
  if (tolerance == 0) {
    if (std::memcmp(got.data(), want.data(), static_cast<std::size_t>(got.bytes())) == 0) return {};
    for (std::int64_t i = 0; i < got.bytes(); ++i)
      if (got.data()[i] != want.data()[i]) return fmt::format("byte {} of the output differs", i);
  }
  const std::vector<double> g = got.to_values(), w = want.to_values();
  double scale = 0;
  for (double x : w) scale = std::max(scale, std::abs(x));
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (!(std::abs(g[i] - w[i]) <= tolerance * scale)) {
      return fmt::format("element {} is {}, against {} (allowed difference {})", i, g[i], w[i], tolerance * scale);
    }
  }
  return {};
}

/** Every configuration computes the same function: each output is compared with the first one's. */
class SameResult {
 public:
  explicit SameResult(const TunableKernel& k) : k_(k) {}
  void check(const TuningConfig& config, const Tensor& output) {
    if (!reference_) {
      reference_ = output;
      reference_config_ = config.str();
    } else if (const std::string diff = result_difference(output, *reference_, k_.result_tolerance); !diff.empty()) {
      throw InternalError(fmt::format("{} with {} computes a different result from {}: {}", k_.name, config.str(),
                                      reference_config_, diff));
    }
  }

 private:
  const TunableKernel& k_;
  std::optional<Tensor> reference_;
  std::string reference_config_;
};

void check_options(const SweepOptions& o) { check_iters(o.iters, o.metric); }

/**
 * A row per configuration with the hardware's reason against it, if any. What the hardware
 * forbids is known from traces alone: a sweep with nothing to run fails before any is measured.
 */
std::vector<SweepRow> checked_rows(const TunableKernel& k, const std::vector<TuningConfig>& configs,
                                   const std::vector<TensorSpec>& args, const std::string& target,
                                   const std::string& described_as) {
  if (configs.empty()) throw UserError("err_invalid_sweep", k.name, {}, described_as + " has no configuration");
  std::vector<SweepRow> rows;
  for (const TuningConfig& c : configs) rows.push_back({c, config_rejection(k, c, args, target)});
  if (std::all_of(rows.begin(), rows.end(), [](const SweepRow& r) { return r.forbidden.has_value(); })) {
    throw UserError("err_no_legal_configuration", k.name, {},
                    fmt::format("every configuration of {} is forbidden on {} (first: {}: {})", described_as, target,
                                rows.front().config.str(), *rows.front().forbidden));
  }
  return rows;
}

/** The cost model's latency of a legal row's configuration and, with iters > 0, its host figures on `tensors`. */
void measure(const TunableKernel& k, SweepRow& row, const std::vector<TensorSpec>& args, const std::string& target,
             const std::vector<Tensor>& tensors, int iters, SameResult& same) {
  std::vector<Shape> shapes;
  for (const TensorSpec& a : args) shapes.push_back(a.shape);
  const BoundLaunch launch = k.launch(row.config, shapes);
  const ProfileReport estimate = profile(launch, args, target, false);
  row.simulated_us = estimate.latency_us;
  row.flops = estimate.flops;
  row.hfu = estimate.hfu;
  double tensor_busy_us = 0;
  for (const sim::CoreProfile& c : estimate.cores)
    tensor_busy_us += c.engines[static_cast<std::size_t>(sim::Engine::tensor)].busy_us;
  row.tensor_utilization =
      tensor_busy_us / (estimate.latency_us * static_cast<double>(std::max<std::size_t>(1, estimate.cores.size())));
  row.simulated_tflops = static_cast<double>(row.flops) / (row.simulated_us * 1e6);
  if (iters == 0) return;
  const LaunchResult first = launch.run(tensors, CallSite::unknown());  // compiles; checked before timing
  same.check(row.config, first.outputs.at(0));
  std::int64_t bytes = 0;
  for (const Tensor& t : tensors) bytes += t.bytes();
  for (const Tensor& o : first.outputs) bytes += o.bytes();
  row.host_measured = true;
  row.host_us = benchmark_launch(launch, tensors, 0, iters).p50;
  row.host_gbps = static_cast<double>(bytes) / (row.host_us * 1e3);
  row.host_gflops = static_cast<double>(row.flops) / (row.host_us * 1e3);
}

/** Sorted by the metric, forbidden configurations last in sweep order; the first is the best. */
void sort_and_mark_best(std::vector<SweepRow>& rows, SweepMetric metric) {
  std::stable_sort(rows.begin(), rows.end(), [&](const SweepRow& a, const SweepRow& b) {
    if (a.forbidden || b.forbidden) return !a.forbidden && b.forbidden;
    return a.figure(metric) < b.figure(metric);
  });
  rows.front().best = true;
}

/** The sweep of both entry points: `tensors` are the host runs' arguments (empty when iters is 0). */
std::vector<SweepRow> run_sweep(const TunableKernel& k, const std::vector<TuningConfig>& configs,
                                const std::vector<TensorSpec>& args, const std::string& target,
                                const std::vector<Tensor>& tensors, const SweepOptions& options) {
  std::vector<SweepRow> rows = checked_rows(k, configs, args, target, options.described_as);
  SameResult same(k);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (options.on_start) options.on_start(i, rows[i].config);
    if (!rows[i].forbidden) measure(k, rows[i], args, target, tensors, options.iters, same);
    if (options.on_done) options.on_done(i, rows[i]);
  }
  sort_and_mark_best(rows, options.metric);
  if (options.record) (void)record_best(k, args, target, options.metric, rows);
  return rows;
}

}  // namespace

void check_iters(int iters, SweepMetric metric, std::string_view named_as) {
  const int least = metric == SweepMetric::host ? 1 : 0;
  if (iters < least) {
    throw UserError("err_invalid_iters", "", {}, fmt::format("{}{}: expected a count >= {}", named_as, iters, least));
  }
}

std::string_view sweep_metric_name(SweepMetric metric) { return metric == SweepMetric::host ? "host" : "simulated"; }

double SweepRow::figure(SweepMetric metric) const { return metric == SweepMetric::host ? host_us : simulated_us; }

std::vector<TuningConfig> sweep_configs(const TunableKernel& k, const std::vector<SweepAxis>& axes,
                                        const std::string& described_as) {
  for (const SweepAxis& a : axes) {
    const TunableParam& p = known_param(k, a.name, described_as, "err_invalid_sweep");
    for (std::int64_t v : a.values) check_param_value(k, p, v, described_as, "err_invalid_sweep");
  }
  std::vector<TuningConfig> configs{TuningConfig{}};
  for (const TunableParam& p : k.params) {
    std::vector<std::int64_t> values{p.default_value};
    for (const SweepAxis& a : axes)
      if (a.name == p.name) values = a.values;
    if (configs.size() * values.size() > kMaxSweepConfigs) {
      throw UserError("err_invalid_sweep", k.name, {},
                      fmt::format("{}: more than {} configurations", described_as, kMaxSweepConfigs));
    }
    std::vector<TuningConfig> next;
    for (const TuningConfig& c : configs) {
      for (std::int64_t v : values) {
        TuningConfig d = c;
        d.values.emplace_back(p.name, v);
        next.push_back(std::move(d));
      }
    }
    configs = std::move(next);
  }
  return configs;
}

std::vector<SweepRow> sweep(const TunableKernel& k, const std::vector<TuningConfig>& configs,
                            const std::vector<TensorSpec>& args, const std::string& target,
                            const SweepOptions& options) {
  check_options(options);
  // The host runs' tensors, on a device of the target with the two cores of an LNC=2 logical core.
  const sim::Device device(target, 2);
  std::vector<Tensor> tensors;
  if (options.iters > 0) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      tensors.push_back(
          Tensor::from_floats(args[i].shape, args[i].dtype, generated_values(shape_elements(args[i].shape), i), device));
    }
  }
  return run_sweep(k, configs, args, target, tensors, options);
}

std::vector<SweepRow> sweep(const TunableKernel& k, const std::vector<TuningConfig>& configs,
                            const std::vector<Tensor>& args, const SweepOptions& options) {
  check_options(options);
  if (args.empty()) throw UserError("err_argument_count", k.name, {}, "a sweep needs the kernel's arguments, none given");
  std::vector<TensorSpec> specs;
  for (const Tensor& t : args) specs.push_back({t.shape(), t.dtype()});
  static const std::vector<Tensor> untimed;  // iters 0: no host runs
  return run_sweep(k, configs, specs, args.front().device().spec().name, options.iters > 0 ? args : untimed, options);
}

std::optional<autotune::Record> record_best(const TunableKernel& k, const std::vector<TensorSpec>& args,
                                           const std::string& target, SweepMetric metric,
                                           const std::vector<SweepRow>& rows) {
  const auto best = std::find_if(rows.begin(), rows.end(), [](const SweepRow& r) { return r.best; });
  if (best == rows.end()) throw UserError("err_no_legal_configuration", k.name, {}, "no row of the sweep is marked best");
  return autotune::store(k, args, target, {best->config, std::string(sweep_metric_name(metric)), best->figure(metric)});
}

}  // namespace nki
