/** \file Two pieces of work alternated in one benchmark loop, so both see the same machine moment. */
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <functional>

namespace nki_bench {

/**
 * `kernel` and `baseline` alternated in one loop (which goes first alternates too), each timed on
 * its own. Counters: kernel_ms and baseline_ms (means) and ratio = baseline time / kernel time,
 * the kernel's throughput as a fraction of the baseline's, with the baseline's time scaled by
 * `baseline_work_per_kernel_work` when the two do different amounts of work.
 */
inline void alternate(benchmark::State& state, const std::function<void()>& kernel,
                      const std::function<void()>& baseline, double baseline_work_per_kernel_work = 1.0) {
  using clock = std::chrono::steady_clock;
  double kernel_s = 0, baseline_s = 0;
  bool kernel_first = true;
  auto timed = [](const std::function<void()>& f) {
    const auto t0 = clock::now();
    f();
    return std::chrono::duration<double>(clock::now() - t0).count();
  };
  for (auto _ : state) {
    if (kernel_first) {
      kernel_s += timed(kernel);
      baseline_s += timed(baseline);
    } else {
      baseline_s += timed(baseline);
      kernel_s += timed(kernel);
    }
    kernel_first = !kernel_first;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["kernel_ms"] = kernel_s / n * 1e3;
  state.counters["baseline_ms"] = baseline_s / n * 1e3;
  state.counters["ratio"] = baseline_s / baseline_work_per_kernel_work / kernel_s;
}

}  // namespace nki_bench
