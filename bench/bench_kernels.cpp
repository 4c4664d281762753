/**
 * \file Google Benchmark suite: the library's tutorial kernels against host baselines.
 *
 *   matmul_fully_optimized_nc2     bf16 lhsT [2048, 2048] x rhs [2048, 2048], fp32 PSUM accumulation
 *                                  within a K block, bf16 SBUF accumulators across the two K blocks
 *                                  and a bf16 result (NKI's tutorial), grid spmd_dim(1, nc(2)): each
 *                                  simulated core computes half of N.
 *                                  Counter GFLOPs = 2 K M N / time.
 *   openblas_sgemm_2threads        cblas_sgemm on the same shapes in fp32 (lhsT transposed), two
 *                                  OpenBLAS threads. The label names the core OpenBLAS chose and
 *                                  OPENBLAS_CORETYPE as set (or "unset").
 *   fp32_fma_peak_2threads         the ceiling: independent fp32 FMA chains on two threads
 *                                  (bench/fma_peak.cpp), GFLOPs counted as the matmuls count them.
 *   softmax_nc2 / rmsnorm_nc2      [4096, 4096] bf16, grid spmd_dim(1, nc(2)) (half the row tiles
 *                                  per core). Counter GBps = (bytes read + written) / time.
 *   stream_bf16_add_2threads       the STREAM-style baseline (bench/bf16_add_rows.cpp) on the same
 *                                  number of elements, two threads. Counter GBps as above.
 *   matmul_over_openblas           the kernel and sgemm alternated in one loop: counter ratio =
 *                                  kernel GFLOP/s / OpenBLAS GFLOP/s on the same machine moment.
 *   matmul_over_fma_peak           the kernel and the FMA ceiling alternated: ratio = the kernel's
 *                                  share of the fp32 FMA peak at the same machine moment.
 *   softmax_over_stream /          the kernel and the STREAM add alternated: ratio = kernel GB/s /
 *   rmsnorm_over_stream            STREAM GB/s.
 *   matmul_unrolled_over_rolled    the kernel launched with layer_unroll_factor 2 and with 1,
 *                                  alternated: two artifacts of the same code (the kernel's
 *                                  outermost loop runs once, so nothing unrolls), so ratio is this
 *                                  machine's noise floor for an in-process A/B; a lowering
 *                                  experiment switched on only for unroll factor 2 is measured
 *                                  against the committed code in one process (bench/README.md).
 * Each kernel is checked once against its host reference (allclose) before it is timed.
 *
 * OpenBLAS's threads keep spinning after a call (2^28 cycles, ~0.1 s, by default) and take CPU
 * from whatever runs next: in an alternated loop, the kernel (12% slower in matmul_over_openblas on
 * two vCPUs). main() starts the binary again with OPENBLAS_THREAD_TIMEOUT=4 (2^4 cycles: they
 * sleep at once) unless it is set; OpenBLAS reads it as it loads. Its own sgemm time does not suffer.
 */
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "alternate.h"
#include "fma_peak.h"
#include "persistent_threads.h"
#include "bf16_add_baseline.h"
#include "nki/kernel_references.h"
#include "nki/kernels.h"
#include "nki/nki.h"

extern "C" char* openblas_get_corename();

namespace nl = nki::language;
namespace nk = nki::kernels;
namespace ref = nki::kernels::reference;

namespace {

constexpr std::int64_t kMatmulSize = 2048;
constexpr std::int64_t kRows = 4096, kCols = 4096;

std::vector<float> ramp(std::int64_t n, std::uint32_t seed) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::uint32_t x = seed;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = static_cast<float>(x >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;  // [-1, 1)
  }
  return v;
}

/** Throws when the output is not allclose to the reference: a benchmark never times a wrong kernel. */
void require_close(const nki::Tensor& got, const std::vector<double>& want, ref::Tolerance tol, const char* what) {
  const std::string mismatch = ref::allclose_mismatch(got.to_values(), want, tol);
  if (!mismatch.empty()) throw std::runtime_error(std::string(what) + ": " + mismatch);
}

struct MatmulInputs {
  nki::Tensor lhsT, rhs;
  std::vector<float> lhsT_f32, rhs_f32;  ///< the bf16 values widened, for OpenBLAS
};
const MatmulInputs& matmul_inputs() {
  static const MatmulInputs in = [] {
    const std::int64_t n = kMatmulSize;
    MatmulInputs m{nki::Tensor::from_floats({n, n}, nl::bfloat16, ramp(n * n, 1)),
                   nki::Tensor::from_floats({n, n}, nl::bfloat16, ramp(n * n, 2)), {}, {}};
    m.lhsT_f32 = m.lhsT.to_floats();
    m.rhs_f32 = m.rhs.to_floats();
    return m;
  }();
  return in;
}

/** out = lhsT[k0 : k0 + k]^T x rhs[k0 : k0 + k] in fp32 (the whole product by default). */
void sgemm(const MatmulInputs& in, std::vector<float>& out, std::int64_t k0 = 0, std::int64_t k = kMatmulSize) {
  const int n = static_cast<int>(kMatmulSize);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, n, static_cast<int>(k), 1.0f, in.lhsT_f32.data() + k0 * kMatmulSize,
              n, in.rhs_f32.data() + k0 * kMatmulSize, n, 0.0f, out.data(), n);
}

/**
 * The kernel's rounding points on the host: each K block's fp32 partial product (OpenBLAS on that
 * block's rows) added into a bf16 accumulator, as the kernel's SBUF accumulators do. The summation
 * order inside a block differs from the kernel's, so a sum next to a bf16 rounding boundary may round
 * the other way: once per K block, at most one bf16 ulp of the largest value rounded. Returns the
 * result and that bound.
 */
std::pair<std::vector<double>, double> matmul_with_bf16_accumulators(const MatmulInputs& in, std::int64_t block_k) {
  const int n = static_cast<int>(kMatmulSize);
  const std::size_t elements = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  std::vector<float> acc(elements, 0.0f), partial(elements);
  float largest = 0.0f;
  for (std::int64_t k0 = 0; k0 < kMatmulSize; k0 += block_k) {
    sgemm(in, partial, k0, block_k);
    for (std::size_t i = 0; i < elements; ++i) acc[i] += partial[i];
    acc = nki::Tensor::from_floats({kMatmulSize, kMatmulSize}, nl::bfloat16, acc).to_floats();  // round to bf16
    for (float v : acc) largest = std::max(largest, std::abs(v));
  }
  const double ulp = std::ldexp(1.0, std::ilogb(largest) - 7);  // bf16: 7 stored significand bits
  return {{acc.begin(), acc.end()}, static_cast<double>(kMatmulSize / block_k) * ulp};
}

/** The blocked matmul as every matmul benchmark here launches it: NKI's default blocking, split over two cores. */
struct MatmulLaunch {
  const MatmulInputs& in = matmul_inputs();
  nki::GridSpec grid = nk::matmul_fully_optimized_grid({in.lhsT.shape(), in.rhs.shape()}, nk::MatmulBlocks{}, 2);
  nki::Kernel kernel = nk::matmul_fully_optimized(nk::MatmulBlocks{});

  nki::LaunchResult run(const nki::LaunchOptions& options = {}) const {
    return kernel.launch(grid).with(options).run({in.lhsT, in.rhs});
  }
};

void matmul_fully_optimized_nc2(benchmark::State& state) {
  const MatmulLaunch matmul;
  {  // checked once against the same rounding points on the host (the kernel's result is bf16, as its inputs)
    openblas_set_num_threads(2);
    const auto [want, bound] = matmul_with_bf16_accumulators(matmul.in, nk::MatmulBlocks{}.tiles_k * 128);
    require_close(matmul.run().outputs[0], want, {bound, 0.0}, "matmul_fully_optimized");
  }
  for (auto _ : state) benchmark::DoNotOptimize(matmul.run());
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * kMatmulSize * kMatmulSize * kMatmulSize,
                                                benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
BENCHMARK(matmul_fully_optimized_nc2)->Unit(benchmark::kMillisecond)->UseRealTime();

void openblas_sgemm_2threads(benchmark::State& state) {
  const MatmulInputs& in = matmul_inputs();
  std::vector<float> out(static_cast<std::size_t>(kMatmulSize * kMatmulSize));
  openblas_set_num_threads(2);
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  const char* timeout = std::getenv("OPENBLAS_THREAD_TIMEOUT");
  state.SetLabel(std::string("core ") + openblas_get_corename() + ", OPENBLAS_CORETYPE=" + (coretype ? coretype : "unset") +
                 ", OPENBLAS_THREAD_TIMEOUT=" + (timeout ? timeout : "unset"));
  for (auto _ : state) {
    sgemm(in, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * kMatmulSize * kMatmulSize * kMatmulSize,
                                                benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
BENCHMARK(openblas_sgemm_2threads)->Unit(benchmark::kMillisecond)->UseRealTime();

/**
 * The ceiling: independent fp32 FMA chains on two persistent threads (fma_peak.cpp), GFLOPs as the
 * matmuls count them. The matmuls' share of it is their GFLOPs over this one's.
 */
void fp32_fma_peak_2threads(benchmark::State& state) {
  constexpr std::int64_t kRounds = 20'000'000;
  nki_bench::PersistentThreads threads(2);
  float sink[2] = {0, 0};
  for (auto _ : state) {
    threads.run([&](int t) { sink[t] += nki_bench::fma_chains(kRounds); });
    benchmark::DoNotOptimize(sink);
  }
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * kRounds * nki_bench::kFmaChainFlops,
                                                benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
BENCHMARK(fp32_fma_peak_2threads)->Unit(benchmark::kMillisecond)->UseRealTime();

/** A row-wise kernel on [4096, 4096] bf16 over two cores, checked once; GBps counts its input and output bytes. */
void row_kernel_nc2(benchmark::State& state, const nki::Kernel& k, const std::vector<nki::Tensor>& args,
                    const std::vector<double>& want, const char* what) {
  const nki::GridSpec grid{{nl::spmd_dim(1, nl::nc(2))}};
  require_close(k.launch(grid).run(args).outputs[0], want, {1e-5, 1e-2}, what);
  std::int64_t bytes = kRows * kCols * 2;  // the output
  for (const nki::Tensor& a : args) bytes += static_cast<std::int64_t>(a.bytes());
  for (auto _ : state) benchmark::DoNotOptimize(k.launch(grid).run(args));
  state.counters["GBps"] = benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}

void softmax_nc2(benchmark::State& state) {
  const nki::Tensor x = nki::Tensor::from_floats({kRows, kCols}, nl::bfloat16, ramp(kRows * kCols, 3));
  row_kernel_nc2(state, nk::softmax(), {x}, ref::softmax(x.to_values(), kRows, kCols), "softmax");
}
BENCHMARK(softmax_nc2)->Unit(benchmark::kMillisecond)->UseRealTime();

void rmsnorm_nc2(benchmark::State& state) {
  const nki::Tensor a = nki::Tensor::from_floats({kRows, kCols}, nl::bfloat16, ramp(kRows * kCols, 4));
  const nki::Tensor g = nki::Tensor::from_floats({kCols}, nl::bfloat16, ramp(kCols, 5));
  row_kernel_nc2(state, nk::rmsnorm(), {a, g}, ref::rmsnorm(a.to_values(), g.to_values(), kRows, kCols), "rmsnorm");
}
BENCHMARK(rmsnorm_nc2)->Unit(benchmark::kMillisecond)->UseRealTime();

/** The STREAM-style bf16 add c = a + b (bench/bf16_add_baseline.h), on two threads. */
void stream_add_2threads(const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b, std::vector<std::uint16_t>& c) {
  nki_bench::stream_bf16_add(a.data(), b.data(), c.data(), a.size(), 2);
  benchmark::DoNotOptimize(c.data());
}

void stream_bf16_add_2threads(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(kRows * kCols);
  std::vector<std::uint16_t> a(n, 0x3f80), b(n, 0x4000), c(n);
  for (auto _ : state) stream_add_2threads(a, b, c);
  if (c[0] != 0x4040) throw std::runtime_error("stream_bf16_add_2threads: 1 + 2 != 3");
  state.counters["GBps"] = benchmark::Counter(static_cast<double>(3 * n * 2), benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}
BENCHMARK(stream_bf16_add_2threads)->Unit(benchmark::kMillisecond)->UseRealTime();

void matmul_over_openblas(benchmark::State& state) {
  const MatmulLaunch matmul;
  std::vector<float> out(static_cast<std::size_t>(kMatmulSize * kMatmulSize));
  openblas_set_num_threads(2);
  nki_bench::alternate(
      state, [&] { benchmark::DoNotOptimize(matmul.run()); }, [&] { sgemm(matmul.in, out); });
}
BENCHMARK(matmul_over_openblas)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(6);

/**
 * The kernel and the FMA ceiling (fp32_fma_peak_2threads) alternated in one loop: ratio = the
 * kernel's GFLOP/s as a fraction of the peak's at the same machine moment (the two run apart can
 * meet different moments: the peak moved 374-456 GFLOP/s over a day here).
 */
void matmul_over_fma_peak(benchmark::State& state) {
  const MatmulLaunch matmul;
  constexpr std::int64_t kRounds = 20'000'000;
  nki_bench::PersistentThreads threads(2);
  float sink[2] = {0, 0};
  const double peak_flops = 2.0 * kRounds * nki_bench::kFmaChainFlops;
  const double matmul_flops = 2.0 * kMatmulSize * kMatmulSize * kMatmulSize;
  nki_bench::alternate(
      state, [&] { benchmark::DoNotOptimize(matmul.run()); },
      [&] {
        threads.run([&](int t) { sink[t] += nki_bench::fma_chains(kRounds); });
        benchmark::DoNotOptimize(sink);
      },
      peak_flops / matmul_flops);
}
BENCHMARK(matmul_over_fma_peak)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(6);

void matmul_unrolled_over_rolled(benchmark::State& state) {
  const MatmulLaunch matmul;
  nki::LaunchOptions rolled, unrolled;
  unrolled.layer_unroll_factor = 2;
  nki_bench::alternate(
      state, [&] { benchmark::DoNotOptimize(matmul.run(unrolled)); }, [&] { benchmark::DoNotOptimize(matmul.run(rolled)); });
}
BENCHMARK(matmul_unrolled_over_rolled)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(20);

/** A row kernel against the STREAM add on as many elements: ratio of GB/s (bytes each moves per element). */
void row_kernel_over_stream(benchmark::State& state, const nki::Kernel& k, const std::vector<nki::Tensor>& args) {
  const nki::GridSpec grid{{nl::spmd_dim(1, nl::nc(2))}};
  const std::size_t n = static_cast<std::size_t>(kRows * kCols);
  std::vector<std::uint16_t> a(n, 0x3f80), b(n, 0x4000), c(n);
  std::int64_t kernel_bytes = kRows * kCols * 2;
  for (const nki::Tensor& t : args) kernel_bytes += static_cast<std::int64_t>(t.bytes());
  nki_bench::alternate(state, [&] { benchmark::DoNotOptimize(k.launch(grid).run(args)); }, [&] { stream_add_2threads(a, b, c); },
            static_cast<double>(3 * n * 2) / static_cast<double>(kernel_bytes));
}

void softmax_over_stream(benchmark::State& state) {
  row_kernel_over_stream(state, nk::softmax(), {nki::Tensor::from_floats({kRows, kCols}, nl::bfloat16, ramp(kRows * kCols, 3))});
}
BENCHMARK(softmax_over_stream)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(10);

void rmsnorm_over_stream(benchmark::State& state) {
  row_kernel_over_stream(state, nk::rmsnorm(),
                         {nki::Tensor::from_floats({kRows, kCols}, nl::bfloat16, ramp(kRows * kCols, 4)),
                          nki::Tensor::from_floats({kCols}, nl::bfloat16, ramp(kCols, 5))});
}
BENCHMARK(rmsnorm_over_stream)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(20);

}  // namespace

int main(int argc, char** argv) {
  // See the file comment. If the binary cannot start itself again, it runs with OpenBLAS's
  // default, which the label shows.
  if (std::getenv("OPENBLAS_THREAD_TIMEOUT") == nullptr && ::setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1) == 0) {
    ::execv("/proc/self/exe", argv);
    std::perror("bench_kernels: cannot start itself again with OPENBLAS_THREAD_TIMEOUT=4; OpenBLAS keeps its default");
    ::unsetenv("OPENBLAS_THREAD_TIMEOUT");
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
