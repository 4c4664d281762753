/**
 * \file Google Benchmark suite: all_reduce (sum, fp32) of a 64 MiB buffer per device over 8
 * simulated NeuronCores, against memcpy of the same 64 MiB in the same binary.
 *
 * Benchmarks (see bench/README.md for how to read them):
 *   all_reduce_64MiB_8cores        nki::all_reduce over 8 cores of a trn2 device (one group of all 8)
 *   memcpy_64MiB                   std::memcpy of 64 MiB on the calling thread (the baseline)
 *   all_reduce_over_memcpy         both alternated in one loop; counter `ratio` = all_reduce GB/s / memcpy GB/s
 *   kernel_all_reduce_64MiB_8cores the same all_reduce inside a kernel (nki::collectives::all_reduce), a
 *                                  world launch over a mesh of the 8 cores, compiled (Halide) executor
 *   kernel_all_reduce_over_memcpy  that launch and the memcpy alternated; `ratio` = its GB/s / memcpy's
 *
 * GB/s are decimal and count the 64 MiB buffer once per operation (NCCL's "algorithm
 * bandwidth"); `busbw_GBps` is that times 2(n-1)/n, the bytes each device sends and
 * receives in a ring all-reduce.
 */
#include <benchmark/benchmark.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "alternate.h"
#include "nki/collectives.h"
#include "nki/nki.h"
#include "nki/tensor.h"
#include "nki/world_launch.h"

namespace {

constexpr int kCores = 8;
constexpr std::int64_t kBytes = std::int64_t{64} << 20;  // per device
constexpr std::int64_t kElements = kBytes / 4;           // fp32

/** splitmix64, for inputs that look random and are reproducible. */
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct Inputs {
  nki::sim::Device device{"trn2", kCores};
  std::vector<nki::Tensor> buffers;
  std::string error;  ///< empty when all_reduce matched the host reference

  Inputs() {
    for (int d = 0; d < kCores; ++d) {
      buffers.emplace_back(nki::Shape{kElements}, nki::DType::fp32, device);
      auto* p = reinterpret_cast<float*>(buffers.back().data());
      for (std::int64_t i = 0; i < kElements; ++i) {
        const std::uint64_t r = mix(static_cast<std::uint64_t>(d) << 40 | static_cast<std::uint64_t>(i));
        p[i] = static_cast<float>(static_cast<std::int64_t>(r % 2000001) - 1000000) * 1e-3f;
      }
    }
    error = check();
  }

  /** One all_reduce against the host reference: fp32 sum in device order, bit for bit. */
  std::string check() const {
    const std::vector<nki::Tensor> out = nki::all_reduce(buffers, nki::ReduceOp::sum);
    std::vector<const float*> in;
    for (const nki::Tensor& b : buffers) in.push_back(reinterpret_cast<const float*>(b.data()));
    for (std::int64_t i = 0; i < kElements; ++i) {
      float want = in[0][i];
      for (int d = 1; d < kCores; ++d) want += in[static_cast<std::size_t>(d)][i];
      for (int d = 0; d < kCores; ++d) {
        const float got = reinterpret_cast<const float*>(out[static_cast<std::size_t>(d)].data())[i];
        if (std::bit_cast<std::uint32_t>(got) != std::bit_cast<std::uint32_t>(want)) {
          return "all_reduce: device " + std::to_string(d) + " element " + std::to_string(i) + " is " +
                 std::to_string(got) + ", the host reference " + std::to_string(want);
        }
      }
    }
    return {};
  }
};

Inputs& inputs() {
  static Inputs in;
  return in;
}

/** Source and destination of the memcpy baseline, written once so their pages exist. */
struct CopyBuffers {
  std::unique_ptr<std::byte[]> src{new std::byte[kBytes]}, dst{new std::byte[kBytes]};
  CopyBuffers() {
    std::memset(src.get(), 1, kBytes);
    std::memset(dst.get(), 0, kBytes);
  }
};

CopyBuffers& copy_buffers() {
  static CopyBuffers b;
  return b;
}

void all_reduce_once(const Inputs& in) {
  std::vector<nki::Tensor> out = nki::all_reduce(in.buffers, nki::ReduceOp::sum);
  benchmark::DoNotOptimize(out.front().data());
}  // the outputs go back to the HBM free list inside the timed span

void report(benchmark::State& state) {
  state.counters["GBps"] = benchmark::Counter(static_cast<double>(kBytes), benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::OneK::kIs1000);
}

void BM_all_reduce_64MiB_8cores(benchmark::State& state) {
  const Inputs& in = inputs();
  if (!in.error.empty()) {
    state.SkipWithError(in.error.c_str());
    return;
  }
  for (auto _ : state) all_reduce_once(in);
  report(state);
  state.counters["busbw_GBps"] = benchmark::Counter(static_cast<double>(kBytes) * 2 * (kCores - 1) / kCores,
                                                    benchmark::Counter::kIsIterationInvariantRate,
                                                    benchmark::Counter::OneK::kIs1000);
}

void BM_memcpy_64MiB(benchmark::State& state) {
  CopyBuffers& b = copy_buffers();
  for (auto _ : state) {
    std::memcpy(b.dst.get(), b.src.get(), kBytes);
    benchmark::ClobberMemory();
  }
  report(state);
}

/** Both alternated (order flipped each iteration), timed apart: counters all_reduce_GBps, memcpy_GBps, ratio. */
void BM_all_reduce_over_memcpy(benchmark::State& state) {
  const Inputs& in = inputs();
  if (!in.error.empty()) {
    state.SkipWithError(in.error.c_str());
    return;
  }
  CopyBuffers& b = copy_buffers();
  using clock = std::chrono::steady_clock;
  double reduce_s = 0, copy_s = 0;
  bool reduce_first = false;
  auto time_reduce = [&] {
    const auto t0 = clock::now();
    all_reduce_once(in);
    reduce_s += std::chrono::duration<double>(clock::now() - t0).count();
  };
  auto time_copy = [&] {
    const auto t0 = clock::now();
    std::memcpy(b.dst.get(), b.src.get(), kBytes);
    benchmark::ClobberMemory();
    copy_s += std::chrono::duration<double>(clock::now() - t0).count();
  };
  for (auto _ : state) {
    reduce_first = !reduce_first;
    if (reduce_first) {
      time_reduce();
      time_copy();
    } else {
      time_copy();
      time_reduce();
    }
  }
  const double bytes = static_cast<double>(state.iterations()) * static_cast<double>(kBytes);
  state.counters["all_reduce_GBps"] = bytes / reduce_s / 1e9;
  state.counters["memcpy_GBps"] = bytes / copy_s / 1e9;
  state.counters["ratio"] = copy_s / reduce_s;
}

/** The buffers as one sharded tensor over a mesh of the 8 cores, and a kernel that all-reduces it. */
struct KernelAllReduce {
  nki::Mesh mesh = nki::Mesh::iota({kCores}, {"x"});
  nki::PartitionSpec spec = nki::PartitionSpec::parse("('x',)");
  nki::ShardedTensor x;
  nki::Kernel kernel = nki::jit("all_reduce_64MiB", [](nki::language::tensor t) {
    auto out = nki::language::ndarray(t.shape(), t.dtype(), nki::language::shared_hbm, "out");
    nki::collectives::all_reduce({t}, {out}, {}, nki::language::add);
    return out;
  });
  nki::WorldLaunch launch{kernel.launch({}), mesh, {{spec}}};
  std::string error;

  KernelAllReduce()
      : x(nki::ShardedTensor::from_local_shards({kCores * kElements}, nki::DType::fp32, mesh, spec, 0, inputs().buffers)) {
    // The launch's result must be the host collective's, bit for bit (which Inputs checked against the host).
    const std::vector<nki::Tensor> want = nki::all_reduce(inputs().buffers, nki::ReduceOp::sum);
    const nki::WorldResult r = launch.run({x});
    for (int d = 0; d < kCores && error.empty(); ++d) {
      if (std::memcmp(r.outputs[0].shard(d).data(), want[static_cast<std::size_t>(d)].data(), kBytes) != 0)
        error = "the kernel's all_reduce differs from nki::all_reduce on device " + std::to_string(d);
    }
  }
  void once() const { benchmark::DoNotOptimize(launch.run({x}).outputs.front().shards().front().data()); }
};

KernelAllReduce& kernel_all_reduce() {
  static KernelAllReduce k;
  return k;
}

void BM_kernel_all_reduce_64MiB_8cores(benchmark::State& state) {
  const KernelAllReduce& k = kernel_all_reduce();
  if (!inputs().error.empty() || !k.error.empty()) {
    state.SkipWithError((inputs().error + k.error).c_str());
    return;
  }
  for (auto _ : state) k.once();
  report(state);
}

void BM_kernel_all_reduce_over_memcpy(benchmark::State& state) {
  const KernelAllReduce& k = kernel_all_reduce();
  if (!inputs().error.empty() || !k.error.empty()) {
    state.SkipWithError((inputs().error + k.error).c_str());
    return;
  }
  CopyBuffers& b = copy_buffers();
  nki_bench::alternate(state, [&] { k.once(); }, [&] {
    std::memcpy(b.dst.get(), b.src.get(), kBytes);
    benchmark::ClobberMemory();
  });
}

}  // namespace

BENCHMARK(BM_kernel_all_reduce_64MiB_8cores)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_kernel_all_reduce_over_memcpy)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_all_reduce_64MiB_8cores)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_memcpy_64MiB)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_all_reduce_over_memcpy)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);

BENCHMARK_MAIN();
