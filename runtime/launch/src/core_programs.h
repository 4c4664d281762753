/** \file The compiled program each core of a launch runs (SPMD: one shared; MPMD: one each). */
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nki/traced_kernel.h"
#include "nki/kernel.h"
#include "compile/program_cache.h"

namespace nki {

struct CorePrograms {
  std::vector<std::shared_ptr<const Program>> programs;  ///< per core (null where a core is idle)
  std::vector<int> key_of;                               ///< per core: its key's index in distinct_keys (-1 where idle)
  std::vector<bool> compiled;                            ///< per core: this call compiled its artifact
  int distinct_compiled = 0, distinct_reused = 0;
  std::vector<std::string> distinct_keys;                ///< in first-use order

  /** Busy core c's cache key (an index, not a copy per core: SPMD cores all share one key). */
  const std::string& key(std::size_t c) const { return distinct_keys.at(static_cast<std::size_t>(key_of.at(c))); }
};

/**
 * Compiles (or finds) what every busy core needs and runs the single-artifact guard rail
 * over every rank's cores. `layer_unroll_factor` unrolls the kernel's outermost loops (1:
 * rolled). `first_core` is the world index of the core numbered 0 in `cores` (under MPI, rank
 * r's chip of n cores starts at r*n; ranks are then global core indices). Under MPI this is
 * collective: every rank calls it for the same kernels in the same order.
 *
 * World launches: `baked[c]`, when given, is what core c compiles in MPMD mode instead of
 * `traced` (its rank and groups baked in: ir::bake_rank); the guard rail still counts it as
 * `traced`'s. `mesh` (keyed when not empty) is the mesh and groups the kernel's axis-named
 * collectives were resolved with.
 */
CorePrograms programs_for_cores(const std::string& kernel, const TracedKernel& traced,
                                const std::vector<CoreSchedule>& cores, const std::string& target, CompileMode mode,
                                int layer_unroll_factor = 1, int first_core = 0,
                                const std::vector<std::shared_ptr<const TracedKernel>>& baked = {},
                                const std::string& mesh = "");

}  // namespace nki
