/** \file Per-core compiled programs: the one place launches and `nki compile` ask the cache. */
#include "core_programs.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "nki/communicator.h"
#include "nki/compile_cache.h"
#include "launch_memo.h"
#include "nki/spmd_guard_rails.h"

namespace nki {

namespace {

/** Every rank's artifact uses, in rank order: what the single-artifact assertion checks under MPI. */
std::vector<ArtifactUse> world_uses(Communicator& world, const std::vector<ArtifactUse>& mine) {
  if (world.ranks() == 1) return mine;
  std::string text;
  for (const ArtifactUse& u : mine) text += fmt::format("{} {} {}\n", u.ir_hash, u.key, u.rank);
  std::vector<ArtifactUse> all;
  for (const std::string& part : world.all_gather_text(text)) {
    std::istringstream in(part);
    for (ArtifactUse u; in >> u.ir_hash >> u.key >> u.rank;) all.push_back(u);
  }
  return all;
}

}  // namespace

CorePrograms programs_for_cores(const std::string& kernel, const TracedKernel& traced,
                                const std::vector<CoreSchedule>& cores, const std::string& target, CompileMode mode,
                                int layer_unroll_factor, int first_core,
                                const std::vector<std::shared_ptr<const TracedKernel>>& baked, const std::string& mesh) {
  CorePrograms out;
  out.programs.resize(cores.size());
  out.key_of.resize(cores.size(), -1);
  out.compiled.resize(cores.size(), false);
  std::vector<ArtifactUse> uses;
  Communicator& world = communicator();
  // An SPMD launch in one process whose program this trace found before: every busy core runs it.
  // (Under MPI this call is collective, so every rank asks the cache in turn each time.)
  const bool memoized = traced.memo && mode == CompileMode::spmd && baked.empty() && mesh.empty() && world.ranks() == 1;
  if (memoized) {
    if (const std::optional<CompileOutcome> known = traced.memo->program(target, layer_unroll_factor)) {
      for (std::size_t c = 0; c < cores.size(); ++c) {
        if (cores[c].instances.empty()) continue;
        out.programs[c] = known->program;
        out.key_of[c] = 0;
      }
      out.distinct_keys.push_back(known->key);
      out.distinct_reused = 1;
      return out;  // one key for every core: the single-artifact check has nothing to find
    }
  }
  const std::uint64_t generation = compiled_programs_generation();  // before asking: a clear meanwhile makes it stale
  // Under MPI every rank computes the same keys; one rank per cache directory and host compiles first.
  world.compile_in_turns(cache::directory(), [&] {
    for (std::size_t c = 0; c < cores.size(); ++c) {
      const CoreSchedule& core = cores[c];
      if (core.instances.empty()) continue;
      const int global_core = first_core + core.nc;
      const TracedKernel& mine = baked.empty() ? traced : *baked[c];
      CompileRequest req{mine.ir, mine.text, target, {}, -1, layer_unroll_factor, mesh};
      if (mode == CompileMode::mpmd) {
        req.pid_base = core.instances.front();  // this core's first program ids, baked in
        req.rank = global_core;
      }
      const CompileOutcome r = compiled_program_for(req);
      out.programs[c] = r.program;
      out.compiled[c] = r.compiled;
      uses.push_back({traced.hash, r.key, global_core});
      const auto known = std::find(out.distinct_keys.begin(), out.distinct_keys.end(), r.key);
      out.key_of[c] = static_cast<int>(known - out.distinct_keys.begin());
      if (known == out.distinct_keys.end()) {
        out.distinct_keys.push_back(r.key);
        (r.compiled ? out.distinct_compiled : out.distinct_reused) += 1;
      }
    }
  });
  check_single_artifact(kernel, world_uses(world, uses));
  for (std::size_t c = 0; memoized && c < cores.size(); ++c) {
    if (!out.programs[c]) continue;
    traced.memo->remember_program(target, layer_unroll_factor, generation, {out.programs[c], false, out.key(c)});
    break;
  }
  return out;
}

}  // namespace nki
