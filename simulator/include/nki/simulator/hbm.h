/** \file The HBM of one simulated chip: one address space shared by all its NeuronCores. */
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "nki/simulator/block_cache.h"
#include "nki/simulator/host_memory.h"

namespace nki::sim {

/**
 * Allocates tensor storage against the chip's HBM capacity. Freed blocks are kept
 * for reuse by size (BlockCache), so repeated launches do not pay the host OS for
 * fresh pages. Blocks are 64-byte aligned. Thread-safe.
 */
class Hbm : public std::enable_shared_from_this<Hbm> {
 public:
  explicit Hbm(std::int64_t capacity_bytes);
  Hbm(const Hbm&) = delete;
  Hbm& operator=(const Hbm&) = delete;

  /**
   * A block of `bytes`; its contents are undefined (as device memory is). Throws nki::UserError
   * before allocating when the chip's HBM is full (err_hbm_out_of_memory) or the block alone
   * is larger than the host's memory (err_host_out_of_memory), naming the bytes.
   */
  std::shared_ptr<std::byte> allocate(std::int64_t bytes);

  std::int64_t capacity() const { return capacity_; }
  std::int64_t bytes_in_use() const;

 private:
  void release(std::byte* p, std::int64_t bytes);

  std::int64_t capacity_;
  mutable std::mutex mu_;
  std::int64_t in_use_ = 0;
  BlockCache free_blocks_;
};

}  // namespace nki::sim
