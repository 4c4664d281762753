/** \file Freed blocks of host memory kept for reuse by exact size, up to a bound. */
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

namespace nki::sim {

/**
 * Blocks given back are kept by size for a later request of exactly that size (as a device
 * arena would), so repeated launches do not pay the host OS for fresh pages; a block that would
 * take the kept bytes past `max_bytes` is freed instead. Blocks come from aligned_alloc (kAlign).
 * Thread-safe. Serves the simulated HBM (Hbm) and compiled code's on-chip memory (OnChipMemory).
 */
class BlockCache {
 public:
  static constexpr std::int64_t kAlign = 64;

  explicit BlockCache(std::int64_t max_bytes) : max_bytes_(max_bytes) {}
  ~BlockCache();  ///< frees what it keeps
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  /** A kept block of exactly `bytes` (the one given back last: the warmest), or null. */
  std::byte* take(std::int64_t bytes);
  /** Keeps `p` (from allocate()) under the size `bytes` a later take() asks for, or frees it when that would pass the bound. */
  void give(std::byte* p, std::int64_t bytes);
  /** The bytes kept now. */
  std::int64_t kept_bytes() const;

  /** A fresh block of `bytes` (a multiple of kAlign), contents undefined; null when the host has none. */
  static std::byte* allocate(std::int64_t bytes);
  static void free(std::byte* p);

 private:
  const std::int64_t max_bytes_;
  mutable std::mutex mu_;
  std::multimap<std::int64_t, std::byte*> blocks_;  ///< by size
  std::int64_t kept_ = 0;
};

}  // namespace nki::sim
