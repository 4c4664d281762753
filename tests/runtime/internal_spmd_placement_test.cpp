/** \file Spreading a grid without nc over the logical core's physical cores (enable_internal_spmd_opt). */
#include "nki/placement.h"
#include "nki/kernels.h"
#include "nki/profile.h"
#include "test_support.h"

namespace nl = nki::language;

namespace {

using Ids = std::vector<std::vector<std::int64_t>>;

std::vector<std::size_t> counts(const std::vector<nki::CoreSchedule>& cores) {
  std::vector<std::size_t> n;
  for (const nki::CoreSchedule& c : cores) n.push_back(c.instances.size());
  return n;
}

}  // namespace

TEST_CASE("a grid without nc is split into contiguous row-major blocks, one per core of the logical core") {
  const auto spread = nki::place_instances(nki::parse_grid("4,2"), 2, "k", 2);
  REQUIRE(spread.size() == 2);
  CHECK(spread[0].instances == Ids{{0, 0}, {0, 1}, {1, 0}, {1, 1}});
  CHECK(spread[1].instances == Ids{{2, 0}, {2, 1}, {3, 0}, {3, 1}});
  // Without the opt, everything runs on NC0 (NKI's LNC rule).
  CHECK(counts(nki::place_instances(nki::parse_grid("4,2"), 2, "k", 1)) == std::vector<std::size_t>{8, 0});
  // An odd count: the first block is one larger. Fewer instances than cores: the last cores idle.
  CHECK(nki::place_instances(nki::parse_grid("3"), 2, "k", 2)[0].instances == Ids{{0}, {1}});
  CHECK(nki::place_instances(nki::parse_grid("3"), 2, "k", 2)[1].instances == Ids{{2}});
  CHECK(counts(nki::place_instances(nki::parse_grid("1"), 8, "k", 2)) == std::vector<std::size_t>{1, 0, 0, 0, 0, 0, 0, 0});
  CHECK(counts(nki::place_instances(nki::GridSpec{}, 2, "k", 2)) == std::vector<std::size_t>{1, 0});
  // Grids with nc factors are placed by them, whatever the opt says.
  CHECK(nki::place_instances(nki::parse_grid("nc(2),2"), 2, "k", 2)[1].instances == Ids{{1, 0}, {1, 1}});
  CHECK(test::user_error_of([] { (void)nki::place_instances(nki::parse_grid("4"), 1, "k", 2); }) ==
        "k: err_grid_exceeds_cores: grid \"4\" spreads over 2 NeuronCores but the device has 1");
}

TEST_CASE("a spread launch places instances on both cores and computes the same bytes") {
  test::FreshCache cache;
  const nki::sim::Device device("trn2", 2);
  const nki::Kernel& k = nki::kernels::tensor_add();
  const nki::Tensor a = nki::Tensor::from_floats({512, 1024}, nki::DType::bf16, test::random_floats(512 * 1024, 1), device);
  const nki::Tensor b = nki::Tensor::from_floats({512, 1024}, nki::DType::bf16, test::random_floats(512 * 1024, 2), device);
  nki::LaunchOptions o;
  o.device = &device;
  const nki::LaunchResult plain = k.launch(nki::parse_grid("4,2")).with(o).run({a, b});
  o.unannotated_cores = 2;
  const nki::LaunchResult spread = k.launch(nki::parse_grid("4,2")).with(o).run({a, b});
  CHECK(counts(plain.cores) == std::vector<std::size_t>{8, 0});
  CHECK(counts(spread.cores) == std::vector<std::size_t>{4, 4});
  CHECK(spread.artifact_keys == plain.artifact_keys);  // placement is not part of an SPMD artifact
  CHECK(test::first_difference(spread.outputs[0], plain.outputs[0]) == -1);
}

TEST_CASE("the simulated latency of a spread grid is that of two cores sharing the work") {
  // 64 instances of 3 DMAs each: enough to keep one core's 16 DMA queues busy, so a second core's queues halve it.
  const nki::Kernel& k = nki::kernels::tensor_add();
  const std::vector<nki::TensorSpec> args{{{2048, 2048}, nki::DType::bf16}, {{2048, 2048}, nki::DType::bf16}};
  const nki::ProfileReport one = nki::profile(k.launch(nki::parse_grid("16,4")), args, "trn2", false, 1);
  const nki::ProfileReport two = nki::profile(k.launch(nki::parse_grid("16,4")), args, "trn2", false, 2);
  // The same as asking for the two cores with nc in the grid.
  CHECK(two.latency_us == nki::profile(k.launch(nki::parse_grid("spmd_dim(nc(2),8),4")), args, "trn2", false).latency_us);
  CHECK(one.cores.size() == 1);
  CHECK(two.cores.size() == 2);
  CHECK(two.latency_us < 0.6 * one.latency_us);
  CHECK(two.latency_us > 0.4 * one.latency_us);
}
