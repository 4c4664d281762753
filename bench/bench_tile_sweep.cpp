/**
 * \file Google Benchmark suite: tile-size sweeps.
 *
 *   stream_bf16_add_2threads_4096x8192  the STREAM-style baseline alone (context)
 *   tensor_add_tile_sweep/P:p/F:f       tensor_add_tiled with [p, f] tiles on [4096, 8192] bf16 on trn2 with
 *                                       LNC=2 (grid spmd_dim(4096/2p, nc(2))); every iteration also runs the
 *                                       baseline, timed apart, in alternating order. Counters: host_GBps,
 *                                       stream_GBps, ratio (host / stream, from the same seconds) and
 *                                       sim_latency_us (the cost model's device latency). P = 256 is swept too:
 *                                       the hardware forbids it, so it is skipped with the reason.
 *
 *   matmul_block_sweep/tiles_m:m/tiles_n:n/tiles_k:k
 *                                       matmul_fully_optimized with m x n x k tiles per block on lhsT [8192, 4096]
 *                                       and rhs [8192, 8192] bf16, trn2 LNC=2 (two cores): simulated only, the
 *                                       time is the cost model's run. Counters: sim_latency_us, hfu and vs_default
 *                                       (the NKI tutorial's 16 x 2 x 8 blocking's latency / this one's: above 1 is
 *                                       faster). Blockings the matrices or SBUF/PSUM do not allow are skipped
 *                                       with the reason.
 *
 * Every benchmark checks its result once before timing: the tensor adds bit for bit against the host
 * reference; the matmul estimates that they count exactly the 2 M N K FLOPs of the whole product.
 */
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bf16_add_baseline.h"
#include "check_once.h"
#include "nki/kernels.h"
#include "nki/nki.h"
#include "nki/profile.h"
#include "nki/tunable_kernel.h"

namespace nl = nki::language;

namespace {

constexpr std::int64_t kRows = 4096, kCols = 8192, kElements = kRows * kCols;
constexpr double kBytesPerAdd = 3.0 * kElements * 2;  ///< read a, read b, write c; 2 bytes each
constexpr const char* kTarget = "trn2";

using Clock = std::chrono::steady_clock;

/** The inputs on a trn2 device with one LNC=2 logical core, their host reference sum, and the baseline's output. */
struct SweepInputs {
  nki::sim::Device device{kTarget, 2};
  nki::Tensor a{{kRows, kCols}, nl::bfloat16, device};
  nki::Tensor b{{kRows, kCols}, nl::bfloat16, device};
  std::vector<std::uint16_t> expected;
  std::unique_ptr<std::uint16_t, decltype(&std::free)> stream_c{nullptr, &std::free};

  SweepInputs() : expected(static_cast<std::size_t>(kElements)) {
    std::span<std::uint16_t> pa = a.bits16(), pb = b.bits16();
    for (std::int64_t i = 0; i < kElements; ++i) {
      pa[i] = nki_bench::random_bf16(11, i);
      pb[i] = nki_bench::random_bf16(12, i);
      expected[static_cast<std::size_t>(i)] = nki_bench::reference_add(pa[i], pb[i]);
    }
    stream_c.reset(static_cast<std::uint16_t*>(std::aligned_alloc(64, static_cast<std::size_t>(kElements) * 2)));
    if (!stream_c) throw std::bad_alloc();
    std::memset(stream_c.get(), 0xff, static_cast<std::size_t>(kElements) * 2);  // stale output cannot pass
  }
  void run_stream() {
    nki_bench::stream_bf16_add(a.bits16().data(), b.bits16().data(), stream_c.get(), static_cast<std::size_t>(kElements), 2);
  }
  std::vector<nki::TensorSpec> specs() const { return {{a.shape(), a.dtype()}, {b.shape(), b.dtype()}}; }
};

SweepInputs& inputs() {
  static SweepInputs in;
  return in;
}

/** Empty when `got` is the host reference bit for bit, else where it first differs. */
std::string compare(const std::uint16_t* got, const std::string& what) {
  const std::vector<std::uint16_t>& want = inputs().expected;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) {
      return what + " differs from the host reference at element " + std::to_string(i) + ": " +
             std::to_string(got[i]) + ", want " + std::to_string(want[i]);
    }
  }
  return {};
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

void BM_stream_bf16_add_2threads_4096x8192(benchmark::State& state) {
  SweepInputs& in = inputs();
  if (const std::string& err = nki_bench::check_once("stream", [&] {
        in.run_stream();
        return compare(in.stream_c.get(), "the baseline");
      });
      !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  for (auto _ : state) {
    in.run_stream();
    benchmark::ClobberMemory();
  }
  state.counters["GBps"] = benchmark::Counter(kBytesPerAdd, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::OneK::kIs1000);
}

// Registered before the sweep, so it runs (and is listed) first.
BENCHMARK(BM_stream_bf16_add_2threads_4096x8192)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);

void BM_tensor_add_tile_sweep(benchmark::State& state, std::int64_t p, std::int64_t f) {
  static const nki::TunableKernel family = nki::kernels::tensor_add_tiled_tunable();
  SweepInputs& in = inputs();
  const nki::TuningConfig config{{{"P", p}, {"F", f}}};
  if (const std::optional<std::string> why = nki::config_rejection(family, config, in.specs(), kTarget)) {
    state.SkipWithError(("forbidden: " + *why).c_str());
    return;
  }
  const nki::BoundLaunch launch = family.make(config).launch(family.grid(config, {in.a.shape(), in.b.shape()}));
  const std::vector<nki::Tensor> args{in.a, in.b};
  if (const std::string& err = nki_bench::check_once(config.str(), [&] {
        nki::LaunchResult r = launch.run(args);  // traces and compiles
        return compare(r.outputs.at(0).bits16().data(), "tensor_add_tiled " + config.str());
      });
      !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  const double latency_us = nki::profile(launch, in.specs(), kTarget, false).latency_us;
  double launch_s = 0, stream_s = 0;
  bool launch_first = true;
  for (auto _ : state) {
    // Alternate which side runs first, so neither profits from the other's cache contents.
    const Clock::time_point t0 = Clock::now();
    if (!launch_first) in.run_stream();
    const Clock::time_point t1 = Clock::now();
    const nki::LaunchResult r = launch.run(args);
    benchmark::DoNotOptimize(r.outputs.front().data());
    const Clock::time_point t2 = Clock::now();
    if (launch_first) in.run_stream();
    const Clock::time_point t3 = Clock::now();
    state.SetIterationTime(seconds(t2 - t1));
    launch_s += seconds(t2 - t1);
    stream_s += seconds(launch_first ? t3 - t2 : t1 - t0);
    launch_first = !launch_first;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["host_GBps"] = kBytesPerAdd * n / launch_s / 1e9;
  state.counters["stream_GBps"] = kBytesPerAdd * n / stream_s / 1e9;
  state.counters["ratio"] = stream_s / launch_s;
  state.counters["sim_latency_us"] = latency_us;
}

/** P in {32, 64, 128} and the forbidden 256, F in {64, ..., 8192}. */
const bool registered = [] {
  for (std::int64_t p : {32, 64, 128, 256}) {
    for (std::int64_t f = 64; f <= 8192; f *= 2) {
      benchmark::RegisterBenchmark(("tensor_add_tile_sweep/P:" + std::to_string(p) + "/F:" + std::to_string(f)).c_str(),
                                   BM_tensor_add_tile_sweep, p, f)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.5);
    }
  }
  return true;
}();

// ---------------------------------------------------------------------------------------
// matmul_fully_optimized's block sizes: simulated latency only
// ---------------------------------------------------------------------------------------

constexpr std::int64_t kK = 8192, kM = 4096, kN = 8192;

const std::vector<nki::TensorSpec>& matmul_args() {
  static const std::vector<nki::TensorSpec> args{{{kK, kM}, nl::bfloat16}, {{kK, kN}, nl::bfloat16}};
  return args;
}

/** The cost model's report for one blocking; checked once to cover the whole product. */
nki::ProfileReport matmul_estimate(const nki::TunableKernel& family, const nki::TuningConfig& config) {
  const nki::BoundLaunch launch = family.make(config).launch(family.grid(config, {{kK, kM}, {kK, kN}}));
  return nki::profile(launch, matmul_args(), kTarget, false);
}

void BM_matmul_block_sweep(benchmark::State& state, std::int64_t tm, std::int64_t tn, std::int64_t tk) {
  static const nki::TunableKernel family = nki::kernels::matmul_fully_optimized_tunable();
  const nki::TuningConfig config{{{"tiles_m", tm}, {"tiles_n", tn}, {"tiles_k", tk}}};
  if (const std::optional<std::string> why = nki::config_rejection(family, config, matmul_args(), kTarget)) {
    state.SkipWithError(("forbidden: " + *why).c_str());
    return;
  }
  static const double default_us = matmul_estimate(family, family.defaults()).latency_us;
  nki::ProfileReport r;
  if (const std::string& err = nki_bench::check_once(config.str(), [&] {
        r = matmul_estimate(family, config);
        const std::int64_t want = 2 * kM * kN * kK;
        if (r.flops != want) return "the estimate counts " + std::to_string(r.flops) + " FLOPs, want " + std::to_string(want);
        return r.latency_us > 0 ? std::string() : std::string("the estimate has no latency");
      });
      !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  for (auto _ : state) {
    r = matmul_estimate(family, config);
    // Not DoNotOptimize(r.latency_us): its "+m,r" asm on a double member left garbage in it (GCC 12, benchmark 1.7.1).
    benchmark::DoNotOptimize(r.cores.data());
  }
  state.counters["sim_latency_us"] = r.latency_us;
  state.counters["hfu"] = r.hfu;
  state.counters["vs_default"] = default_us / r.latency_us;
}

/** Around NKI's 16 x 2 x 8: tiles_m in {4, 8, 16, 32}, tiles_n in {1, 2, 4}, tiles_k in {4, 8, 16}. */
const bool matmul_registered = [] {
  for (std::int64_t tm : {4, 8, 16, 32})
    for (std::int64_t tn : {1, 2, 4})
      for (std::int64_t tk : {4, 8, 16}) {
        benchmark::RegisterBenchmark(("matmul_block_sweep/tiles_m:" + std::to_string(tm) + "/tiles_n:" +
                                      std::to_string(tn) + "/tiles_k:" + std::to_string(tk))
                                         .c_str(),
                                     BM_matmul_block_sweep, tm, tn, tk)
            ->Unit(benchmark::kMillisecond)
            ->Iterations(2);
      }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
