/** \file The process-wide interrupt request launches poll between batches. */
#include "nki/interrupt.h"

#include <atomic>

namespace nki {

namespace {
std::atomic<bool> requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "a signal handler may only touch lock-free atomics");
}  // namespace

void request_interrupt() noexcept { requested.store(true, std::memory_order_relaxed); }
bool interrupt_requested() noexcept { return requested.load(std::memory_order_relaxed); }
void clear_interrupt() noexcept { requested.store(false, std::memory_order_relaxed); }

}  // namespace nki
