/**
 * \file Google Benchmark suite, run under mpirun: all_reduce (sum, fp32) of a 64 MiB buffer
 * per rank over every rank (one device each) with the MPI backend, and in the same binary
 * the in-process backend's all_reduce of the same buffers over as many simulated cores of
 * one process (rank 0 runs it while the other ranks sleep).
 *
 *   mpirun --allow-run-as-root --oversubscribe --mca btl self,vader \
 *     --mca btl_vader_single_copy_mechanism none -np 4 ./build/bench/bench_collectives_mpi
 *
 * Benchmarks (rank 0 reports; bench/README.md has the figures):
 *   mpi_all_reduce_64MiB           nki::all_reduce over the ranks (MPI communicator per group)
 *   mpi_native_allreduce_64MiB     Open MPI's own MPI_Allreduce of the same buffers (its reduction
 *                                  order is its own, so not bit-reproducible): the baseline
 *   in_process_all_reduce_64MiB    the in-process backend over ranks-many cores, on rank 0
 *   mpi_kernel_all_reduce_64MiB    nki::collectives::all_reduce inside a kernel, a world launch over a
 *                                  mesh of one rank per process (compiled executor)
 *   mpi_kernel_over_native         that launch and MPI_Allreduce alternated; `ratio` = the launch's GB/s
 *                                  / MPI_Allreduce's
 *
 * Every rank runs the same fixed iteration counts, so their collectives pair up. GB/s are
 * decimal and count the 64 MiB once per operation (NCCL's algorithm bandwidth); busbw_GBps
 * is that times 2(n-1)/n.
 */
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <bit>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "alternate.h"
#include "nki/collectives.h"
#include "nki/communicator.h"
#include "nki/mpi_world.h"
#include "nki/nki.h"
#include "nki/tensor.h"
#include "nki/world_launch.h"

namespace {

constexpr std::int64_t kBytes = std::int64_t{64} << 20;  // per device
constexpr std::int64_t kElements = kBytes / 4;           // fp32

std::uint64_t mix(std::uint64_t x) {  // splitmix64: reproducible, random-looking inputs
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

float value(int device, std::int64_t i) {
  const std::uint64_t r = mix(static_cast<std::uint64_t>(device) << 40 | static_cast<std::uint64_t>(i));
  return static_cast<float>(static_cast<std::int64_t>(r % 2000001) - 1000000) * 1e-3f;
}

nki::Tensor input(int device, const nki::sim::Device& on) {
  nki::Tensor t(nki::Shape{kElements}, nki::DType::fp32, on);
  auto* p = reinterpret_cast<float*>(t.data());
  for (std::int64_t i = 0; i < kElements; ++i) p[i] = value(device, i);
  return t;
}

/** "" when `out` (device `device`'s result) is the fp32 sum over devices 0..n-1 in order, bit for bit. */
std::string check(const nki::Tensor& out, int devices) {
  const auto* got = reinterpret_cast<const float*>(out.data());
  for (std::int64_t i = 0; i < kElements; ++i) {
    float want = value(0, i);
    for (int d = 1; d < devices; ++d) want += value(d, i);
    if (std::bit_cast<std::uint32_t>(got[i]) != std::bit_cast<std::uint32_t>(want))
      return "element " + std::to_string(i) + " is not the host reference's sum";
  }
  return {};
}

/** Waits for every rank without keeping a CPU busy (the cores are shared with the ranks that work). */
void sleeping_barrier() {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  for (int done = 0; MPI_Test(&request, &done, MPI_STATUS_IGNORE), !done;)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void report(benchmark::State& state, int devices) {
  using C = benchmark::Counter;
  state.counters["GBps"] = C(static_cast<double>(kBytes), C::kIsIterationInvariantRate, C::OneK::kIs1000);
  state.counters["busbw_GBps"] = C(static_cast<double>(kBytes) * 2 * (devices - 1) / devices,
                                   C::kIsIterationInvariantRate, C::OneK::kIs1000);
}

void BM_mpi_all_reduce_64MiB(benchmark::State& state) {
  nki::Communicator& world = nki::communicator();
  static const nki::sim::Device chip("trn2", 1);
  static const std::vector<nki::Tensor> mine{input(world.rank(), chip)};
  // Checked once on every rank; every rank learns whether any rank failed (so all skip alike).
  static const std::string error = [&] {
    std::string failed;
    for (const std::string& e : world.all_gather_text(check(nki::all_reduce(mine, nki::ReduceOp::sum).front(), world.ranks())))
      if (!e.empty()) failed = e;
    return failed;
  }();
  if (!error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(nki::all_reduce(mine, nki::ReduceOp::sum).front().data());
  report(state, world.ranks());
}

void BM_mpi_native_allreduce_64MiB(benchmark::State& state) {
  nki::Communicator& world = nki::communicator();
  static const nki::sim::Device chip("trn2", 1);
  static const nki::Tensor in = input(world.rank(), chip);
  for (auto _ : state) {
    nki::Tensor out(nki::Shape{kElements}, nki::DType::fp32, chip);  // as nki::all_reduce allocates its output
    MPI_Allreduce(in.data(), out.data(), static_cast<int>(kElements), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    benchmark::DoNotOptimize(out.data());
  }
  report(state, world.ranks());
}

void BM_in_process_all_reduce_64MiB(benchmark::State& state) {
  const int devices = nki::communicator().ranks();
  static const nki::sim::Device chip("trn2", devices);
  static const std::shared_ptr<nki::Communicator> in_process = nki::make_in_process_communicator();
  static const std::vector<nki::Tensor> all = [&] {
    std::vector<nki::Tensor> b;
    for (int d = 0; d < devices; ++d) b.push_back(input(d, chip));
    return b;
  }();
  static const std::string error = check(in_process->all_reduce(all, nki::ReduceOp::sum, {}).back(), devices);
  if (!error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(in_process->all_reduce(all, nki::ReduceOp::sum, {}).front().data());
  report(state, devices);
}

/** This rank's buffer as its shard of a world launch over one rank per process, and a kernel that all-reduces it. */
struct KernelAllReduce {
  nki::sim::Device chip{"trn2", 1};
  nki::Mesh mesh = nki::Mesh::iota({nki::communicator().ranks()}, {"x"});
  nki::PartitionSpec spec = nki::PartitionSpec::parse("('x',)");
  nki::ShardedTensor x = nki::ShardedTensor::from_local_shards({mesh.size() * kElements}, nki::DType::fp32, mesh, spec,
                                                               nki::communicator().rank(), {input(nki::communicator().rank(), chip)});
  nki::Kernel kernel = nki::jit("all_reduce_64MiB", [](nki::language::tensor t) {
    auto out = nki::language::ndarray(t.shape(), t.dtype(), nki::language::shared_hbm, "out");
    nki::collectives::all_reduce({t}, {out}, {}, nki::language::add);
    return out;
  });
  nki::WorldLaunch launch{kernel.launch({}), mesh, {{spec}}};
  std::string error;  ///< every rank's verdict of the first launch, the same on all

  KernelAllReduce() {
    const nki::WorldResult r = launch.run({x});
    for (const std::string& e : nki::communicator().all_gather_text(check(r.outputs[0].shards()[0], mesh.size())))
      if (!e.empty()) error = e;
  }
  void once() const { benchmark::DoNotOptimize(launch.run({x}).outputs.front().shards().front().data()); }
};

KernelAllReduce& kernel_all_reduce() {
  static KernelAllReduce k;
  return k;
}

void BM_mpi_kernel_all_reduce_64MiB(benchmark::State& state) {
  const KernelAllReduce& k = kernel_all_reduce();
  if (!k.error.empty()) {
    state.SkipWithError(k.error.c_str());
    return;
  }
  for (auto _ : state) k.once();
  report(state, nki::communicator().ranks());
}

void BM_mpi_kernel_over_native(benchmark::State& state) {
  const KernelAllReduce& k = kernel_all_reduce();
  if (!k.error.empty()) {
    state.SkipWithError(k.error.c_str());
    return;
  }
  const nki::Tensor& in = k.x.shards()[0];
  nki_bench::alternate(state, [&] { k.once(); }, [&] {
    nki::Tensor out(nki::Shape{kElements}, nki::DType::fp32, k.chip);
    MPI_Allreduce(in.data(), out.data(), static_cast<int>(kElements), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    benchmark::DoNotOptimize(out.data());
  });
}

/** Ranks other than 0 run the MPI benchmark silently. */
class SilentReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace

BENCHMARK(BM_mpi_all_reduce_64MiB)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(5)->Repetitions(5)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_mpi_native_allreduce_64MiB)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(5)
    ->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_mpi_kernel_all_reduce_64MiB)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(5)
    ->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_mpi_kernel_over_native)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(6)
    ->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_in_process_all_reduce_64MiB)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(5)
    ->Repetitions(5)->ReportAggregatesOnly(true);

int main(int argc, char** argv) {
  nki::MpiWorld world(&argc, &argv);
  benchmark::Initialize(&argc, argv);
  SilentReporter silent;
  // Rank 0 runs all three (the MPI ones first, as registered); the others join the MPI ones, then sleep.
  if (world.rank() == 0) benchmark::RunSpecifiedBenchmarks();
  else benchmark::RunSpecifiedBenchmarks(&silent, "mpi_");
  sleeping_barrier();
  benchmark::Shutdown();
  return 0;
}
