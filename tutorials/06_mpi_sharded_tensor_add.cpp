/**
 * \file Tutorial 6: a tensor sharded over MPI ranks, each rank a chip of two NeuronCores.
 *
 * Run it with Open MPI (as root, and with more ranks than CPUs, add the flags shown):
 *
 *   mpirun --allow-run-as-root --oversubscribe -np 4 ./build/tutorials/tutorial_06_mpi_sharded_tensor_add
 *
 * Each rank is one process simulating one chip (its two cores share that rank's HBM). The
 * world mesh is ranks x cores = 4 x 2 = 8 devices, device id = rank * 2 + core. The tensors
 * are sharded by rows over both mesh axes, so each rank holds the rows of its two devices;
 * it runs tensor_add_nc2 on them (the same kernel, and the same compiled artifact, on every
 * rank: rank 0 compiles it, the others load it from the cache), then the eight device
 * shards are all-gathered over MPI and every device checks the whole sum.
 */
#include <cstring>
#include <random>

#include "nki/collectives.h"
#include "nki/kernels.h"
#include "nki/mpi_world.h"
#include "nki/nki.h"
#include "nki/sharding.h"
#include "tutorial_check.h"

namespace nl = nki::language;

int main(int argc, char** argv) {
  nki::MpiWorld world(&argc, &argv);
  const int ranks = world.ranks(), rank = world.rank(), cores = 2;
  const std::int64_t F = 1024, P = 256 * ranks;  // 256 rows per rank: 128 per device

  // Every rank makes the same global inputs (a real program would read its shard from storage).
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> a_host(static_cast<std::size_t>(P * F)), b_host(a_host.size());
  for (float& v : a_host) v = dist(rng);
  for (float& v : b_host) v = dist(rng);

  // The world mesh and the rows each device holds: PartitionSpec (('rank', 'core'), None).
  const nki::Mesh mesh = nki::Mesh::iota({ranks, cores}, {"rank", "core"});
  const nki::Sharding sharding = nki::Sharding::from_spec(mesh, nki::PartitionSpec::parse("(('rank', 'core'), None)"), 2);
  const std::vector<nki::ShardPlacement> placement = sharding.placement({P, F});
  const std::int64_t first_row = placement[static_cast<std::size_t>(rank * cores)].slices[0][0];
  const std::int64_t rows = placement[static_cast<std::size_t>(rank * cores + cores - 1)].slices[0][1] - first_row;
  if (rank == 0) fmt::print("world mesh {} over {} ranks, sharding {}\n", mesh.str(), ranks, sharding.str());

  // This rank's chip and its shard of both inputs, in the chip's HBM.
  const nki::sim::Device chip("trn2", cores);
  auto rows_of = [&](const std::vector<float>& host) {
    return std::vector<float>(host.begin() + first_row * F, host.begin() + (first_row + rows) * F);
  };
  const nki::Tensor a = nki::Tensor::from_floats({rows, F}, nl::bfloat16, rows_of(a_host), chip);
  const nki::Tensor b = nki::Tensor::from_floats({rows, F}, nl::bfloat16, rows_of(b_host), chip);

  // The kernel on this rank's two cores: tensor_add_nc2's grid for the shard.
  const nki::GridSpec grid = nki::kernels::tensor_add_nc2_grid({a.shape(), b.shape()});
  const nki::LaunchResult r = nki::kernels::tensor_add().launch(grid).run({a, b});
  if (rank == 0) {
    tutorial::print_placement(r);
    fmt::print("rank 0: artifacts compiled {}, reused {}\n", r.compiled, r.reused);
  }

  // One buffer per device of this rank (its rows of the sum), all-gathered along the rows.
  const nki::Tensor& c = r.outputs.front();
  std::vector<nki::Tensor> mine;
  const std::int64_t device_rows = rows / cores;
  for (int core = 0; core < cores; ++core) {
    nki::Tensor& t = mine.emplace_back(nki::Shape{device_rows, F}, c.dtype(), chip);
    std::memcpy(t.data(), c.data() + core * device_rows * F * nki::dtype_bytes(c.dtype()), static_cast<std::size_t>(t.bytes()));
  }
  const std::vector<nki::Tensor> whole = nki::all_gather(mine, 0);

  // Host reference in fp32 from the same bf16 inputs; every device of every rank checks.
  const nki::Tensor a_all = nki::Tensor::from_floats({P, F}, nl::bfloat16, a_host, chip);
  const nki::Tensor b_all = nki::Tensor::from_floats({P, F}, nl::bfloat16, b_host, chip);
  const std::vector<float> x = a_all.to_floats(), y = b_all.to_floats();
  std::vector<float> expected(x.size());
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = x[i] + y[i];
  int status = 0;
  for (int core = 0; core < cores; ++core) {
    fmt::print("rank {} device {}: ", rank, rank * cores + core);
    status |= tutorial::check_allclose(whole[static_cast<std::size_t>(core)].to_floats(), expected, 1e-4, 1e-2);
  }
  return status;
}
