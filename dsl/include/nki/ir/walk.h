/** \file The walker over a kernel body's loops: which loops enclose each op, where each loop ends, one level's ops. */
#pragma once

#include <cstddef>
#include <span>
#include <variant>
#include <vector>

#include "nki/ir/kernel_ir.h"

namespace nki::ir {

/** Whether `op` is a LoopOp or a LoopEndOp. */
inline bool is_loop_marker(const Op& op) {
  return std::holds_alternative<LoopOp>(op) || std::holds_alternative<LoopEndOp>(op);
}

/**
 * The loop structure of a kernel body, computed once so no pass tracks open loops itself.
 * A loop's own LoopOp and LoopEndOp belong to the level around the loop: they are not
 * enclosed by it. Loops are named by loop id, ops by body index.
 */
class LoopNest {
 public:
  /** Throws InternalError if the body's loop markers do not nest. */
  explicit LoopNest(const KernelIR& k);

  /** The loops enclosing body index `i`, outermost first. */
  std::span<const int> enclosing(std::size_t i) const {
    return {stacks_.data() + first_[i], first_[i + 1] - first_[i]};
  }
  /** The innermost loop enclosing body index `i`, -1 at top level. */
  int innermost(std::size_t i) const { return first_[i + 1] == first_[i] ? -1 : stacks_[first_[i + 1] - 1]; }
  /** How many loops enclose body index `i`. */
  std::size_t depth(std::size_t i) const { return first_[i + 1] - first_[i]; }
  /** Body index of the LoopOp of `loop`. */
  std::size_t begin(int loop) const { return begin_[static_cast<std::size_t>(loop)]; }
  /** Body index of the LoopEndOp of `loop`. */
  std::size_t end(int loop) const { return end_[static_cast<std::size_t>(loop)]; }
  /** Whether `loop` is `outer` or a loop nested inside it. */
  bool within(int loop, int outer) const { return begin(outer) <= begin(loop) && end(loop) <= end(outer); }

  /**
   * The body indices directly inside one loop (or the top level), in order: a nested loop
   * appears as its LoopOp alone, and the level's own LoopEndOp is not in it. Executors
   * iterate a level per loop iteration, so stepping is one table look-up, no allocation.
   */
  class Level {
   public:
    class iterator {
     public:
      iterator(const std::size_t* next, std::size_t i) : next_(next), i_(i) {}
      std::size_t operator*() const { return i_; }
      iterator& operator++() {
        i_ = next_[i_];
        return *this;
      }
      bool operator==(const iterator& o) const { return i_ == o.i_; }

     private:
      const std::size_t* next_;
      std::size_t i_;
    };
    Level(const std::size_t* next, std::size_t first, std::size_t stop) : next_(next), first_(first), stop_(stop) {}
    iterator begin() const { return {next_, first_}; }
    iterator end() const { return {next_, stop_}; }

   private:
    const std::size_t* next_;
    std::size_t first_, stop_;
  };
  /** The ops directly in `loop`'s body; `loop` -1 is the top level of the kernel. */
  Level level(int loop) const {
    return loop < 0 ? Level{next_.data(), 0, next_.size()} : Level{next_.data(), begin(loop) + 1, end(loop)};
  }

 private:
  std::vector<std::size_t> first_;   ///< body index -> its enclosing loops start here in stacks_ (one extra at the end)
  std::vector<int> stacks_;          ///< every op's enclosing loops, concatenated
  std::vector<std::size_t> begin_;   ///< loop id -> body index of its LoopOp
  std::vector<std::size_t> end_;     ///< loop id -> body index of its LoopEndOp
  std::vector<std::size_t> next_;    ///< body index -> the next body index at the same level
};

}  // namespace nki::ir
