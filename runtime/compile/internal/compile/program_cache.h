/** \file Compiled programs by request: the in-process memo over the persistent cache (compile_cache.cpp). */
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/program.h"
#include "nki/ir/kernel_ir.h"

namespace nki {

/** What to compile: a traced kernel for one target, SPMD or (with a rank, and a program-id base) MPMD. */
struct CompileRequest {
  std::shared_ptr<const ir::KernelIR> ir;
  std::string text;                    ///< canonical IR text
  std::string target;                  ///< the device's target name
  std::vector<std::int64_t> pid_base;  ///< MPMD: the core's program ids baked in; empty: SPMD
  int rank = -1;                       ///< MPMD (>= 0): the core's world rank, baked in for rank_id (keyed); never part of an SPMD key
  int layer_unroll_factor = 1;         ///< unroll factor of the kernel's outermost loops (keyed)
  /// The mesh and replica groups a kernel's axis-named collectives use (keyed when not empty;
  /// `nki compile --mesh`, or the world launch's mesh).
  std::string mesh;
};

struct CompileOutcome {
  std::shared_ptr<const Program> program;
  bool compiled = false;  ///< this call compiled the artifact (else: memo or disk hit)
  std::string key;        ///< the cache key (hash of cache_key_text)
};

/**
 * The compiled program for a request: from the in-process memo, else the cache directory,
 * else compiled once across threads and processes (compile_cache.cpp).
 */
CompileOutcome compiled_program_for(const CompileRequest& r);

/** Everything the cache key hashes (the entry's key.txt). */
std::string cache_key_text(const CompileRequest& r);

/** Drops the in-process memo (after the directory was cleared). */
void forget_compiled_programs();

/**
 * How many times the in-process memo was dropped: a program remembered elsewhere under an
 * older generation is to be asked for again (LaunchMemo).
 */
std::uint64_t compiled_programs_generation();

}  // namespace nki
