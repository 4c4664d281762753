/** \file nki::compile: trace, place on the world's cores, compile into the cache, run nothing. */
#include "nki/compile.h"

#include <fmt/format.h>

#include <sstream>

#include "core_programs.h"
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
  std::string mine = fmt::format("{} {}\n", r.compiled, r.reused);
  for (const CoreArtifact& c : r.busy) mine += fmt::format("{} {} {} {}\n", c.nc, c.key, c.compiled ? 1 : 0, c.instances);
  r.compiled = r.reused = 0;
  r.busy.clear();
  for (const std::string& part : world.all_gather_text(mine)) {
    std::istringstream in(part);
    int compiled = 0, reused = 0;
    in >> compiled >> reused;
    r.compiled += compiled;
    r.reused += reused;
    CoreArtifact c;
    for (int flag = 0; in >> c.nc >> c.key >> flag >> c.instances;) {
      c.compiled = flag != 0;
      r.busy.push_back(c);
    }
  }
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
  // This rank's chip: world cores rank*chip_cores ... (ids stay global).
  placed = std::vector<CoreSchedule>(placed.begin() + world.rank() * chip_cores,
                                     placed.begin() + (world.rank() + 1) * chip_cores);
  const std::shared_ptr<const TracedKernel> traced = k.trace(shapes, dtypes, launch.grid(), spec.nc_version);
  const CorePrograms p = programs_for_cores(k.name(), *traced, placed, std::string(spec.name), options.mode,
                                            options.layer_unroll_factor);
  CompileReport r{k.name(), traced->hash, options.mode, cores, p.distinct_compiled, p.distinct_reused, {}};
  std::vector<sim::CoreWork> work;
  for (std::size_t c = 0; c < placed.size(); ++c) {
    if (placed[c].instances.empty()) continue;
    r.busy.push_back({placed[c].nc, p.keys[c], p.compiled[c], static_cast<std::int64_t>(placed[c].instances.size())});
    work.push_back({placed[c].nc - world.rank() * chip_cores, placed[c].instances});  // this chip's core
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
