/** \file nki::compile: trace, place on the world's cores, compile into the cache, run nothing. */
#include "nki/compile.h"

#include "core_programs.h"
#include "nki/simulator/capacity.h"
#include "nki/simulator/cost_model.h"
#include "nki/simulator/target.h"

namespace nki {

CompileReport compile(const BoundLaunch& launch, const std::vector<Shape>& shapes, const std::vector<DType>& dtypes,
                      const CompileOptions& options) {
  const Kernel& k = launch.kernel();
  const sim::TargetSpec& spec = sim::target_spec(options.target);
  const int cores = options.cores > 0 ? options.cores : spec.default_lnc;
  const std::vector<CoreSchedule> placed = place_instances(launch.grid(), cores, k.name(), options.unannotated_cores);
  const std::shared_ptr<const TracedKernel> traced = k.trace(shapes, dtypes, launch.grid());
  const CorePrograms p = programs_for_cores(k.name(), *traced, placed, std::string(spec.name), options.mode,
                                            options.layer_unroll_factor);
  CompileReport r{k.name(), traced->hash, options.mode, cores, p.distinct_compiled, p.distinct_reused, {}};
  std::vector<sim::CoreWork> work;
  for (std::size_t c = 0; c < placed.size(); ++c) {
    if (placed[c].instances.empty()) continue;
    r.busy.push_back({placed[c].nc, p.keys[c], p.compiled[c], static_cast<std::int64_t>(placed[c].instances.size())});
    work.push_back({placed[c].nc, placed[c].instances});
  }
  r.ir_text = traced->text;
  if (options.estimate_latency) {  // as nki::profile: the capacity check, then the cost model
    sim::check_capacity(*traced->ir, spec);
    r.simulated_latency_us = sim::estimate(*traced->ir, work, spec, false).latency_us;
  }
  return r;
}

}  // namespace nki
