/** \file HBM capacity accounting and block reuse. */
#include "nki/simulator/hbm.h"

#include <fmt/format.h>

#include <algorithm>

#include "nki/error.h"

namespace nki::sim {

namespace {
constexpr std::int64_t kAlign = BlockCache::kAlign;
/// Free blocks kept for reuse are bounded so an idle device does not pin host memory.
constexpr std::int64_t kMaxCachedBytes = std::int64_t{2} << 30;
}  // namespace

Hbm::Hbm(std::int64_t capacity_bytes) : capacity_(capacity_bytes), free_blocks_(kMaxCachedBytes) {}

std::shared_ptr<std::byte> Hbm::allocate(std::int64_t bytes) {
  // Compared before rounding up, so a request near 2^63 bytes cannot wrap.
  const std::int64_t rounded =
      bytes > capacity_ ? bytes : std::max<std::int64_t>(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  std::byte* p = nullptr;
  {
    std::lock_guard lock(mu_);
    if (rounded > capacity_ - in_use_) {
      throw UserError("err_hbm_out_of_memory", "", {},
                      fmt::format("allocating {} bytes of HBM would exceed the chip's {} bytes ({} in use)", bytes,
                                  capacity_, in_use_));
    }
    p = free_blocks_.take(rounded);
    if (p == nullptr && rounded > host_memory_bytes()) {
      throw UserError("err_host_out_of_memory", "", {},
                      fmt::format("allocating {} bytes of simulated HBM would exhaust the host's {} bytes of memory",
                                  bytes, host_memory_bytes()));
    }
    in_use_ += rounded;
  }
  if (p == nullptr) {
    p = BlockCache::allocate(rounded);
    if (p == nullptr) {
      std::lock_guard lock(mu_);
      in_use_ -= rounded;
      throw UserError("err_host_out_of_memory", "", {},
                      fmt::format("the host could not provide {} bytes for simulated HBM", rounded));
    }
  }
  return std::shared_ptr<std::byte>(p, [self = shared_from_this(), rounded](std::byte* q) { self->release(q, rounded); });
}

void Hbm::release(std::byte* p, std::int64_t bytes) {
  {
    std::lock_guard lock(mu_);
    in_use_ -= bytes;
  }
  free_blocks_.give(p, bytes);
}

std::int64_t Hbm::bytes_in_use() const {
  std::lock_guard lock(mu_);
  return in_use_;
}

}  // namespace nki::sim
