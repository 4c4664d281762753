/** \file The trace being recorded on this thread: what DSL calls append to. */
#pragma once

#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

#include "nki/ir/kernel_ir.h"

namespace nki {

/**
 * Records one kernel body into IR. While alive it is the current trace of the
 * constructing thread; DSL calls outside any trace are a user error.
 */
class Trace {
 public:
  /**
   * `nc_version`: the NeuronCore generation of the target traced for (isa::get_nc_version);
   * `world_size`: the ranks of the world launch traced for (rank_id() ranges over [0, world_size)).
   */
  Trace(std::string kernel, std::vector<std::int64_t> grid, int nc_version = 3, int world_size = 1);
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  /** The current trace; throws nki::UserError when a DSL call runs outside a kernel. */
  static Trace& current(const char* op, const std::source_location& where);
  /** The current trace, or nullptr outside a kernel. */
  static Trace* active();

  ir::KernelIR& ir() { return ir_; }
  const std::vector<std::int64_t>& grid() const { return grid_; }
  /** The ranks of the world traced for (1: a plain launch). */
  int world_size() const { return world_size_; }
  /**
   * The NeuronCore generation of the target this trace is for (2: trn1/inf2, 3: trn2, 4: trn3).
   * Asking records it in the IR: whatever the body does next may depend on it, so the trace
   * (and its artifact) is then kept per generation.
   */
  int nc_version() {
    ir_.nc_version = nc_version_;
    return nc_version_;
  }

  int add_tensor(std::string name, Shape shape, DType dtype, ir::Memory memory, SourceLoc loc);
  int add_tile(Shape shape, DType dtype, ir::Memory memory = ir::Memory::sbuf);
  void emit(ir::Op op) {
    refuse_outside_range_for();
    ir_.body.push_back(std::move(op));
  }

  /** Opens a loop (its LoopOp is emitted); returns the loop id. */
  int open_loop(ir::LoopKind kind, std::int64_t trip, SourceLoc loc);
  /** Closes the innermost open loop, which must be `loop`. */
  void close_loop(int loop);
  /**
   * The loop just opened by a range object (nl::affine_range, sequential_range,
   * dynamic_range) is traced only while a range-for iterates that object: it waits for
   * range_for_begins, and after range_for_ends nothing may be traced into it either. A range
   * stored in a variable instead (`auto r = nl::affine_range(4);`) would otherwise capture every
   * later statement: emit, add_tensor and add_tile fail with err_stored_loop_range then.
   */
  void await_range_for(int loop);
  void range_for_begins(int loop);
  void range_for_ends(int loop);
  /** After the kernel body: err_stored_loop_range for a range made but never iterated. */
  void refuse_unused_ranges() const;
  /** The innermost open loop, or -1 at the top level of the kernel. */
  int innermost_loop() const { return open_loops_.empty() ? -1 : open_loops_.back(); }
  /** The open loops, outermost first. */
  const std::vector<int>& open_loops() const { return open_loops_; }
  /** The loop a tile / tensor was created in (-1: top level). */
  int tile_scope(int tile) const { return tile_scope_.at(static_cast<std::size_t>(tile)); }
  int tensor_scope(int tensor) const { return tensor_scope_.at(static_cast<std::size_t>(tensor)); }
  /** Whether loop `loop` (or the top level, -1) is still open here. */
  bool in_scope(int loop) const;

  [[noreturn]] void fail(const char* name, const SourceLoc& loc, std::string detail) const;

  /**
   * The state of one engine's random-number generator while tracing (random.cpp): the two
   * uint32 key tiles a seed or state set (-1: the built-in key) and the generator calls since then.
   */
  struct RngState {
    int key0 = -1, key1 = -1;
    std::int64_t calls = 0;
  };
  /** Slot 0: the Vector engine's generator, slot 1: GpSimd's. */
  RngState& rng_state(int slot) { return rng_states_[static_cast<std::size_t>(slot)]; }

 private:
  ir::KernelIR ir_;
  std::vector<std::int64_t> grid_;
  int nc_version_;
  int world_size_;
  std::vector<int> open_loops_;
  std::vector<int> open_loop_ops_;  ///< body index of each open loop's LoopOp
  /// Of each open loop: how far the range-for over its range object has got (not_a_range: fori_loop, while_loop).
  enum class RangeFor { not_a_range, awaited, iterating, ended };
  std::vector<RangeFor> open_loop_range_for_;
  int unused_range_ = -1;  ///< a loop whose range was never iterated (reported after the body)
  void refuse_outside_range_for() const;
  [[noreturn]] void refuse_stored_range(int loop, RangeFor state) const;
  std::vector<int> tile_scope_, tensor_scope_;
  RngState rng_states_[2];
  Trace* previous_;
};

/** The trace's tile `id` (its shape, dtype and memory). */
inline const ir::TileInfo& tile_info(Trace& t, int id) { return t.ir().tiles.at(static_cast<std::size_t>(id)); }

}  // namespace nki
