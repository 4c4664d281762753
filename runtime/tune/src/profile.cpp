/** \file nki::profile and nki::benchmark. */
#include "nki/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "nki/ir/kernel_ir.h"
#include "nki/placement.h"
#include "nki/schedule.h"
#include "nki/simulator/capacity.h"
#include "nki/traced_kernel.h"
#include "nki/world_launch.h"

namespace nki {

ProfileReport profile(const BoundLaunch& launch, const std::vector<TensorSpec>& args, const std::string& target,
                      bool keep_events, int unannotated_cores) {
  const Kernel& k = launch.kernel();
  const sim::TargetSpec& spec = sim::target_spec(target);
  if (args.size() != k.arity()) {
    throw UserError("err_argument_count", k.name(), {},
                    fmt::format("the kernel takes {} tensors, {} were given", k.arity(), args.size()));
  }
  const std::vector<Shape> shapes = shapes_of(args);
  const std::vector<DType> dtypes = dtypes_of(args);
  const std::vector<CoreSchedule> placed =
      place_instances(launch.grid(), spec.cores_per_chip, k.name(), unannotated_cores);
  const std::shared_ptr<const TracedKernel> traced = k.trace(shapes, dtypes, launch.grid(), spec.nc_version);
  sim::check_capacity(*traced->ir, spec);
  std::vector<sim::CoreWork> work;
  for (const CoreSchedule& c : placed) work.push_back({c.nc, c.instances.to_vectors()});
  ProfileReport r = sim::estimate(*traced->ir, work, spec, keep_events);
  r.grid = launch.grid().str();
  return r;
}

ProfileReport profile_world(const BoundLaunch& launch, const Mesh& mesh, const std::vector<TensorSpec>& args,
                            const std::string& target, bool keep_events, int lnc) {
  const sim::TargetSpec& spec = sim::target_spec(target);
  const std::vector<Shape> shapes = shapes_of(args);
  const std::vector<DType> dtypes = dtypes_of(args);
  const WorldWork w = WorldLaunch(launch, mesh).plan_cost(shapes, dtypes, spec, lnc);
  ProfileReport r = sim::estimate(*w.traced->ir, w.ranks, spec, keep_events);
  r.grid = launch.grid().str();
  r.ranks = mesh.size();
  return r;
}

BenchmarkResult benchmark_launch(const BoundLaunch& launch, const std::vector<Tensor>& args, int warmup, int iters) {
  if (warmup < 0 || iters < 1) {
    throw UserError("err_invalid_benchmark", launch.kernel().name(), {},
                    fmt::format("warmup {} and iters {}: warmup must be >= 0 and iters >= 1", warmup, iters));
  }
  for (int i = 0; i < warmup; ++i) (void)launch.run(args, CallSite::unknown());
  BenchmarkResult r;
  r.warmup = warmup;
  r.iters = iters;
  for (int i = 0; i < iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    (void)launch.run(args, CallSite::unknown());
    const auto t1 = std::chrono::steady_clock::now();
    r.samples_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::vector<double> sorted = r.samples_us;
  std::sort(sorted.begin(), sorted.end());
  auto pct = [&](double p) {  // nearest rank; p0 is the minimum
    const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
    return sorted[rank == 0 ? 0 : rank - 1];
  };
  r.p0 = pct(0);
  r.p1 = pct(1);
  r.p10 = pct(10);
  r.p25 = pct(25);
  r.p50 = pct(50);
  r.p90 = pct(90);
  r.p99 = pct(99);
  r.p100 = pct(100);
  return r;
}

}  // namespace nki
