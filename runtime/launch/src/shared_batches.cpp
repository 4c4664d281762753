/** \file Several cores' instances shared out between the threads that run them. */
#include "shared_batches.h"

namespace nki {

SharedBatches::SharedBatches(std::span<const SharedCore> cores)
    : cores_(std::make_unique<Core[]>(cores.size())), count_(cores.size()) {
  for (std::size_t c = 0; c < cores.size(); ++c) {
    Core& core = cores_[c];
    core.core = cores[c];
    for_each_batch(*cores[c].instances, [&](std::size_t first, std::size_t count) {
      core.batches.push_back({static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(count)});
      return true;
    });
    core.ends.store(static_cast<std::uint64_t>(core.batches.size()) << 32, std::memory_order_relaxed);
  }
}

std::optional<SharedBatches::Batch> SharedBatches::Core::take(bool from_back) {
  std::uint64_t v = ends.load(std::memory_order_relaxed);
  for (;;) {
    const auto front = static_cast<std::uint32_t>(v), back = static_cast<std::uint32_t>(v >> 32);
    if (front >= back) return std::nullopt;
    if (ends.compare_exchange_weak(v, from_back ? v - (std::uint64_t{1} << 32) : v + 1, std::memory_order_relaxed))
      return batches[from_back ? back - 1 : front];
  }
}

bool SharedBatches::run(std::size_t t, const std::string& kernel, CoreRunner& runner, std::atomic<bool>& stop) {
  auto run_batch = [&](const Core& c, Batch b) {
    return run_instance_batch(kernel, runner, *c.core.instances, b.first, b.count, c.core.who, stop);
  };
  Core& own = cores_[t];
  while (const std::optional<Batch> b = own.take(false))
    if (!run_batch(own, *b)) return false;
  for (std::size_t k = 1; k < count_; ++k) {
    Core& other = cores_[(t + k) % count_];
    while (const std::optional<Batch> b = other.take(true))
      if (!run_batch(other, *b)) return false;
  }
  return !stop.load(std::memory_order_relaxed);  // another thread's failure may have ended its batches
}

}  // namespace nki
