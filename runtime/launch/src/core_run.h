/** \file One core's instances run in batches, stoppable between batches: plain launches and world launches share it. */
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/program.h"
#include "nki/instance_ids.h"

namespace nki {

/** What runs a core's instances, as errors name it: "NC1", "rank 3". Formatted only for an error. */
struct CoreName {
  const char* prefix;
  std::int64_t number;
  std::string str() const;
};

/// Longest batch a core hands to its runner at once; bounds how late a stop request is seen.
inline constexpr std::size_t kMaxBatch = 64;

/**
 * Cuts `ids` into the batches a core runs, in order: each run of consecutive ids
 * (InstanceIds::runs) in pieces of at most kMaxBatch. Calls `f(first, count)` for each until it
 * returns false; false then, true when every batch was passed.
 */
template <class F>
bool for_each_batch(const InstanceIds& ids, F&& f) {
  std::size_t first = 0;
  for (const std::uint32_t run : ids.runs()) {
    for (std::size_t left = run; left > 0;) {
      const std::size_t count = std::min(left, kMaxBatch);
      if (!f(first, count)) return false;
      first += count;
      left -= count;
    }
  }
  return true;
}

/**
 * Runs instances first .. first + count - 1 of `ids` (consecutive ids of one run) on `runner`.
 * False without running them when `stop` is set; throws nki::Interrupted (setting `stop`) when
 * an interrupt was requested; a failure sets `stop` and is rethrown, an nki::InternalError with
 * `who` and the instances.
 */
bool run_instance_batch(const std::string& kernel, CoreRunner& runner, const InstanceIds& ids, std::size_t first,
                        std::size_t count, CoreName who, std::atomic<bool>& stop);

/**
 * Runs `instances` on `runner` in the batches for_each_batch cuts. Before each
 * batch it returns false when `stop` is set, and throws nki::Interrupted (setting `stop`) when
 * an interrupt was requested; a failure sets `stop` and is rethrown, an nki::InternalError
 * with `who` and the instances. True when every instance ran.
 */
bool run_core_instances(const std::string& kernel, CoreRunner& runner,
                        const InstanceIds& instances, CoreName who,
                        std::atomic<bool>& stop);

}  // namespace nki
