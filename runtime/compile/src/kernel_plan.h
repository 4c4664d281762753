/** \file The executable plan of a compiled kernel: its steps and scratch buffers, saved next to the artifact. */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nki/shape.h"

namespace nki {

/** One dimension of a compiled step's output buffer (as halide_dimension_t). */
struct PlanDim {
  std::int32_t extent = 0;
  std::int32_t stride = 0;
};

/**
 * One step a core walks per instance: a compiled call, a loop marker, filling an on-chip
 * tensor, or a register instruction or collective the executor performs itself (ir::RegisterOp,
 * ir::CollectiveOp). A loop
 * marker of a dynamic loop (ir::is_dynamic) computes its trip count from registers as it starts.
 */
struct StepPlan {
  enum class Kind { call, loop, loop_end, fill, reg, print, collective, scatter } kind = Kind::call;
  // call
  std::string function;     ///< the step's function in the artifact (its argv entry is function + "_argv")
  std::vector<int> inputs;  ///< buffer arguments in order: a tensor id, or -1 - scratch index
  int store = -1;           ///< body index of the StoreOp whose tensor it writes through a view, or
  int scratch = -1;         ///< the scratch buffer it writes (a materialized tile)
  std::vector<PlanDim> out_dims;  ///< output extents and strides, then the batch dim
  /// Its stores into HBM are non-temporal (streaming_stores.h): the executor fences after the call,
  /// so they are seen by other cores like plain stores.
  bool streaming = false;
  /// A copy of an unrolled loop's body: the code reads loop `shift_loop` as its variable + shift.
  int shift_loop = -1;
  int shift = 0;
  // loop / fill
  int loop = -1;
  std::size_t end = 0;  ///< loop: index of its loop_end step
  /// loop: runs `trip` times (-1: the IR loop's trip count) with its variable first, first + stride, ...
  std::int64_t first = 0;
  std::int64_t stride = 1;
  std::int64_t trip = -1;
  int tensor = -1;      ///< fill
  int op = -1;          ///< reg / print / collective: body index of the RegisterOp / PrintOp / CollectiveOp (print: `scratch` holds its tile)
  // scatter: `op` is the indirect StoreOp the executor performs; inputs are the scratch keys
  // (-1 - index) of its value tile and its index tile
};

/** A per-core buffer holding one materialized tile (Halide type code and bits of its values). */
struct ScratchPlan {
  Shape shape;
  int type_code = 2;  ///< halide_type_float
  int type_bits = 32;
};

struct KernelPlan {
  std::vector<StepPlan> steps;
  std::vector<ScratchPlan> scratch;
  bool batchable = false;
  /// MPMD: program ids baked in as constants (the core's first instance); the code takes pid - base.
  std::vector<std::int64_t> pid_base;
  /// MPMD: the rank baked in (rank_id reads it); -1: SPMD, the rank is the core's at run time.
  int rank = -1;
};

/**
 * The steps as the executor walks them, one per line, loops indented: the readable part of a
 * kernel's lowered code (an unrolled loop shows its stride and the copies of its body).
 */
std::string plan_outline(const KernelPlan& plan);

/** The plan as JSON text, and back. Parsing throws std::runtime_error on anything malformed. */
std::string plan_to_json(const KernelPlan& plan);
KernelPlan plan_from_json(const std::string& text);

}  // namespace nki
