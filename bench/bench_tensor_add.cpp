/**
 * \file Google Benchmark suite: tensor_add launched on simulated NeuronCores against a
 * plain C++ STREAM-style bf16 add, and the per-instance cost of dispatching a grid.
 *
 * Benchmarks (see bench/README.md for how to read them):
 *   tensor_add_nc2_launch           the full launch tensor_add()[spmd_dim(32, nc(2)), 16].run({a, b})
 *   stream_bf16_add_2threads        c = a + b in plain C++, two std::threads, half the rows each
 *   launch_over_stream              both of the above alternated in one loop; counter `ratio`
 *   plain_bf16_add_persistent       the bf16 add as torch computes it, on two threads started once
 *   stream_fp32_add_persistent      STREAM's fp32 add on the same two persistent threads
 *   launch_over_baselines           the launch and both of those alternated; `ratio` against the stronger
 *   tensor_add_nc1_launch           the launch on one core, grid [64, 16] (context: core scaling)
 *   stream_bf16_add_1thread         the baseline on the calling thread alone (context for nc1)
 *   stream_bf16_add_2threads_tiles  the baseline's loop in the launch's [128, 512] tile order
 *   dispatch_tiny_add_grid_64x64_*  a [1,1]-tile fp32 add on 4096 instances: time per instance (nc1; nc2
 *                                   alternating rows between the cores, nc2_halves a half each)
 *   dispatch_tiny_add_grid_1x1      one instance: the fixed cost of a launch
 *   dispatch_tiny_add_grid_1x2_nc2  one instance per core: the fixed cost of a two-core launch. What an
 *                                   instance adds is (64x64 time - this) / 4094 (bench/README.md)
 *   dispatch_per_instance_nc2_over_nc1  1x1, 64x64, 1x2_nc2 and 64x64 nc2 in one loop: what an instance adds
 *                                   on each core count, its launch's fixed cost taken out; `ratio` one's / two's
 *   dispatch_tiny_add_nc2_over_nc1  the 64x64 grid on two cores and on one, alternated: `ratio` = one
 *                                   core's time / two cores' (>= 1: two cores no dearer per instance);
 *                                   threads:0 as launched by default, threads:1 the cores always on threads
 *   place_instances_64x64_*         nki::place_instances alone for the 4096-instance grids
 */
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "alternate.h"
#include "bf16_add_baseline.h"
#include "bf16_add_rows.h"
#include "check_once.h"
#include "persistent_threads.h"
#include "nki/placement.h"
#include "nki/dtype.h"
#include "nki/kernels.h"
#include "nki/nki.h"
#include "nki/schedule.h"

namespace nl = nki::language;

namespace {

// ---------------------------------------------------------------------------------------
// Shared inputs of the bf16 add benchmarks (created once per process)
// ---------------------------------------------------------------------------------------

constexpr std::int64_t kRows = 8192;
constexpr std::int64_t kCols = 8192;
constexpr std::int64_t kElements = kRows * kCols;
/// Bytes one add moves: read a, read b, write c, 2 bytes each.
constexpr std::int64_t kBytesPerAdd = 3 * kElements * 2;

struct AddInputs {
  nki::Tensor a{{kRows, kCols}, nl::bfloat16};  // in the default device's HBM
  nki::Tensor b{{kRows, kCols}, nl::bfloat16};
  std::vector<std::uint16_t> expected;          // reference_add(a, b)

  AddInputs() : expected(static_cast<std::size_t>(kElements)) {
    std::span<std::uint16_t> pa = a.bits16(), pb = b.bits16();
    for (std::int64_t i = 0; i < kElements; ++i) {
      pa[i] = nki_bench::random_bf16(1, i);
      pb[i] = nki_bench::random_bf16(2, i);
      expected[i] = nki_bench::reference_add(pa[i], pb[i]);
    }
  }
};

AddInputs& add_inputs() {
  static AddInputs inputs;
  return inputs;
}

/** Empty when `got` matches the host reference bit for bit, else a description of the first mismatch. */
std::string compare_bits(std::span<const std::uint16_t> got, const std::vector<std::uint16_t>& want) {
  if (got.size() != want.size()) return "output has " + std::to_string(got.size()) + " elements";
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) {
      char msg[160];
      AddInputs& in = add_inputs();
      std::snprintf(msg, sizeof msg, "element %zu (row %zu, col %zu): 0x%04x + 0x%04x gave 0x%04x, want 0x%04x", i,
                    i / static_cast<std::size_t>(kCols), i % static_cast<std::size_t>(kCols), in.a.bits16()[i],
                    in.b.bits16()[i], got[i], want[i]);
      return msg;
    }
  }
  return {};
}

// ---------------------------------------------------------------------------------------
// The two sides of the comparison
// ---------------------------------------------------------------------------------------

/** tensor_add over 8192x8192 on the default device; nc2 selects the tutorial's two-core grid. */
nki::BoundLaunch tensor_add_launch(bool nc2) {
  const nki::Kernel& k = nki::kernels::tensor_add();
  return nc2 ? k[nl::spmd_dim(kRows / 256, nl::nc(2)), kCols / 512] : k[kRows / 128, kCols / 512];
}

/** Launches once and checks the output bits; returns an error message, empty when right. */
std::string check_launch(const nki::BoundLaunch& launch) {
  AddInputs& in = add_inputs();
  nki::LaunchResult r = launch.run({in.a, in.b});
  if (r.outputs.size() != 1) return "the launch returned " + std::to_string(r.outputs.size()) + " outputs";
  const std::string diff = compare_bits(r.outputs[0].bits16(), in.expected);
  return diff.empty() ? diff : "tensor_add output differs from the host reference at " + diff;
}

/** A 64-byte aligned buffer of n Ts (as the simulated HBM hands out), zero-filled so its pages exist. */
template <class T = std::uint16_t>
struct HostBuffer {
  std::unique_ptr<T, decltype(&std::free)> p{nullptr, &std::free};
  explicit HostBuffer(std::int64_t n) {
    p.reset(static_cast<T*>(std::aligned_alloc(64, static_cast<std::size_t>(n) * sizeof(T))));
    if (!p) throw std::bad_alloc();
    std::memset(p.get(), 0, static_cast<std::size_t>(n) * sizeof(T));
  }
  T* get() const { return p.get(); }
};

/** The STREAM-style baseline over the whole 8192x8192 add: two std::threads (threads == 1: the caller adds all). */
void stream_bf16_add(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* c, int threads = 2) {
  nki_bench::stream_bf16_add(a, b, c, static_cast<std::size_t>(kElements), threads);
}

/**
 * The baseline's loop in the launch's access pattern: [128, 512] tiles, thread t taking the
 * partition tiles the nc(2) grid gives core t (pid0 = 2 i + t), each in row-major pid order.
 * Plain C++ with no runtime in between: the cost of the tile shape alone.
 */
void stream_bf16_add_tiles(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* c) {
  auto core = [=](std::int64_t t) {
    for (std::int64_t p0 = t; p0 < kRows / 128; p0 += 2)
      for (std::int64_t p1 = 0; p1 < kCols / 512; ++p1)
        for (std::int64_t r = 0; r < 128; ++r) {
          const std::int64_t at = (p0 * 128 + r) * kCols + p1 * 512;
          nki_bench::bf16_add_rows(a + at, b + at, c + at, 512);
        }
  };
  std::thread t0(core, 0), t1(core, 1);
  t0.join();
  t1.join();
}

/** The baseline's output buffer, preallocated once, and a check of one run against the reference. */
struct StreamSide {
  HostBuffer<> c{kElements};
  std::string check(int threads = 2) {
    AddInputs& in = add_inputs();
    std::memset(c.get(), 0xff, static_cast<std::size_t>(kElements) * 2);  // stale output cannot pass
    run(threads);
    const std::string diff = compare_bits({c.get(), static_cast<std::size_t>(kElements)}, in.expected);
    return diff.empty() ? diff : "the baseline differs from the host reference at " + diff;
  }
  /** threads: 1 or 2 over halves of the rows; 0: two threads over [128, 512] tiles. */
  void run(int threads = 2) {
    AddInputs& in = add_inputs();
    if (threads == 0) {
      stream_bf16_add_tiles(in.a.bits16().data(), in.b.bits16().data(), c.get());
    } else {
      stream_bf16_add(in.a.bits16().data(), in.b.bits16().data(), c.get(), threads);
    }
  }
};

StreamSide& stream_side() {
  static StreamSide side;
  return side;
}

/**
 * The fair baselines: threads started once (not per iteration) and kept between runs, each of
 * the two adding a contiguous half. `bf16` is the add as torch computes it (bf16_add_rows_torch,
 * the same bits as the project's); `fp32` is STREAM's add kernel over 8192x8192 fp32 arrays.
 */
struct PersistentSide {
  nki_bench::PersistentThreads threads{2};
  HostBuffer<> c{kElements};
  HostBuffer<float> a32{kElements}, b32{kElements}, c32{kElements};

  PersistentSide() {
    for (std::int64_t i = 0; i < kElements; ++i) {
      a32.get()[i] = static_cast<float>(nki_bench::mix(5 * kElements + i) % 2001) / 64.0f - 15.0f;
      b32.get()[i] = static_cast<float>(nki_bench::mix(6 * kElements + i) % 2001) / 64.0f - 15.0f;
    }
  }
  /** out = a + b by `rows`, each persistent thread adding one contiguous half. */
  template <class T>
  void add_in_halves(const T* a, const T* b, T* out, void (*rows)(const T*, const T*, T*, std::size_t)) {
    threads.run([=](int t) {
      const std::int64_t begin = kElements / 2 * t;
      rows(a + begin, b + begin, out + begin, kElements / 2);
    });
  }
  void run_bf16() {
    AddInputs& in = add_inputs();
    add_in_halves(in.a.bits16().data(), in.b.bits16().data(), c.get(), &nki_bench::bf16_add_rows_torch);
  }
  void run_fp32() { add_in_halves<float>(a32.get(), b32.get(), c32.get(), &nki_bench::fp32_add_rows); }
  std::string check_bf16() {
    std::memset(c.get(), 0xff, static_cast<std::size_t>(kElements) * 2);
    run_bf16();
    const std::string diff = compare_bits({c.get(), static_cast<std::size_t>(kElements)}, add_inputs().expected);
    return diff.empty() ? diff : "the torch-semantics bf16 add differs from the host reference at " + diff;
  }
  std::string check_fp32() {
    std::memset(c32.get(), 0xff, static_cast<std::size_t>(kElements) * 4);
    run_fp32();
    for (std::int64_t i = 0; i < kElements; ++i)
      if (std::bit_cast<std::uint32_t>(c32.get()[i]) != std::bit_cast<std::uint32_t>(a32.get()[i] + b32.get()[i]))
        return "the STREAM fp32 add differs from a + b at element " + std::to_string(i);
    return {};
  }
};

PersistentSide& persistent_side() {
  static PersistentSide side;
  return side;
}

/** Bytes STREAM's fp32 add moves per run: read a, read b, write c, 4 bytes each. */
constexpr std::int64_t kFp32BytesPerAdd = 3 * kElements * 4;

// ---------------------------------------------------------------------------------------
// Benchmarks 1-3: launch, baseline, ratio
// ---------------------------------------------------------------------------------------

/** Bytes processed: bytes_per_second in binary units (G = 2^30), SI_bytes_per_second in decimal (G = 10^9). */
void report_bytes(benchmark::State& state) {
  state.SetBytesProcessed(state.iterations() * kBytesPerAdd);
  state.counters["SI_bytes_per_second"] = benchmark::Counter(
      static_cast<double>(kBytesPerAdd), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::OneK::kIs1000);
}

void launch_benchmark(benchmark::State& state, bool nc2) {
  const nki::BoundLaunch launch = tensor_add_launch(nc2);
  // The first check traces, compiles and checks the bits; the timed loop reuses the artifact
  // and, through the HBM free list, the output block of the previous launch.
  if (const std::string& err = nki_bench::check_once(nc2 ? "launch_nc2" : "launch_nc1", [&] { return check_launch(launch); });
      !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  AddInputs& in = add_inputs();
  const std::vector<nki::Tensor> args{in.a, in.b};
  for (auto _ : state) {
    nki::LaunchResult r = launch.run(args);
    benchmark::DoNotOptimize(r.outputs.front().data());
  }
  report_bytes(state);
}

void BM_tensor_add_nc2_launch(benchmark::State& state) { launch_benchmark(state, true); }
void BM_tensor_add_nc1_launch(benchmark::State& state) { launch_benchmark(state, false); }

void stream_benchmark(benchmark::State& state, int threads) {
  StreamSide& s = stream_side();
  if (const std::string& err = nki_bench::check_once("stream" + std::to_string(threads), [&] { return s.check(threads); });
      !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  for (auto _ : state) {
    s.run(threads);
    benchmark::DoNotOptimize(s.c.get());
    benchmark::ClobberMemory();
  }
  report_bytes(state);
}

void BM_stream_bf16_add_2threads(benchmark::State& state) { stream_benchmark(state, 2); }
void BM_stream_bf16_add_1thread(benchmark::State& state) { stream_benchmark(state, 1); }
void BM_stream_bf16_add_2threads_tiles(benchmark::State& state) { stream_benchmark(state, 0); }

/** Skips the benchmark with the first non-empty check message; true when it did. */
bool skipped_on_error(benchmark::State& state, std::initializer_list<std::string> errors) {
  for (const std::string& err : errors) {
    if (!err.empty()) {
      state.SkipWithError(err.c_str());
      return true;
    }
  }
  return false;
}

/**
 * The launch and the baseline alternated in one loop (order flipped every iteration so
 * neither profits from the other's cache contents), timed separately. Counters:
 * launch_GBps, stream_GBps and ratio = launch GB/s / stream GB/s, from the same seconds.
 */
void BM_launch_over_stream(benchmark::State& state) {
  const nki::BoundLaunch launch = tensor_add_launch(true);
  StreamSide& s = stream_side();
  if (skipped_on_error(state, {nki_bench::check_once("launch_nc2", [&] { return check_launch(launch); }),
                               nki_bench::check_once("stream2", [&] { return s.check(2); })}))
    return;
  AddInputs& in = add_inputs();
  const std::vector<nki::Tensor> args{in.a, in.b};
  using clock = std::chrono::steady_clock;
  double launch_s = 0, stream_s = 0;
  bool launch_first = false;
  auto time_launch = [&] {
    const auto t0 = clock::now();
    {
      nki::LaunchResult r = launch.run(args);
      benchmark::DoNotOptimize(r.outputs.front().data());
    }  // the output goes back to the HBM free list inside the timed span, as in tensor_add_nc2_launch
    launch_s += std::chrono::duration<double>(clock::now() - t0).count();
  };
  auto time_stream = [&] {
    const auto t0 = clock::now();
    s.run();
    benchmark::ClobberMemory();
    stream_s += std::chrono::duration<double>(clock::now() - t0).count();
  };
  for (auto _ : state) {
    launch_first = !launch_first;
    if (launch_first) {
      time_launch();
      time_stream();
    } else {
      time_stream();
      time_launch();
    }
  }
  const double bytes = static_cast<double>(state.iterations()) * static_cast<double>(kBytesPerAdd);
  state.counters["launch_GBps"] = bytes / launch_s / 1e9;
  state.counters["stream_GBps"] = bytes / stream_s / 1e9;
  state.counters["ratio"] = stream_s / launch_s;
}

/** A baseline on the persistent threads: checked once, then `run` timed; `bytes` moved per run. */
void persistent_benchmark(benchmark::State& state, const std::string& name, std::string (PersistentSide::*check)(),
                          void (PersistentSide::*run)(), std::int64_t bytes) {
  PersistentSide& s = persistent_side();
  if (const std::string& err = nki_bench::check_once(name, [&] { return (s.*check)(); }); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  for (auto _ : state) {
    (s.*run)();
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["SI_bytes_per_second"] = benchmark::Counter(
      static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::OneK::kIs1000);
}

/** The plain bf16 add on persistent threads, torch's semantics. */
void BM_plain_bf16_add_persistent(benchmark::State& state) {
  persistent_benchmark(state, "plain_bf16", &PersistentSide::check_bf16, &PersistentSide::run_bf16, kBytesPerAdd);
}

/** STREAM's fp32 add on persistent threads; its bytes are 3 x 4 per element. */
void BM_stream_fp32_add_persistent(benchmark::State& state) {
  persistent_benchmark(state, "stream_fp32", &PersistentSide::check_fp32, &PersistentSide::run_fp32, kFp32BytesPerAdd);
}

/**
 * The launch and both fair baselines alternated in one loop, the one that goes first rotating
 * every iteration, each timed on its own. Counters in decimal GB/s: launch_GBps, bf16_GBps (plain
 * bf16 add), fp32_GBps (STREAM add, its own bytes); ratio_bf16 and ratio_fp32 the launch's GB/s
 * over each; `ratio` over the stronger of the two.
 */
void BM_launch_over_baselines(benchmark::State& state) {
  const nki::BoundLaunch launch = tensor_add_launch(true);
  PersistentSide& s = persistent_side();
  if (skipped_on_error(state, {nki_bench::check_once("launch_nc2", [&] { return check_launch(launch); }),
                               nki_bench::check_once("plain_bf16", [&] { return s.check_bf16(); }),
                               nki_bench::check_once("stream_fp32", [&] { return s.check_fp32(); })}))
    return;
  AddInputs& in = add_inputs();
  const std::vector<nki::Tensor> args{in.a, in.b};
  using clock = std::chrono::steady_clock;
  double seconds[3] = {0, 0, 0};
  const std::function<void()> sides[3] = {[&] {
                                            nki::LaunchResult r = launch.run(args);
                                            benchmark::DoNotOptimize(r.outputs.front().data());
                                          },
                                          [&] { s.run_bf16(); }, [&] { s.run_fp32(); }};
  int first = 0;
  for (auto _ : state) {
    for (int k = 0; k < 3; ++k) {
      const int i = (first + k) % 3;
      const auto t0 = clock::now();
      sides[i]();
      benchmark::ClobberMemory();
      seconds[i] += std::chrono::duration<double>(clock::now() - t0).count();
    }
    first = (first + 1) % 3;
  }
  const double n = static_cast<double>(state.iterations());
  const double launch_gbps = n * static_cast<double>(kBytesPerAdd) / seconds[0] / 1e9;
  const double bf16 = n * static_cast<double>(kBytesPerAdd) / seconds[1] / 1e9;
  const double fp32 = n * static_cast<double>(kFp32BytesPerAdd) / seconds[2] / 1e9;
  state.counters["launch_GBps"] = launch_gbps;
  state.counters["bf16_GBps"] = bf16;
  state.counters["fp32_GBps"] = fp32;
  state.counters["ratio_bf16"] = launch_gbps / bf16;
  state.counters["ratio_fp32"] = launch_gbps / fp32;
  state.counters["ratio"] = launch_gbps / std::max(bf16, fp32);
}

// ---------------------------------------------------------------------------------------
// Benchmark 4: dispatch cost per instance
// ---------------------------------------------------------------------------------------

constexpr std::int64_t kGridX = 64, kGridY = 64;  // 4096 instances

/** Each instance adds one [1, 1] fp32 tile: element (program_id(0), program_id(1)). */
const nki::Kernel& tiny_add() {
  static const nki::Kernel kernel = nki::jit(
      "tiny_add",
      [](nl::tensor a, nl::tensor b) {
        auto c = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto ix = nl::program_id(0) + nl::arange(1)[nl::_, nl::newaxis];  // (1, 1)
        auto iy = nl::program_id(1) + nl::arange(1)[nl::newaxis, nl::_];  // (1, 1)
        nl::store(c[ix, iy], nl::load(a[ix, iy]) + nl::load(b[ix, iy]));
        return c;
      },
      {"a", "b"});
  return kernel;
}

struct TinyInputs {
  std::vector<float> a_host, b_host;
  nki::Tensor a, b;
  TinyInputs()
      : a_host(make(3)), b_host(make(4)),
        a(nki::Tensor::from_floats({kGridX, kGridY}, nl::float32, a_host)),
        b(nki::Tensor::from_floats({kGridX, kGridY}, nl::float32, b_host)) {}
  static std::vector<float> make(std::uint64_t seed) {
    std::vector<float> v(static_cast<std::size_t>(kGridX * kGridY));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(nki_bench::mix(seed * 7919 + i) % 2001) / 64.0f - 15.0f;
    return v;
  }
};

const TinyInputs& tiny_inputs() {
  static const TinyInputs in;
  return in;
}

/**
 * `launch` of tiny_add run once per grid and process (it traces and compiles) and compared with
 * a + b bit for bit: the error, or empty.
 */
const std::string& check_tiny_add(const nki::BoundLaunch& launch) {
  const TinyInputs& in = tiny_inputs();
  return nki_bench::check_once("tiny_add" + launch.grid().str(), [&]() -> std::string {
    nki::LaunchResult r = launch.run({in.a, in.b});
    const std::int64_t n = r.grid.instances();
    const std::vector<float> got = r.outputs.front().to_floats();
    for (std::int64_t i = 0; i < n; ++i) {
      // grid [1, 1] only writes element (0, 0); the 64x64 grids write every element.
      if (std::bit_cast<std::uint32_t>(got[i]) != std::bit_cast<std::uint32_t>(in.a_host[i] + in.b_host[i]))
        return "tiny_add output differs from a + b at element " + std::to_string(i);
    }
    return {};
  });
}

void dispatch_benchmark(benchmark::State& state, const nki::BoundLaunch& launch) {
  const std::vector<nki::Tensor> args{tiny_inputs().a, tiny_inputs().b};
  if (const std::string& err = check_tiny_add(launch); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  const std::int64_t instances = launch.grid().instances();
  for (auto _ : state) {
    nki::LaunchResult r = launch.run(args);
    benchmark::DoNotOptimize(r.outputs.front().data());
  }
  // Seconds per instance (printed with an SI prefix: "1.5u" is 1.5 us).
  state.counters["time_per_instance"] = benchmark::Counter(
      static_cast<double>(instances), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["instances"] = static_cast<double>(instances);
}

void BM_dispatch_tiny_add_grid_64x64_nc1(benchmark::State& state) {
  dispatch_benchmark(state, tiny_add()[kGridX, kGridY]);
}
void BM_dispatch_tiny_add_grid_64x64_nc2(benchmark::State& state) {
  dispatch_benchmark(state, tiny_add()[nl::spmd_dim(kGridX / 2, nl::nc(2)), kGridY]);
}
/** The same split in halves: NC0 takes rows 0-31, NC1 rows 32-63 (the one above alternates rows). */
void BM_dispatch_tiny_add_grid_64x64_nc2_halves(benchmark::State& state) {
  dispatch_benchmark(state, tiny_add()[nl::spmd_dim(nl::nc(2), kGridX / 2), kGridY]);
}
/**
 * The 64x64 grid on two cores (rows alternating) and on one, alternated in one loop: `ratio` = one
 * core's time / two cores' time, so >= 1 when two cores cost no more per instance than one.
 * Argument threads:0 runs the cores as a launch does by default (CoreThreads::automatic: these
 * cores are short, so one after the other on the calling thread); threads:1 always on threads.
 */
void BM_dispatch_tiny_add_nc2_over_nc1(benchmark::State& state) {
  const std::vector<nki::Tensor> args{tiny_inputs().a, tiny_inputs().b};
  nki::LaunchOptions options;
  options.core_threads = state.range(0) != 0 ? nki::CoreThreads::threads : nki::CoreThreads::automatic;
  const nki::BoundLaunch nc2 = tiny_add()[nl::spmd_dim(kGridX / 2, nl::nc(2)), kGridY].with(options);
  const nki::BoundLaunch nc1 = tiny_add()[kGridX, kGridY];
  for (const nki::BoundLaunch* l : {&nc2, &nc1}) {
    if (const std::string& err = check_tiny_add(*l); !err.empty()) {
      state.SkipWithError(err.c_str());
      return;
    }
  }
  nki_bench::alternate(state, [&] { benchmark::DoNotOptimize(nc2.run(args).outputs.front().data()); },
                       [&] { benchmark::DoNotOptimize(nc1.run(args).outputs.front().data()); });
}
/** Placement alone (nki::place_instances, run serially by every launch): its share of the dispatch cost. */
void place_benchmark(benchmark::State& state, const nki::GridSpec& grid) {
  for (auto _ : state) {
    std::vector<nki::CoreSchedule> cores = nki::place_instances(grid, 2);
    benchmark::DoNotOptimize(cores.data());
  }
  state.counters["time_per_instance"] = benchmark::Counter(
      static_cast<double>(grid.instances()), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
void BM_place_instances_64x64_nc1(benchmark::State& state) {
  place_benchmark(state, nki::GridSpec{{nki::GridAxis(kGridX), nki::GridAxis(kGridY)}});
}
void BM_place_instances_64x64_nc2(benchmark::State& state) {
  place_benchmark(state, nki::GridSpec{{nl::spmd_dim(kGridX / 2, nl::nc(2)), nki::GridAxis(kGridY)}});
}

/** One instance: the fixed cost of a launch, to separate it from the per-instance cost. */
void BM_dispatch_tiny_add_grid_1x1(benchmark::State& state) { dispatch_benchmark(state, tiny_add()[1, 1]); }
/** One instance on each of two cores: the fixed cost of a two-core launch (the 64x64 nc2 grids pay it too). */
void BM_dispatch_tiny_add_grid_1x2_nc2(benchmark::State& state) {
  dispatch_benchmark(state, tiny_add()[1, nl::spmd_dim(1, nl::nc(2))]);
}

/**
 * What an instance adds on one core and on two, each launch's fixed cost taken out: the four
 * launches (1x1, 64x64, 1x2_nc2, 64x64 nc2 with rows alternating) in one loop, their order
 * rotated by one every iteration so each sees the same machine moment and the same neighbours.
 * Counters (ns): `nc1_instance` = (64x64 - 1x1) / 4095, `nc2_instance` = (64x64 nc2 - 1x2_nc2)
 * / 4094, `nc1_fixed` and `nc2_fixed` the one-instance launches; `ratio` = nc1_instance /
 * nc2_instance, >= 1 when an instance costs no more on two cores than on one.
 */
void BM_dispatch_per_instance_nc2_over_nc1(benchmark::State& state) {
  const std::vector<nki::Tensor> args{tiny_inputs().a, tiny_inputs().b};
  const std::array<nki::BoundLaunch, 4> launches{
      tiny_add()[1, 1], tiny_add()[kGridX, kGridY], tiny_add()[1, nl::spmd_dim(1, nl::nc(2))],
      tiny_add()[nl::spmd_dim(kGridX / 2, nl::nc(2)), kGridY]};
  for (const nki::BoundLaunch& l : launches) {
    if (const std::string& err = check_tiny_add(l); !err.empty()) {
      state.SkipWithError(err.c_str());
      return;
    }
  }
  using clock = std::chrono::steady_clock;
  std::array<double, 4> seconds{};
  std::size_t first = 0;
  for (auto _ : state) {
    for (std::size_t j = 0; j < launches.size(); ++j) {
      const std::size_t i = (first + j) % launches.size();
      const auto t0 = clock::now();
      benchmark::DoNotOptimize(launches[i].run(args).outputs.front().data());
      seconds[i] += std::chrono::duration<double>(clock::now() - t0).count();
    }
    first = (first + 1) % launches.size();
  }
  const double n = static_cast<double>(state.iterations());
  const double instances = static_cast<double>(kGridX * kGridY);
  const double nc1_instance = (seconds[1] - seconds[0]) / n / (instances - 1) * 1e9;
  const double nc2_instance = (seconds[3] - seconds[2]) / n / (instances - 2) * 1e9;
  state.counters["nc1_fixed"] = seconds[0] / n * 1e9;
  state.counters["nc2_fixed"] = seconds[2] / n * 1e9;
  state.counters["nc1_instance"] = nc1_instance;
  state.counters["nc2_instance"] = nc2_instance;
  state.counters["ratio"] = nc1_instance / nc2_instance;
}

}  // namespace

BENCHMARK(BM_tensor_add_nc2_launch)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_stream_bf16_add_2threads)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_launch_over_stream)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_plain_bf16_add_persistent)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_stream_fp32_add_persistent)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_launch_over_baselines)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(3.0);
BENCHMARK(BM_tensor_add_nc1_launch)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_stream_bf16_add_1thread)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_stream_bf16_add_2threads_tiles)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_dispatch_tiny_add_grid_64x64_nc1)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_dispatch_tiny_add_grid_64x64_nc2)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_dispatch_tiny_add_grid_64x64_nc2_halves)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_dispatch_tiny_add_grid_1x1)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_dispatch_tiny_add_grid_1x2_nc2)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_dispatch_per_instance_nc2_over_nc1)->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(2.0);
BENCHMARK(BM_dispatch_tiny_add_nc2_over_nc1)->ArgName("threads")->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK(BM_place_instances_64x64_nc1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_place_instances_64x64_nc2)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
