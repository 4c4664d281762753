/**
 * \file Compiles across ranks: every rank computes the same key, the first rank of the host
 * compiles and the others load its artifact, and the single-artifact assertion sees the
 * cores of every rank.
 */
#include <cstdlib>
#include <map>

#include "mpi_support.h"
#include "nki/compile.h"
#include "nki/kernels.h"

namespace nl = nki::language;

namespace {

struct StrictEnv {
  StrictEnv() { ::setenv("NKI_SPMD_STRICT", "1", 1); }
  ~StrictEnv() { ::unsetenv("NKI_SPMD_STRICT"); }
};

}  // namespace

TEST_CASE("mpi compile: rank 0 compiles, every other rank loads the same artifact from the shared cache") {
  const mpi_test::SharedCache cache;
  const nki::Communicator& world = nki::communicator();
  const nki::sim::Device chip("trn2", 2);  // this rank's chip
  const auto a = nki::Tensor::from_floats({256, 1024}, nki::DType::fp32, test::random_floats(256 * 1024, 3), chip);
  const auto b = nki::Tensor::from_floats({256, 1024}, nki::DType::fp32, test::random_floats(256 * 1024, 4), chip);
  const nki::LaunchResult r = nki::kernels::tensor_add()[nl::spmd_dim(1, nl::nc(2)), 2].run({a, b});
  CHECK(r.compiled == (world.rank() == 0 ? 1 : 0));
  CHECK(r.reused == (world.rank() == 0 ? 0 : 1));
  REQUIRE(r.artifact_keys.size() == 1);
  for (const std::string& key : mpi_test::from_every_rank(r.artifact_keys.front())) CHECK(key == r.artifact_keys.front());
  const nki::cache::Stats st = nki::cache::stats();
  CHECK(st.entries == 1);
  CHECK(st.compiles == 1);
  const std::vector<float> x = a.to_floats(), y = b.to_floats(), z = r.outputs.front().to_floats();
  for (std::size_t i = 0; i < z.size(); ++i) REQUIRE(z[i] == x[i] + y[i]);
}

TEST_CASE("mpi compile: nki::compile places the grid on the world's cores and reports every rank's") {
  const mpi_test::SharedCache cache;
  const int ranks = nki::communicator().ranks();
  nki::CompileOptions opt;
  opt.cores = 4;  // the world's: 4 / ranks per rank
  const nki::CompileReport r = nki::compile(nki::kernels::tensor_add()[nl::spmd_dim(1, nl::nc(4)), 2],
                                            {{512, 1024}, {512, 1024}}, {nki::DType::fp32, nki::DType::fp32}, opt);
  CHECK(r.cores == 4);
  CHECK(r.compiled == 1);
  CHECK(r.reused == ranks - 1);
  REQUIRE(r.busy.size() == 4);
  for (int c = 0; c < 4; ++c) {
    CHECK(r.busy[static_cast<std::size_t>(c)].nc == c);
    CHECK(r.busy[static_cast<std::size_t>(c)].key == r.busy.front().key);
    // Rank 0 compiled (its first core); every later use found it.
    CHECK(r.busy[static_cast<std::size_t>(c)].compiled == (c == 0));
  }
}

TEST_CASE("mpi compile: the single-artifact assertion checks the union of every rank's cores") {
  const mpi_test::SharedCache cache;
  const StrictEnv strict;
  nki::CompileOptions opt;
  opt.cores = 4;
  opt.mode = nki::CompileMode::mpmd;  // one artifact per core: a splinter across the ranks
  const std::string msg = test::user_error_of([&] {
    nki::compile(nki::kernels::tensor_add()[nl::spmd_dim(1, nl::nc(4)), 2], {{512, 1024}, {512, 1024}},
                 {nki::DType::fp32, nki::DType::fp32}, opt);
  });
  // Every core's key once, each staged by its own (global) core: 0 to 3, whichever rank ran it.
  const std::string head = "tensor_add: err_spmd_artifact_splinter: kernel IR ";
  REQUIRE(msg.starts_with(head));
  CHECK(msg.find(" resolved to 4 artifacts instead of one shared by every core: ") != std::string::npos);
  std::map<std::string, int> staged;
  for (std::size_t at = msg.find(" staged by ranks "); at != std::string::npos; at = msg.find(" staged by ranks ", at + 1))
    ++staged[msg.substr(at + 17, 1)];
  CHECK(staged == std::map<std::string, int>{{"0", 1}, {"1", 1}, {"2", 1}, {"3", 1}});
  for (const std::string& other : mpi_test::from_every_rank(msg)) CHECK(other == msg);
}

TEST_CASE("mpi launch: a kernel error is raised alike on every rank, and nothing is compiled") {
  const mpi_test::SharedCache cache;
  const nki::sim::Device chip("trn2", 2);
  // 256 columns: the kernel's [128, 512] tiles read past the end.
  const auto a = nki::Tensor::from_floats({128, 256}, nki::DType::fp32, std::vector<float>(128 * 256, 1.0f), chip);
  const std::string msg = test::user_error_of([&] { nki::kernels::tensor_add()[1, 1].run({a, a}); });
  CHECK(msg.find("err_tensor_access_out_of_bound") != std::string::npos);
  for (const std::string& other : mpi_test::from_every_rank(msg)) CHECK(other == msg);
  CHECK(nki::cache::stats().compiles == 0);
}

TEST_CASE("mpi collectives: ranks passing different numbers of buffers are refused on every rank") {
  const nki::Communicator& world = nki::communicator();
  const nki::sim::Device chip("trn2", 4);
  std::vector<nki::Tensor> mine;
  for (int i = 0; i <= (world.rank() == 1 ? 1 : 0); ++i)
    mine.push_back(nki::Tensor::from_floats({2}, nki::DType::fp32, std::vector<float>{1.0f, 2.0f}, chip));
  CHECK(test::user_error_of([&] { nki::all_reduce(mine, nki::ReduceOp::sum); }) ==
        "all_reduce: err_collective_shape_mismatch: rank 1 passes 2 buffers but rank 0 passes 1; every rank passes "
        "one per device it runs");
}

TEST_CASE("mpi compile: the simulated latency is the world's, its slowest rank's, on every rank") {
  const mpi_test::SharedCache cache;
  nki::CompileOptions opt;
  opt.cores = 4;
  opt.unannotated_cores = 4;  // 6 instances over 4 cores: 2, 2, 1, 1, so the first chip has more to do
  opt.estimate_latency = true;
  const nki::CompileReport r = nki::compile(nki::kernels::tensor_add()[6, 1], {{768, 512}, {768, 512}},
                                            {nki::DType::fp32, nki::DType::fp32}, opt);
  REQUIRE(r.simulated_latency_us > 0);
  const std::string mine = fmt::format("{:a}", r.simulated_latency_us);
  for (const std::string& theirs : mpi_test::from_every_rank(mine)) CHECK(theirs == mine);
}
