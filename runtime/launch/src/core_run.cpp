/** \file One core's instances in batches of consecutive ids, with stop, interrupt and failure handling. */
#include "core_run.h"

#include <fmt/format.h>

#include <algorithm>

#include "nki/error.h"
#include "nki/interrupt.h"

namespace nki {

namespace {

std::string pid_str(std::span<const std::int64_t> pid) { return fmt::format("[{}]", fmt::join(pid, ",")); }

}  // namespace

std::string CoreName::str() const { return fmt::format("{}{}", prefix, number); }

bool run_instance_batch(const std::string& kernel, CoreRunner& runner, const InstanceIds& ids, std::size_t first,
                        std::size_t count, CoreName who, std::atomic<bool>& stop) {
  if (stop.load(std::memory_order_relaxed)) return false;
  if (interrupt_requested()) {
    stop = true;
    throw Interrupted(fmt::format("the launch of {} was interrupted: {} stopped before instance {}", kernel, who.str(),
                                  pid_str(ids.id(first))));
  }
  try {
    runner.run_batch(ids.id(first), static_cast<std::int64_t>(count));
  } catch (const InternalError& e) {
    stop = true;
    throw InternalError(fmt::format("{} instance{} {}{}: {}", who.str(), count > 1 ? "s" : "", pid_str(ids.id(first)),
                                    count > 1 ? ".." + pid_str(ids.id(first + count - 1)) : "", e.detail()));
  } catch (...) {
    stop = true;
    throw;
  }
  return true;
}

bool run_core_instances(const std::string& kernel, CoreRunner& runner,
                        const InstanceIds& ids, CoreName who,
                        std::atomic<bool>& stop) {
  // Each run of consecutive ids (InstanceIds::runs) in batches of at most kMaxBatch.
  std::size_t i = 0, left = 0;  // the next instance; what is left of its run
  const std::span<const std::uint32_t> runs = ids.runs();
  for (std::size_t r = 0; i < ids.size();) {
    if (left == 0) left = runs[r++];
    const std::size_t n = std::min(left, kMaxBatch);
    if (!run_instance_batch(kernel, runner, ids, i, n, who, stop)) return false;
    i += n;
    left -= n;
  }
  return true;
}

}  // namespace nki
