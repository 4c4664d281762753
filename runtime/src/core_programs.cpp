/** \file Per-core compiled programs: the one place launches and `nki compile` ask the cache. */
#include "core_programs.h"

#include <algorithm>

#include "nki/spmd_guard_rails.h"

namespace nki {

CorePrograms programs_for_cores(const std::string& kernel, const TracedKernel& traced,
                                const std::vector<CoreSchedule>& cores, const std::string& target, CompileMode mode,
                                int layer_unroll_factor) {
  CorePrograms out;
  out.programs.resize(cores.size());
  out.keys.resize(cores.size());
  out.compiled.resize(cores.size(), false);
  std::vector<ArtifactUse> uses;
  for (std::size_t c = 0; c < cores.size(); ++c) {
    const CoreSchedule& core = cores[c];
    if (core.instances.empty()) continue;
    CompileRequest req{traced.ir, traced.text, target, {}, -1, layer_unroll_factor};
    if (mode == CompileMode::mpmd) {
      req.pid_base = core.instances.front();  // this core's first program ids, baked in
      req.rank = core.nc;
    }
    const CompileOutcome r = compiled_program_for(req);
    out.programs[c] = r.program;
    out.keys[c] = r.key;
    out.compiled[c] = r.compiled;
    uses.push_back({traced.hash, r.key, core.nc});
    if (std::find(out.distinct_keys.begin(), out.distinct_keys.end(), r.key) == out.distinct_keys.end()) {
      out.distinct_keys.push_back(r.key);
      (r.compiled ? out.distinct_compiled : out.distinct_reused) += 1;
    }
  }
  check_single_artifact(kernel, uses);
  return out;
}

}  // namespace nki
