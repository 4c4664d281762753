/**
 * \file Google Benchmark suite: the compile cache for tensor_add_nc2 ([512, 2048] bf16,
 * grid spmd_dim(2, nc(2)), 4), and SPMD against MPMD on 2, 8 and 64 simulated cores.
 *
 *   cold_compile          an empty cache directory: lower, compile, link, load (counter: compiles)
 *   in_process_hit        the same kernel again in the same process (memo)
 *   on_disk_hit           memo dropped, as in a new process: read and check the entry, dlopen it
 *   spmd_vs_mpmd/N        nki::compile of tensor_add on N cores (grid nc(N)) into an empty cache;
 *                         counters: artifacts compiled
 *   matmul_unroll/F       cold compile of matmul [128, 128]^T @ [128, 2048] (outermost loop of 2
 *                         iterations) with layer_unroll_factor F: 1 (rolled, the baseline) or 2
 * Every case checks once that the artifact computes a + b before timing.
 */
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <filesystem>
#include <random>
#include <string>

#include "nki/compile.h"
#include "nki/compile_cache.h"
#include "nki/kernels.h"
#include "nki/nki.h"

namespace nl = nki::language;
namespace fs = std::filesystem;

namespace {

/** A fresh cache directory per benchmark run, removed at the end. */
struct ScratchCache {
  fs::path dir;
  ScratchCache() {
    std::random_device rd;
    dir = fs::temp_directory_path() / ("nki-bench-cache-" + std::to_string(rd()));
    fs::create_directories(dir);
    nki::cache::set_directory(dir);
    nki::cache::clear();
  }
  ~ScratchCache() {
    nki::cache::clear();
    nki::cache::set_directory(std::nullopt);
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

const std::vector<nki::Shape> kShapes{{512, 2048}, {512, 2048}};
const std::vector<nki::DType> kDtypes{nki::DType::bf16, nki::DType::bf16};

nki::BoundLaunch nc2_launch() { return nki::kernels::tensor_add()[nl::spmd_dim(2, nl::nc(2)), 4]; }

/** Runs the launch once and checks c = a + b (bf16 sums of small integers are exact). */
void check_result(benchmark::State& state) {
  std::vector<float> av(512 * 2048), bv(512 * 2048);
  for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(i % 17), bv[i] = static_cast<float>(i % 5);
  auto a = nki::Tensor::from_floats({512, 2048}, nki::DType::bf16, av);
  auto b = nki::Tensor::from_floats({512, 2048}, nki::DType::bf16, bv);
  const auto c = nc2_launch().run({a, b}).outputs[0].to_floats();
  for (std::size_t i = 0; i < c.size(); ++i)
    if (c[i] != av[i] + bv[i]) state.SkipWithError("tensor_add computed a wrong result");
}

void BM_cold_compile(benchmark::State& state) {
  ScratchCache cache;
  check_result(state);
  std::int64_t compiles = 0;
  for (auto _ : state) {
    state.PauseTiming();
    nki::cache::clear();
    state.ResumeTiming();
    compiles += nki::compile(nc2_launch(), kShapes, kDtypes).compiled;
  }
  state.counters["compiles_per_iter"] = static_cast<double>(compiles) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_cold_compile)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_in_process_hit(benchmark::State& state) {
  ScratchCache cache;
  check_result(state);
  for (auto _ : state) benchmark::DoNotOptimize(nki::compile(nc2_launch(), kShapes, kDtypes).reused);
}
BENCHMARK(BM_in_process_hit)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_on_disk_hit(benchmark::State& state) {
  ScratchCache cache;
  check_result(state);
  for (auto _ : state) {
    nki::cache::forget_loaded();  // as a new process: nothing loaded yet
    benchmark::DoNotOptimize(nki::compile(nc2_launch(), kShapes, kDtypes).reused);
  }
}
BENCHMARK(BM_on_disk_hit)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_spmd_vs_mpmd(benchmark::State& state) {
  const int cores = static_cast<int>(state.range(0));
  const bool mpmd = state.range(1) == 1;
  ScratchCache cache;
  const nki::Kernel k = nki::kernels::tensor_add();
  const std::vector<nki::Shape> shapes{{128 * cores, 512}, {128 * cores, 512}};
  nki::CompileOptions o;
  o.mode = mpmd ? nki::CompileMode::mpmd : nki::CompileMode::spmd;
  o.cores = cores;
  int compiled = 0;
  for (auto _ : state) {
    state.PauseTiming();
    nki::cache::clear();
    state.ResumeTiming();
    compiled = nki::compile(k.launch(nki::parse_grid(fmt::format("nc({}),1", cores))), shapes, kDtypes, o).compiled;
  }
  state.counters["artifacts_compiled"] = compiled;
  state.SetLabel(mpmd ? "mpmd" : "spmd");
}
BENCHMARK(BM_spmd_vs_mpmd)
    ->ArgsProduct({{2, 8, 64}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

void BM_matmul_unroll(benchmark::State& state) {
  const int factor = static_cast<int>(state.range(0));
  ScratchCache cache;
  const nki::Kernel& k = nki::kernels::matmul_fully_optimized();
  const std::vector<nki::Shape> shapes{{128, 128}, {128, 2048}};
  {  // the unrolled artifact computes the interpreter's bytes
    std::vector<float> lv(128 * 128), rv(128 * 2048);
    for (std::size_t i = 0; i < lv.size(); ++i) lv[i] = static_cast<float>(i % 7) - 3.0f;
    for (std::size_t i = 0; i < rv.size(); ++i) rv[i] = static_cast<float>(i % 11) - 5.0f;
    const auto l = nki::Tensor::from_floats({128, 128}, nki::DType::fp32, lv);
    const auto r = nki::Tensor::from_floats({128, 2048}, nki::DType::fp32, rv);
    nki::LaunchOptions o;
    o.layer_unroll_factor = factor;
    const auto got = k.launch(nki::GridSpec{}).with(o).run({l, r}).outputs[0].to_floats();
    o.executor = nki::Executor::reference;
    if (got != k.launch(nki::GridSpec{}).with(o).run({l, r}).outputs[0].to_floats())
      state.SkipWithError("the unrolled matmul differs from the interpreter");
  }
  nki::CompileOptions opt;
  opt.layer_unroll_factor = factor;
  for (auto _ : state) {
    state.PauseTiming();
    nki::cache::clear();
    state.ResumeTiming();
    benchmark::DoNotOptimize(nki::compile(k.launch(nki::GridSpec{}), shapes, {nki::DType::fp32, nki::DType::fp32}, opt).compiled);
  }
}
BENCHMARK(BM_matmul_unroll)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
