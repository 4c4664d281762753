/** \file One core's instances in batches of consecutive ids, with stop, interrupt and failure handling. */
#include "core_run.h"

#include <fmt/format.h>

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
  return for_each_batch(ids, [&](std::size_t first, std::size_t count) {
    return run_instance_batch(kernel, runner, ids, first, count, who, stop);
  });
}

}  // namespace nki
