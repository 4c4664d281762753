/** \file One core's instances in batches of consecutive ids, with stop, interrupt and failure handling. */
#include "core_run.h"

#include <fmt/format.h>

#include <algorithm>

#include "nki/error.h"
#include "nki/interrupt.h"

namespace nki {

namespace {

std::string pid_str(std::span<const std::int64_t> pid) { return fmt::format("[{}]", fmt::join(pid, ",")); }

/// Longest batch a core hands to its runner at once; bounds how late a stop request is seen.
constexpr std::size_t kMaxBatch = 64;

/** How many instances from `i` on form a run whose ids differ only by +1 steps in the last axis. */
std::size_t consecutive_run(const InstanceIds& ids, std::size_t i) {
  std::size_t n = 1;
  if (ids.rank() == 0) return n;
  while (n < kMaxBatch && i + n < ids.size()) {
    const std::span<const std::int64_t> prev = ids.id(i + n - 1);
    const std::span<const std::int64_t> next = ids.id(i + n);
    if (next.back() != prev.back() + 1 || !std::equal(prev.begin(), prev.end() - 1, next.begin())) break;
    ++n;
  }
  return n;
}

}  // namespace

bool run_core_instances(const std::string& kernel, CoreRunner& runner,
                        const InstanceIds& ids, const std::string& who,
                        std::atomic<bool>& stop) {
  for (std::size_t i = 0; i < ids.size();) {
    if (stop.load(std::memory_order_relaxed)) return false;
    if (interrupt_requested()) {
      stop = true;
      throw Interrupted(fmt::format("the launch of {} was interrupted: {} stopped before instance {}", kernel, who,
                                    pid_str(ids.id(i))));
    }
    const std::size_t n = consecutive_run(ids, i);
    try {
      runner.run_batch(ids.id(i), static_cast<std::int64_t>(n));
    } catch (const InternalError& e) {
      stop = true;
      throw InternalError(fmt::format("{} instance{} {}{}: {}", who, n > 1 ? "s" : "", pid_str(ids.id(i)),
                                      n > 1 ? ".." + pid_str(ids.id(i + n - 1)) : "", e.detail()));
    } catch (...) {
      stop = true;
      throw;
    }
    i += n;
  }
  return true;
}

}  // namespace nki
