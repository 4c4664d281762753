/** \file OnChipMemory: a pool of blocks, by exact size, with a bound on what it keeps. */
#include "on_chip_memory.h"

#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <vector>

namespace nki {

namespace {

/// What the pool keeps at most: a launch of two cores of the largest SBUF (24 MiB) and PSUM
/// several times over; blocks beyond it are freed, the oldest first.
constexpr std::size_t kKeptBytes = std::size_t{256} << 20;

struct Kept {
  std::byte* block;
  std::size_t bytes;
};

struct Pool {
  std::mutex mutex;
  std::deque<Kept> blocks;  ///< oldest first
  std::size_t bytes = 0;
};

/** Never destroyed: a runner may outlive static destruction's order (its blocks stay reachable). */
Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

std::byte* allocate(std::size_t bytes) {
  void* p = std::aligned_alloc(OnChipMemory::kAlign, OnChipMemory::aligned(bytes));
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  return static_cast<std::byte*>(p);
}

}  // namespace

void OnChipMemory::Free::operator()(std::byte* p) const { std::free(p); }

OnChipMemory::OnChipMemory(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;  // a kernel without on-chip tensors or scratch: no block, no lock
  Pool& p = pool();
  {
    std::lock_guard lock(p.mutex);
    for (auto it = p.blocks.end(); it != p.blocks.begin();) {  // the most recently given back first: warmest
      --it;
      if (it->bytes != bytes) continue;
      block_.reset(it->block);
      p.bytes -= it->bytes;
      p.blocks.erase(it);
      return;
    }
  }
  block_.reset(allocate(bytes));
}

OnChipMemory::~OnChipMemory() {
  if (!block_) return;
  if (bytes_ > kKeptBytes) return;  // block_ frees it
  Pool& p = pool();
  std::vector<std::byte*> dropped;
  {
    std::lock_guard lock(p.mutex);
    p.blocks.push_back({block_.release(), bytes_});
    p.bytes += bytes_;
    while (p.bytes > kKeptBytes) {
      dropped.push_back(p.blocks.front().block);
      p.bytes -= p.blocks.front().bytes;
      p.blocks.pop_front();
    }
  }
  for (std::byte* b : dropped) Free{}(b);
}

std::size_t OnChipMemory::pooled_blocks() {
  std::lock_guard lock(pool().mutex);
  return pool().blocks.size();
}

std::size_t OnChipMemory::pooled_bytes() {
  std::lock_guard lock(pool().mutex);
  return pool().bytes;
}

}  // namespace nki
