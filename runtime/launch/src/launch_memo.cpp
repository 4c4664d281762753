/** \file LaunchMemo: capacity checks passed and SPMD programs found, per traced kernel. */
#include "launch_memo.h"

#include <algorithm>

namespace nki {

LaunchMemo::Memories LaunchMemo::memories(const sim::TargetSpec& t) {
  return {t.name, t.sbuf_bytes_per_core, t.psum_bytes_per_core, t.partitions, t.psum_banks};
}

bool LaunchMemo::fits(const sim::TargetSpec& t) const {
  const Memories m = memories(t);
  std::lock_guard lock(mutex_);
  return std::find(fits_.begin(), fits_.end(), m) != fits_.end();
}

void LaunchMemo::remember_fits(const sim::TargetSpec& t) {
  Memories m = memories(t);
  std::lock_guard lock(mutex_);
  if (std::find(fits_.begin(), fits_.end(), m) == fits_.end()) fits_.push_back(std::move(m));
}

std::optional<CompileOutcome> LaunchMemo::program(const std::string& target, int layer_unroll_factor) const {
  const std::uint64_t now = compiled_programs_generation();
  std::lock_guard lock(mutex_);
  for (const KnownProgram& p : programs_) {
    if (p.target != target || p.layer_unroll_factor != layer_unroll_factor || p.generation != now) continue;
    std::shared_ptr<const Program> loaded = p.program.lock();
    if (!loaded) return std::nullopt;
    return CompileOutcome{std::move(loaded), false, p.key};  // found, not compiled, by this launch
  }
  return std::nullopt;
}

void LaunchMemo::remember_program(const std::string& target, int layer_unroll_factor, std::uint64_t generation,
                                  const CompileOutcome& outcome) {
  std::lock_guard lock(mutex_);
  std::erase_if(programs_, [&](const KnownProgram& p) {
    return p.target == target && p.layer_unroll_factor == layer_unroll_factor;
  });
  programs_.push_back({target, layer_unroll_factor, generation, outcome.program, outcome.key});
}

std::optional<std::chrono::nanoseconds> LaunchMemo::work_beside_longest_core() const {
  const std::int64_t ns = work_beside_longest_ns_.load(std::memory_order_relaxed);
  if (ns < 0) return std::nullopt;
  return std::chrono::nanoseconds(ns);
}

void LaunchMemo::remember_work_beside_longest_core(std::chrono::nanoseconds t) {
  work_beside_longest_ns_.store(t.count(), std::memory_order_relaxed);
}

}  // namespace nki
