/** \file OnChipMemory: blocks from one process-wide BlockCache, zeroed when fresh. */
#include "on_chip_memory.h"

#include <cstring>
#include <new>

#include "nki/simulator/block_cache.h"

namespace nki {

namespace {

/// What the cache keeps at most: a launch of two cores of the largest SBUF (24 MiB) and PSUM
/// several times over; a block given back beyond it is freed.
constexpr std::int64_t kKeptBytes = std::int64_t{256} << 20;

/** Never destroyed: a runner may outlive static destruction's order (its blocks stay reachable). */
sim::BlockCache& kept_blocks() {
  static sim::BlockCache* c = new sim::BlockCache(kKeptBytes);
  return *c;
}

}  // namespace

void OnChipMemory::Free::operator()(std::byte* p) const {
  if (p != nullptr) kept_blocks().give(p, static_cast<std::int64_t>(bytes));
}

OnChipMemory::OnChipMemory(std::size_t bytes) : block_(nullptr, Free{bytes}) {
  if (bytes == 0) return;  // a kernel without on-chip tensors or scratch: no block, no lock
  // Kept by the size asked for (a runner of the same kernel asks for the same), allocated rounded up.
  std::byte* p = kept_blocks().take(static_cast<std::int64_t>(bytes));
  if (p == nullptr) {
    p = sim::BlockCache::allocate(static_cast<std::int64_t>(aligned(bytes)));
    if (p == nullptr) throw std::bad_alloc();
    std::memset(p, 0, bytes);
  }
  block_.reset(p);
}

std::size_t OnChipMemory::pooled_bytes() { return static_cast<std::size_t>(kept_blocks().kept_bytes()); }

}  // namespace nki
