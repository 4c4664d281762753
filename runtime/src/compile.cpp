/** \file nki::compile: trace, place on the world's cores, compile into the cache, run nothing. */
#include "nki/compile.h"

#include "core_programs.h"
#include "nki/simulator/target.h"

namespace nki {

CompileReport compile(const BoundLaunch& launch, const std::vector<Shape>& shapes, const std::vector<DType>& dtypes,
                      const CompileOptions& options) {
  const Kernel& k = launch.kernel();
  const sim::TargetSpec& spec = sim::target_spec(options.target);
  const int cores = options.cores > 0 ? options.cores : spec.default_lnc;
  const std::vector<CoreSchedule> placed = place_instances(launch.grid(), cores, k.name());
  const std::shared_ptr<const TracedKernel> traced = k.trace(shapes, dtypes, launch.grid());
  const CorePrograms p = programs_for_cores(k.name(), *traced, placed, std::string(spec.name), options.mode);
  CompileReport r{k.name(), traced->hash, options.mode, cores, p.distinct_compiled, p.distinct_reused, {}};
  for (std::size_t c = 0; c < placed.size(); ++c)
    if (!placed[c].instances.empty()) r.busy.push_back({placed[c].nc, p.keys[c], p.compiled[c]});
  return r;
}

}  // namespace nki
