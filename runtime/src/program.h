/** \file The executable form of a traced kernel, shared by both executors. */
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "nki/ir/kernel_ir.h"

namespace nki {

/** One tensor of the kernel (indexed by IR tensor id) as a launch sees it. */
struct TensorBinding {
  std::byte* data;
  Shape shape;
  std::vector<std::int64_t> strides;  ///< in elements
  DType dtype;
};

/** Runs instances on one NeuronCore. Not shared between cores. */
class CoreRunner {
 public:
  virtual ~CoreRunner() = default;
  /**
   * Runs `count` instances of one core: `pid`, then pid with its last axis + 1, ... (a run
   * of consecutive ids; count is 1 for a grid of rank 0). Each instance behaves as if run alone.
   */
  virtual void run_batch(std::span<const std::int64_t> pid, std::int64_t count) = 0;
};

/** A kernel ready to run on any core and any instance (SPMD: ids are runtime values). */
class Program {
 public:
  virtual ~Program() = default;
  virtual std::unique_ptr<CoreRunner> bind(const std::vector<TensorBinding>& tensors) const = 0;
  /** Before any core runs: checked mode poisons the outputs here. */
  virtual void begin_launch(const std::vector<TensorBinding>&) const {}
  /** After every core has run: checked mode reports outputs no instance wrote. */
  virtual void end_launch(const std::vector<TensorBinding>&) const {}
};

/**
 * The reference interpreter: executes the IR directly, checking every index. `checked` adds
 * checked mode (docs/reference.md): poisoned fresh memory, reads of unwritten elements, HBM
 * elements written by two instances or two affine_range iterations, outputs left unwritten.
 * A checked program holds the state of one launch: make one per launch.
 */
std::shared_ptr<const Program> make_reference_program(std::shared_ptr<const ir::KernelIR> ir, bool checked = false);

/** What to compile: a traced kernel for one target, SPMD or (with a program-id base) MPMD. */
struct CompileRequest {
  std::shared_ptr<const ir::KernelIR> ir;
  std::string text;                    ///< canonical IR text
  std::string target;                  ///< the device's target name
  std::vector<std::int64_t> pid_base;  ///< MPMD: the core's program ids baked in; empty: SPMD
  int rank = -1;                       ///< MPMD: the core (keyed); never part of an SPMD key
  int layer_unroll_factor = 1;         ///< unroll factor of the kernel's outermost loops (keyed)
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

}  // namespace nki
