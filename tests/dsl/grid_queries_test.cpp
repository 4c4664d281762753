/** \file program_id, num_programs(axis), num_programs() and program_ndim() as a kernel sees them. */
#include "test_support.h"

namespace nl = nki::language;

namespace {

/** Each instance writes 1000*program_id(0) + program_id(1) plus the grid queries, one value per column. */
const nki::Kernel& grid_report() {
  static const nki::Kernel k = nki::jit("grid_report", [](nl::tensor a) {
    auto out = nl::ndarray({nl::num_programs(0), nl::num_programs(1) * 4}, nl::float32, nl::shared_hbm);
    auto p = nl::program_id(0) + nl::arange(1)[nl::_, nl::newaxis];  // (1, 1)
    auto q = nl::program_id(1) * 4;
    auto zero = nl::load(a[nl::arange(1)[nl::_, nl::newaxis], 0]) * 0;  // (1, 1) tile of 0
    nl::store(out[p, q], zero + nl::num_programs(0));
    nl::store(out[p, q + 1], zero + nl::num_programs(1));
    nl::store(out[p, q + 2], zero + nl::num_programs());
    nl::store(out[p, q + 3], zero + nl::program_ndim());
    return out;
  });
  return k;
}

}  // namespace

TEST_CASE("num_programs and program_ndim give the logical grid, whatever the nc split") {
  auto a = nki::Tensor::from_floats({1, 1}, nki::DType::fp32, std::vector<float>{5.0f});
  for (const char* grid : {"3,2", "spmd_dim(3,nc(2)),2", "nc(2)*3,2"}) {
    CAPTURE(grid);
    const nki::GridSpec g = nki::parse_grid(grid);
    const auto shape = g.logical_shape();
    for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
      auto out = grid_report().launch(g).with({ex, nullptr}).run({a}).outputs[0].to_floats();
      REQUIRE(out.size() == static_cast<std::size_t>(shape[0] * shape[1] * 4));
      for (std::size_t i = 0; i < out.size(); i += 4) {
        CHECK(out[i] == static_cast<float>(shape[0]));
        CHECK(out[i + 1] == static_cast<float>(shape[1]));
        CHECK(out[i + 2] == static_cast<float>(shape[0] * shape[1]));
        CHECK(out[i + 3] == 2.0f);
      }
    }
  }
}

TEST_CASE("program_id selects the tile each instance writes") {
  const nki::Kernel k = nki::jit("ids", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm);
    auto i = nl::program_id(0) * 2 + nl::arange(2)[nl::_, nl::newaxis];  // (2, 1)
    auto j = nl::program_id(1) * 3 + nl::arange(3)[nl::newaxis, nl::_];  // (1, 3)
    nl::store(out[i, j], nl::load(a[i, j]) * 10 + 1);
    return out;
  });
  std::vector<float> in(4 * 9);
  for (std::size_t x = 0; x < in.size(); ++x) in[x] = static_cast<float>(x);
  auto a = nki::Tensor::from_floats({4, 9}, nki::DType::fp32, in);
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    auto out = k[nl::nc(2), 3].with({ex, nullptr}).run({a}).outputs[0].to_floats();
    for (std::size_t x = 0; x < in.size(); ++x) REQUIRE(out[x] == in[x] * 10 + 1);
  }
}

TEST_CASE("a launch without a grid has program_ndim() == 0 and one instance") {
  const nki::Kernel k = nki::jit("no_grid", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm);
    auto i = nl::arange(4)[nl::_, nl::newaxis];
    auto j = nl::arange(2)[nl::newaxis, nl::_];
    nl::store(out[i, j], nl::load(a[i, j]) + nl::program_ndim() + nl::num_programs());
    return out;
  });
  auto a = nki::Tensor::from_floats({4, 2}, nki::DType::fp32, std::vector<float>(8, 1.0f));
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    nki::LaunchResult r = k.launch({}).with({ex, nullptr}).run({a});
    CHECK(r.cores[0].instances.size() == 1);
    for (float v : r.outputs[0].to_floats()) CHECK(v == 2.0f);  // 1 + 0 + 1
  }
}
