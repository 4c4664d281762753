/** \file A core's on-chip memory for one bound runner, kept between launches instead of allocated and zeroed per launch. */
#pragma once

#include <cstddef>
#include <memory>

namespace nki {

/**
 * The per-instance memory (SBUF, PSUM, private HBM, scratch) of one bound CompiledRunner: one
 * block, taken from a process-wide sim::BlockCache when a block of the same size was given back,
 * else allocated (and zeroed, so a first launch is deterministic); given back when the runner
 * goes. A kept block holds what the last launch left, as a NeuronCore's SBUF does between
 * kernels: NKI leaves on-chip memory undefined when an instance starts (docs/reference.md). Why:
 * the matmul launch allocated and zeroed 8 MiB per core and launch (bench/README.md, "seventh
 * sitting").
 */
class OnChipMemory {
 public:
  explicit OnChipMemory(std::size_t bytes);
  OnChipMemory(const OnChipMemory&) = delete;
  OnChipMemory& operator=(const OnChipMemory&) = delete;

  /** The block: kAlign-aligned, `size()` bytes (null for 0 bytes). */
  std::byte* data() const { return block_.get(); }
  std::size_t size() const { return block_.get_deleter().bytes; }

  /** Alignment of the block and of every part a runner carves from it (one cache line). */
  static constexpr std::size_t kAlign = 64;
  /** `bytes` rounded up to kAlign: where the next part starts. */
  static constexpr std::size_t aligned(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

  /** The bytes of blocks given back and not yet taken (for tests). */
  static std::size_t pooled_bytes();

 private:
  /** Gives the block back to the cache. */
  struct Free {
    std::size_t bytes;
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte[], Free> block_;
};

}  // namespace nki
