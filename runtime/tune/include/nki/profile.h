/** \file nki::profile (the simulator's cost model on a launch) and nki::benchmark (host latency percentiles). */
#pragma once

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "nki/kernel.h"
#include "nki/mesh.h"
#include "nki/simulator/cost_model.h"

namespace nki {

using sim::ProfileReport;

/** A kernel argument as the cost model sees it: shape and dtype, no data. */
struct TensorSpec {
  Shape shape;
  DType dtype;
};

/** The shapes of `args`, in order (what Kernel::trace and the grids take). */
inline std::vector<Shape> shapes_of(const std::vector<TensorSpec>& args) {
  std::vector<Shape> out;
  for (const TensorSpec& a : args) out.push_back(a.shape);
  return out;
}
/** The dtypes of `args`, in order. */
inline std::vector<DType> dtypes_of(const std::vector<TensorSpec>& args) {
  std::vector<DType> out;
  for (const TensorSpec& a : args) out.push_back(a.dtype);
  return out;
}

/**
 * Estimates how `launch` would run on `target` (trn1, inf2, trn2, trn3): the kernel is traced
 * for these shapes, its on-chip capacity checked, its instances placed on the chip's cores
 * and scheduled by the cost model. No data is needed or touched. `keep_events` keeps the
 * per-instruction timeline (for chrome_trace_json). `unannotated_cores` spreads a grid
 * without nc factors over that many cores (place_instances; the compiler's
 * enable_internal_spmd_opt).
 */
ProfileReport profile(const BoundLaunch& launch, const std::vector<TensorSpec>& args, const std::string& target,
                      bool keep_events = true, int unannotated_cores = 1);

/**
 * Estimates a world launch (nki::WorldLaunch) of `launch` over `mesh` on `target`: every rank
 * runs the grid on its own logical core of `lnc` NeuronCores with `args` (its shards' shapes),
 * ranks filling chips in order, collectives priced by the cost model. One CoreProfile per rank
 * (rank set); each chip's cores share its HBM.
 */
ProfileReport profile_world(const BoundLaunch& launch, const Mesh& mesh, const std::vector<TensorSpec>& args,
                            const std::string& target, bool keep_events = true, int lnc = 1);

/** nki::profile(kernel[grid], a, b): the same, for the shapes and dtypes of tensors, on their device's target. */
template <class... T>
ProfileReport profile(const BoundLaunch& launch, const Tensor& first, const T&... rest) {
  std::vector<TensorSpec> specs{{first.shape(), first.dtype()}, {rest.shape(), rest.dtype()}...};
  return profile(launch, specs, first.device().spec().name);
}

/** Host latency of launches, in microseconds: nearest-rank percentiles of `iters` timed runs. */
struct BenchmarkResult {
  int warmup = 0, iters = 0;
  double p0 = 0, p1 = 0, p10 = 0, p25 = 0, p50 = 0, p90 = 0, p99 = 0, p100 = 0;
  std::vector<double> samples_us;  ///< in run order
};

/** Runs `launch` on `args` `warmup` times untimed, then `iters` times timed (wall clock per launch). */
BenchmarkResult benchmark_launch(const BoundLaunch& launch, const std::vector<Tensor>& args, int warmup, int iters);

/** nki::benchmark(kernel[grid], a, b, warmup, iters). */
template <class... A>
BenchmarkResult benchmark(const BoundLaunch& launch, const A&... a) {
  constexpr std::size_t n = sizeof...(A);
  static_assert(n >= 2, "nki::benchmark(kernel[grid], args..., warmup, iters)");
  const auto all = std::forward_as_tuple(a...);
  std::vector<Tensor> args;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (args.push_back(std::get<I>(all)), ...);
  }(std::make_index_sequence<n - 2>{});
  return benchmark_launch(launch, args, static_cast<int>(std::get<n - 2>(all)), static_cast<int>(std::get<n - 1>(all)));
}

}  // namespace nki
