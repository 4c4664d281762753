/** \file Where compiled code keeps each per-instance tensor's elements in host memory. */
#pragma once

#include <cstdint>
#include <vector>

#include "nki/ir/kernel_ir.h"

namespace nki {

/**
 * The host layout of a kernel's tensors: row-major over ir::storage_shape, except that an SBUF or
 * PSUM tensor whose partitions are a multiple of 512 bytes long has each partition padded by one
 * 64-byte cache line. Rows a power of two apart fall into a few cache sets, so code reading a
 * column block down the partitions (a matmul operand, a PSUM tile) evicted its own lines; the
 * padding spreads them over every set (bench/README.md, "sixth sitting"). Values are unaffected:
 * the padding is never read or written, and the interpreter keeps its own row-major copies.
 * A collective's operands stay dense (the collectives move them as whole row-major buffers).
 */
class OnChipLayout {
 public:
  explicit OnChipLayout(const ir::KernelIR& k);

  /** The strides, in elements, of tensor `t`'s storage. */
  const std::vector<std::int64_t>& strides(int t) const { return strides_[static_cast<std::size_t>(t)]; }
  /** The elements that layout spans: what compiled code allocates (and fills) for tensor `t`. */
  std::int64_t elements(int t) const { return elements_[static_cast<std::size_t>(t)]; }

 private:
  std::vector<std::vector<std::int64_t>> strides_;
  std::vector<std::int64_t> elements_;
};

}  // namespace nki
