/** \file The two SPMD guard rails: rank constants baked into a trace, and one artifact per kernel for all cores. */
#pragma once

#include <string>
#include <vector>

#include "nki/ir/kernel_ir.h"

namespace nki {

/** NKI_SPMD_STRICT=1: guard rails are errors; unset or 0: warnings on stderr. */
bool spmd_strict();

/** Which artifact a core (rank) used for which kernel IR. */
struct ArtifactUse {
  std::string ir_hash;
  std::string key;
  int rank = 0;
};

/**
 * Single-artifact assertion: each distinct kernel IR must resolve to one cache entry that
 * every core uses. A splinter (one IR, several keys) is a warning naming the keys and the
 * ranks that staged each, or err_spmd_artifact_splinter under NKI_SPMD_STRICT=1.
 */
void check_single_artifact(const std::string& kernel, const std::vector<ArtifactUse>& uses);

/**
 * Rank-constant check on a traced kernel: in a kernel that reads program ids, a constant
 * tile-aligned offset in an index (on a dimension with no program-id or loop term, of a
 * tensor several tiles long) looks like a rank or program id captured as a C++ integer at
 * trace time. Warning, or err_spmd_rank_constant under NKI_SPMD_STRICT=1.
 */
void check_rank_constants(const ir::KernelIR& k);

}  // namespace nki
