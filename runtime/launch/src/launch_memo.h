/** \file What the launches of one traced kernel find once and need not find again. */
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "compile/program_cache.h"
#include "nki/simulator/target.h"

namespace nki {

/**
 * Per traced kernel (TracedKernel::memo): the capacity checks it passed and its SPMD program per
 * compile setting. A launch asks these every time and the answers do not change, but finding
 * them (the capacity walk over the IR; the cache key's text, its hash and the memo lookup) was
 * most of a launch's fixed cost (bench/README.md, "Fixed cost"). Thread-safe.
 */
class LaunchMemo {
 public:
  /** Whether check_capacity already passed for a target with `t`'s memories. */
  bool fits(const sim::TargetSpec& t) const;
  void remember_fits(const sim::TargetSpec& t);

  /**
   * The SPMD program compiled for (target, layer_unroll_factor), when it was found under the
   * in-process memo's current generation (compiled_programs_generation: a cache clear drops it)
   * and is still loaded. Kept weakly: the in-process memo decides how long an artifact stays
   * loaded (a dropped one must unload before its entry on disk is rewritten).
   */
  std::optional<CompileOutcome> program(const std::string& target, int layer_unroll_factor) const;
  void remember_program(const std::string& target, int layer_unroll_factor, std::uint64_t generation,
                        const CompileOutcome& outcome);

  /**
   * At the last launch with several busy cores, the time the cores other than the longest-running
   * one took: what threads of their own can take off the calling thread. Null before the first.
   */
  std::optional<std::chrono::nanoseconds> work_beside_longest_core() const;
  void remember_work_beside_longest_core(std::chrono::nanoseconds t);

  /**
   * Whether a launch that runs its cores one after the other on the calling thread (because they
   * were short) times them again: one in kRetimeEvery. Timing is two clock reads per core, a
   * visible share of such a launch; now and then is enough to see the cores grow long.
   */
  bool retime_cores_on_caller() { return cores_on_caller_.fetch_add(1, std::memory_order_relaxed) % kRetimeEvery == 0; }
  static constexpr std::uint32_t kRetimeEvery = 16;

 private:
  struct Memories {  // what check_capacity reads of a target
    std::string name;
    std::int64_t sbuf_bytes, psum_bytes;
    int partitions, psum_banks;
    bool operator==(const Memories&) const = default;
  };
  static Memories memories(const sim::TargetSpec& t);
  struct KnownProgram {
    std::string target;
    int layer_unroll_factor;
    std::uint64_t generation;
    std::weak_ptr<const Program> program;
    std::string key;
  };
  mutable std::mutex mutex_;
  std::vector<Memories> fits_;
  std::vector<KnownProgram> programs_;
  std::atomic<std::int64_t> work_beside_longest_ns_{-1};
  std::atomic<std::uint32_t> cores_on_caller_{0};
};

}  // namespace nki
