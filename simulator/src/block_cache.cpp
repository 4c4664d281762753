/** \file BlockCache: kept blocks by size, bounded. */
#include "nki/simulator/block_cache.h"

#include <cstdlib>

namespace nki::sim {

BlockCache::~BlockCache() {
  for (auto& [size, p] : blocks_) free(p);
}

std::byte* BlockCache::take(std::int64_t bytes) {
  std::lock_guard lock(mu_);
  auto [first, last] = blocks_.equal_range(bytes);
  if (first == last) return nullptr;
  const auto it = std::prev(last);
  std::byte* p = it->second;
  blocks_.erase(it);
  kept_ -= bytes;
  return p;
}

void BlockCache::give(std::byte* p, std::int64_t bytes) {
  {
    std::lock_guard lock(mu_);
    if (kept_ + bytes <= max_bytes_) {
      blocks_.emplace(bytes, p);
      kept_ += bytes;
      return;
    }
  }
  free(p);
}

std::int64_t BlockCache::kept_bytes() const {
  std::lock_guard lock(mu_);
  return kept_;
}

std::byte* BlockCache::allocate(std::int64_t bytes) {
  return static_cast<std::byte*>(std::aligned_alloc(kAlign, static_cast<std::size_t>(bytes)));
}

void BlockCache::free(std::byte* p) { std::free(p); }

}  // namespace nki::sim
