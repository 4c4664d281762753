/** \file nl.atomic_rmw's update of one HBM element: exact sums, shared by every core and both executors. */
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/program.h"
#include "nki/dtype.h"
#include "nki/ir/kernel_ir.h"

namespace nki {

/**
 * dst += value, atomically (any thread). The element's updates within a launch sum exactly
 * (the element and each value as fp32 addends), and the element holds that sum rounded to
 * fp32 and then to `t` (the DMA engines' conversion): so the result is one rounding of
 * dst + every value, whatever the order the updates land in. An element whose bits changed
 * since its last atomic update (a plain store, a new launch) starts a new sum from them.
 */
void atomic_add_element(std::byte* dst, DType t, double value);

/** Drops the exact sums of the elements in [begin, end): their launch is over. */
void forget_atomic_sums(const std::byte* begin, const std::byte* end);

/** A launch's scope of exact sums: the sums of its tensors' elements are dropped as it starts and as it ends (or fails). */
class AtomicSumsScope {
 public:
  AtomicSumsScope(const std::vector<TensorBinding>& tensors, bool active) : tensors_(tensors), active_(active) { forget(); }
  ~AtomicSumsScope() { forget(); }
  AtomicSumsScope(const AtomicSumsScope&) = delete;
  AtomicSumsScope& operator=(const AtomicSumsScope&) = delete;

 private:
  void forget() const;
  const std::vector<TensorBinding>& tensors_;
  bool active_;
};

/** Whether the kernel has an nl.atomic_rmw (a store with StoreOp::atomic). */
bool has_atomic_updates(const ir::KernelIR& k);

}  // namespace nki
