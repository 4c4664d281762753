/** \file Instances of one core behave as if run one after another, also when the compiled path batches them. */
#include "test_support.h"

namespace nl = nki::language;

TEST_CASE("a kernel that reads what earlier instances stored sees their writes, on both executors") {
  // Instance p writes column p, doubled and upside down, into column p + 1: column k ends as
  // column 0 times 2^k, reversed when k is odd. Interleaving instances row by row would read
  // rows of column p + 1... before instance p wrote them.
  const nki::Kernel k = nki::jit("double_along", [](nl::tensor a) {
    auto i = nl::arange(128)[nl::_, nl::newaxis];  // (128, 1)
    auto t = nl::load(a[i, nl::program_id(0)]);    // (128, 1)
    nl::store(a[127 - i, nl::program_id(0) + 1], t * 2);
  });
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    std::vector<float> init(128 * 9, 0.0f);
    for (int r = 0; r < 128; ++r) init[r * 9] = static_cast<float>(r + 1);
    auto a = nki::Tensor::from_floats({128, 9}, nki::DType::fp32, init);
    nki::LaunchResult res = k[8].with({ex, nullptr}).run({a});
    CHECK(res.outputs.empty());
    auto v = a.to_floats();
    for (int r = 0; r < 128; ++r)
      for (int c = 0; c < 9; ++c) REQUIRE(v[r * 9 + c] == static_cast<float>((c % 2 == 0 ? r + 1 : 128 - r) << c));
  }
}

TEST_CASE("runs of consecutive instances and broken runs give the same bytes as the interpreter") {
  const nki::Kernel k = nki::jit("offset_copy", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto i = nl::program_id(0) * 64 + nl::arange(64)[nl::_, nl::newaxis];  // (64, 1)
    auto j = nl::program_id(1) * 8 + nl::arange(8)[nl::newaxis, nl::_];    // (1, 8)
    nl::store(out[i, j], nl::load(a[i, j]) + 1.5f);
    return out;
  });
  auto a = nki::Tensor::from_floats({256, 96}, nki::DType::bf16, test::random_floats(256 * 96, 9));
  // Last axis with nc: each core's ids step by 2 there, so no two are consecutive.
  for (const char* grid : {"4,12", "4,spmd_dim(6,nc(2))", "spmd_dim(nc(2),2),12", "4,nc(2)*6"}) {
    CAPTURE(grid);
    const nki::GridSpec g = nki::parse_grid(grid);
    auto h = k.launch(g).with({nki::Executor::halide, nullptr}).run({a}).outputs[0];
    auto r = k.launch(g).with({nki::Executor::reference, nullptr}).run({a}).outputs[0];
    CHECK(test::first_difference(h, r) == -1);
    CHECK(h.to_floats()[95] == nki::round_to_dtype(a.to_floats()[95] + 1.5f, nki::DType::bf16));
  }
}
