/** \file nki::compile: trace, place on the world's cores, compile into the cache, run nothing. */
#include "nki/compile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>

#include "core_programs.h"
#include "world_plan.h"
#include "nki/communicator.h"
#include "nki/placement.h"
#include "nki/simulator/capacity.h"
#include "nki/simulator/cost_model.h"
#include "nki/simulator/target.h"
#include "nki/traced_kernel.h"

namespace nki {

namespace {

/** Every rank's part of the report, joined in rank order (counts summed, cores listed). */
void join_world(Communicator& world, CompileReport& r) {
  // The world's simulated latency is its slowest rank's: each process estimated only its own.
  std::string mine = fmt::format("{} {} {:a}\n", r.compiled, r.reused, r.simulated_latency_us);
  for (const CoreArtifact& c : r.busy) mine += fmt::format("{} {} {} {}\n", c.nc, c.key, c.compiled ? 1 : 0, c.instances);
  r.compiled = r.reused = 0;
  r.busy.clear();
  for (const std::string& part : world.all_gather_text(mine)) {
    std::istringstream in(part);
    int compiled = 0, reused = 0;
    std::string latency;
    in >> compiled >> reused >> latency;
    r.compiled += compiled;
    r.reused += reused;
    r.simulated_latency_us = std::max(r.simulated_latency_us, std::strtod(latency.c_str(), nullptr));
    CoreArtifact c;
    for (int flag = 0; in >> c.nc >> c.key >> flag >> c.instances;) {
      c.compiled = flag != 0;
      r.busy.push_back(c);
    }
  }
}

/**
 * A kernel that spans ranks compiled for the mesh's ranks: as WorldLaunch plans it, each rank
 * running the grid on its own logical core; this process compiles its share of the ranks.
 */
CompileReport compile_world(const BoundLaunch& launch, const TracedKernel& traced, const CompileOptions& options,
                            const sim::TargetSpec& spec, Communicator& world) {
  const Kernel& k = launch.kernel();
  const Mesh& mesh = *options.mesh;
  const int W = mesh.size(), P = world.ranks();
  if (W % P != 0) {
    throw UserError("err_mesh_exceeds_cores", k.name(), {},
                    fmt::format("the mesh {} has {} devices, which do not split evenly over {} processes", mesh.str(), W, P));
  }
  const int n = W / P, first = world.rank() * n;
  const WorldPlan plan = plan_world(traced, mesh, first, n, options.mode);
  const std::vector<CoreSchedule> placed = place_instances(launch.grid(), 1, k.name(), 1);
  std::vector<CoreSchedule> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back({r, placed.front().instances});
  const CorePrograms p = programs_for_cores(k.name(), traced, ranks, std::string(spec.name), options.mode,
                                            options.layer_unroll_factor, first, plan.baked, plan.mesh_key);
  CompileReport r{k.name(), W, mesh.str(), traced.hash, options.mode, W * options.lnc, p.distinct_compiled,
                  p.distinct_reused, {}};
  std::vector<sim::CoreWork> work;
  const int ranks_per_chip = std::max(1, spec.cores_per_chip / options.lnc);
  for (int q = 0; q < n; ++q) {
    const auto i = static_cast<std::size_t>(q);
    r.busy.push_back({first + q, p.key(i), p.compiled[i], static_cast<std::int64_t>(ranks[i].instances.size())});
    work.push_back({q, ranks[i].instances.to_vectors(), first + q, (first + q) / ranks_per_chip,
                    collective_shapes(plan, *traced.ir, first + q, ranks_per_chip)});
  }
  r.ir_text = traced.text;
  if (options.estimate_latency) {
    sim::check_capacity(*traced.ir, spec);
    r.simulated_latency_us = sim::estimate(*traced.ir, work, spec, false).latency_us;
  }
  if (P > 1) join_world(world, r);
  return r;
}

}  // namespace

CompileReport compile(const BoundLaunch& launch, const std::vector<Shape>& shapes, const std::vector<DType>& dtypes,
                      const CompileOptions& options) {
  const Kernel& k = launch.kernel();
  const sim::TargetSpec& spec = sim::target_spec(options.target);
  Communicator& world = communicator();
  const int wanted = options.cores > 0 ? options.cores : spec.default_lnc;
  const int chip_cores = (wanted + world.ranks() - 1) / world.ranks();
  const int cores = chip_cores * world.ranks();
  std::vector<CoreSchedule> placed = place_instances(launch.grid(), cores, k.name(), options.unannotated_cores);
  if (options.mesh) {  // a grid that does not fit the cores is refused first, whatever the kernel
    const std::shared_ptr<const TracedKernel> traced =
        k.trace(shapes, dtypes, launch.grid(), spec.nc_version, options.mesh->size());
    if (spans_ranks(*traced->ir)) return compile_world(launch, *traced, options, spec, world);
  }
  // This rank's chip: world cores rank*chip_cores ... (ids stay global).
  placed = std::vector<CoreSchedule>(placed.begin() + world.rank() * chip_cores,
                                     placed.begin() + (world.rank() + 1) * chip_cores);
  const std::shared_ptr<const TracedKernel> traced = k.trace(shapes, dtypes, launch.grid(), spec.nc_version);
  const CorePrograms p = programs_for_cores(k.name(), *traced, placed, std::string(spec.name), options.mode,
                                            options.layer_unroll_factor);
  CompileReport r{k.name(), 0, "", traced->hash, options.mode, cores, p.distinct_compiled, p.distinct_reused, {}};
  std::vector<sim::CoreWork> work;
  for (std::size_t c = 0; c < placed.size(); ++c) {
    if (placed[c].instances.empty()) continue;
    r.busy.push_back({placed[c].nc, p.key(c), p.compiled[c], static_cast<std::int64_t>(placed[c].instances.size())});
    // This process's core, on the chip it belongs to: the cores of each chip share that chip's HBM.
    const int local = placed[c].nc - world.rank() * chip_cores;
    work.push_back({local, placed[c].instances.to_vectors(), 0, local / std::max(1, spec.cores_per_chip)});
  }
  r.ir_text = traced->text;
  if (options.estimate_latency) {  // as nki::profile: the capacity check, then the cost model
    sim::check_capacity(*traced->ir, spec);
    r.simulated_latency_us = sim::estimate(*traced->ir, work, spec, false).latency_us;
  }
  if (world.ranks() > 1) join_world(world, r);
  return r;
}

}  // namespace nki
