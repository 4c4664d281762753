/**
 * \file Tutorial 9: a Megatron-style tensor-parallel MLP over a data=2, tensor=4 mesh of eight
 * NeuronCores, y = gelu(x @ w1) @ w2.
 *
 * Run it alone (one process simulating one trn2 chip of eight cores), or as two or four MPI
 * processes, each simulating its chip's share of the eight ranks:
 *
 *   ./build/tutorials/tutorial_09_tensor_parallel_mlp
 *   mpirun --allow-run-as-root --oversubscribe -np 2 ./build/tutorials/tutorial_09_tensor_parallel_mlp
 *
 * Megatron's split: w1 [H, F] by columns and w2 [F, H] by rows over the `tensor` axis, so each
 * rank computes gelu(x @ w1[:, its columns]) @ w2[its rows, :], a partial sum of y; an
 * all_reduce over `tensor` inside the kernel adds the four partials. x is replicated: every rank
 * sees it whole; the two `data` replicas compute the same y. One compiled artifact serves all
 * eight ranks (SPMD): the shards are plain tensors of the shard shape, the collective's groups
 * come from the mesh when the kernel runs.
 *
 * Each process makes only its own ranks' shards of the weights (from a seeded formula of the
 * global element index, as a real program would read its slice from storage), so no process
 * holds the whole weights for the launch; the check computes the same math on one core from
 * the whole weights, which only the checking code makes.
 */
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <map>
#include <optional>

#include "nki/communicator.h"
#include "nki/kernels.h"
#include "nki/mpi_world.h"
#include "nki/nki.h"
#include "nki/profile.h"
#include "nki/sharding.h"
#include "nki/world_launch.h"
#include "tutorial_check.h"

namespace nl = nki::language;

namespace {

constexpr std::int64_t B = 128, H = 512, F = 2048;  // tokens, model width, hidden width
constexpr int kData = 2, kTensor = 4;

/** A value in [-scale, scale) that depends only on (seed, row, col): every process computes the same. */
float value(std::uint32_t seed, std::int64_t row, std::int64_t col, float scale) {
  std::uint64_t h = (static_cast<std::uint64_t>(seed) << 48) ^ (static_cast<std::uint64_t>(row) << 24) ^ static_cast<std::uint64_t>(col);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return scale * (static_cast<float>(h >> 40) / static_cast<float>(1u << 24) * 2.0f - 1.0f);
}

/** Rows [r0, r0 + rows) and columns [c0, c0 + cols) of a global matrix, in bf16 on `device`. */
nki::Tensor block(const nki::sim::Device& device, std::uint32_t seed, float scale, std::int64_t r0, std::int64_t rows,
                  std::int64_t c0, std::int64_t cols) {
  std::vector<float> v;
  v.reserve(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = r0; r < r0 + rows; ++r)
    for (std::int64_t c = c0; c < c0 + cols; ++c) v.push_back(value(seed, r, c, scale));
  return nki::Tensor::from_floats({rows, cols}, nl::bfloat16, v, device);
}

const float kWScale = 1.0f / std::sqrt(static_cast<float>(H));

}  // namespace

int main(int argc, char** argv) {
  std::optional<nki::MpiWorld> mpi;
  if (nki::MpiWorld::launched_by_mpirun()) mpi.emplace(&argc, &argv);
  nki::Communicator& world = nki::communicator();
  const int processes = world.ranks(), me = world.rank();
  const nki::Mesh mesh = nki::Mesh::iota({kData, kTensor}, {"data", "tensor"});
  if (mesh.size() % processes != 0) {
    fmt::print(stderr, "tutorial 9 runs its 8 ranks on 1, 2, 4 or 8 processes, not {}\n", processes);
    return 2;
  }
  const int local = mesh.size() / processes, first = me * local;
  const nki::sim::Device chip("trn2", local);  // this process's chip: one NeuronCore per local rank
  if (me == 0)
    fmt::print("mesh {} over {} process{}, {} ranks each\n", mesh.str(), processes, processes == 1 ? "" : "es", local);

  // x whole on every rank; w1 by columns (None, 'tensor'), w2 by rows ('tensor', None): only this process's shards.
  const nki::Tensor x = block(chip, 1, 1.0f, 0, B, 0, H);
  const nki::PartitionSpec by_columns = nki::PartitionSpec::parse("(None, 'tensor')");
  const nki::PartitionSpec by_rows = nki::PartitionSpec::parse("('tensor', None)");
  std::vector<nki::Tensor> w1_shards, w2_shards;
  for (int r = first; r < first + local; ++r) {
    const std::int64_t t = mesh.coordinates_of(r)[1];  // the rank's place on the tensor axis
    w1_shards.push_back(block(chip, 2, kWScale, 0, H, t * F / kTensor, F / kTensor));
    w2_shards.push_back(block(chip, 3, kWScale, t * F / kTensor, F / kTensor, 0, H));
  }
  const nki::ShardedTensor w1 =
      nki::ShardedTensor::from_local_shards({H, F}, nl::bfloat16, mesh, by_columns, first, std::move(w1_shards));
  const nki::ShardedTensor w2 =
      nki::ShardedTensor::from_local_shards({F, H}, nl::bfloat16, mesh, by_rows, first, std::move(w2_shards));

  // The kernel on every rank: compiled once (SPMD), run on both executors and twice on Halide.
  const nki::Kernel& tp = nki::kernels::tensor_parallel_mlp();
  auto launch = [&](nki::Executor ex) {
    return nki::WorldLaunch(tp.launch({}).with({.executor = ex}), mesh).run({x, w1, w2});
  };
  const nki::WorldResult first_run = launch(nki::Executor::halide);
  const nki::WorldResult again = launch(nki::Executor::halide);
  const nki::WorldResult reference = launch(nki::Executor::reference);
  if (me == 0) {
    fmt::print("{} ranks, {} artifact{} (compiled {}, reused {})\n", first_run.world_size, first_run.artifact_keys.size(),
               first_run.artifact_keys.size() == 1 ? "" : "s", first_run.compiled, first_run.reused);
  }

  // Each rank's simulated latency on trn2, with the all_reduce's share of it.
  const nki::ProfileReport p = nki::profile_world(tp.launch({}), mesh,
                                                  {{x.shape(), x.dtype()}, {w1.shards()[0].shape(), w1.dtype()},
                                                   {w2.shards()[0].shape(), w2.dtype()}},
                                                  "trn2");
  for (const nki::sim::CoreProfile& c : p.cores) {
    if (c.rank < first || c.rank >= first + local) continue;
    // The all_reduce holds every DMA queue of its core at once: its span, once per instance.
    std::map<std::pair<std::size_t, std::int32_t>, std::pair<double, double>> spans;
    for (const nki::sim::Event& e : c.events) {
      if (p.ops[e.op].find("all_reduce") == std::string::npos) continue;
      auto [it, fresh] = spans.emplace(std::make_pair(e.op, e.instance), std::make_pair(e.start_us, e.end_us));
      it->second = {std::min(it->second.first, e.start_us), std::max(it->second.second, e.end_us)};
    }
    double collective = 0;
    for (const auto& [key, span] : spans) collective += span.second - span.first;
    fmt::print("rank {}: simulated latency {:.2f} us, all_reduce {:.2f} us ({:.1f}%)\n", c.rank, c.latency_us, collective,
               100.0 * collective / c.latency_us);
  }

  // The same math on one core from the whole weights (only this check makes them).
  const nki::sim::Device one("trn2", 1);
  const nki::Tensor y1 = nki::kernels::mlp()(block(one, 1, 1.0f, 0, B, 0, H), block(one, 2, kWScale, 0, H, 0, F),
                                             block(one, 3, kWScale, 0, F, 0, H));
  const std::vector<float> expected = y1.to_floats();
  int status = 0;
  for (int i = 0; i < local; ++i) {
    const int r = first + i;
    const nki::Tensor& y = first_run.outputs[0].shard(r);
    const bool same_run = std::memcmp(y.data(), again.outputs[0].shard(r).data(), static_cast<std::size_t>(y.bytes())) == 0;
    const bool same_executor = std::memcmp(y.data(), reference.outputs[0].shard(r).data(), static_cast<std::size_t>(y.bytes())) == 0;
    fmt::print("rank {}: {} between runs, {} between Halide and the reference interpreter; ", r,
               same_run ? "bit-identical" : "DIFFERENT", same_executor ? "bit-identical" : "DIFFERENT");
    if (!same_run || !same_executor) status = 1;
    // The ranks add four partial products where one core accumulates all of F in one chain: fp32 rounding differs.
    status |= tutorial::check_allclose(y.to_floats(), expected, 1e-4, 1e-4);
  }
  if (status == 0 && me == 0) fmt::print("all ranks: NKI and reference match\n");
  return status;
}
