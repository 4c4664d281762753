/** \file Differential test: random elementwise kernels give identical bytes on both executors. */
#include "test_support.h"

namespace nl = nki::language;

namespace {

/** What one random kernel does; the kernel body interprets it at trace time. */
struct Recipe {
  std::int64_t P, F;              // tile
  std::int64_t gx, gy;            // grid
  nki::DType in_dt[2], out_dt[2];
  struct Step {
    int op;          // 0..5: add subtract multiply divide maximum minimum
    int lhs, rhs;    // tile indices, or -1 for a scalar
    float scalar;
  };
  std::vector<Step> steps;
  bool column_broadcast;  // one operand is a (P, 1) column of input 1
  bool two_outputs;
};

Recipe make_recipe(std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint32_t>(n)); };
  const nki::DType dts[] = {nki::DType::fp32, nki::DType::bf16, nki::DType::fp16};
  const std::int64_t Ps[] = {1, 32, 128}, Fs[] = {1, 7, 16, 64, 96};
  Recipe r{Ps[pick(3)], Fs[pick(5)], 1 + pick(3), 1 + pick(3), {dts[pick(3)], dts[pick(3)]}, {dts[pick(3)], dts[pick(3)]},
           {}, pick(2) == 1, pick(2) == 1};
  int tiles = r.column_broadcast ? 3 : 2;  // loads come first
  const int n = 2 + pick(5);
  for (int s = 0; s < n; ++s) {
    Recipe::Step st{pick(6), pick(tiles), pick(4) == 0 ? -1 : pick(tiles), static_cast<float>(pick(9)) - 4.0f};
    if (st.lhs == 2 && st.rhs == 2) st.rhs = 0;  // keep at least one full-width operand
    r.steps.push_back(st);
    ++tiles;
  }
  return r;
}

nki::Kernel make_kernel(const Recipe& r) {
  return nki::jit("random_kernel", [r](nl::tensor a, nl::tensor b) {
    auto o0 = nl::ndarray(a.shape(), r.out_dt[0], nl::shared_hbm);
    auto o1 = nl::ndarray(a.shape(), r.out_dt[1], nl::shared_hbm);
    auto ix = nl::program_id(0) * r.P + nl::arange(r.P)[nl::_, nl::newaxis];
    auto iy = nl::program_id(1) * r.F + nl::arange(r.F)[nl::newaxis, nl::_];
    std::vector<nl::tile> t{nl::load(a[ix, iy]), nl::load(b[ix, iy])};
    if (r.column_broadcast) t.push_back(nl::load(b[ix, nl::program_id(1) * r.F]));
    using Op = nl::binary_fn;
    const Op ops[] = {nl::add, nl::subtract, nl::multiply, nl::divide, nl::maximum, nl::minimum};
    for (const Recipe::Step& s : r.steps) {
      const nl::tile lhs = t[static_cast<std::size_t>(s.lhs)];
      t.push_back(s.rhs < 0 ? ops[s.op](lhs, s.scalar) : ops[s.op](lhs, t[static_cast<std::size_t>(s.rhs)]));
    }
    // A (P, 1) column may end up last; widen it to the access shape before storing.
    auto full = t.back().shape()[1] == r.F ? t.back() : t.back() + t[0] * 0.0f;
    nl::store(o0[ix, iy], full);
    // Every returned tensor is written (err_tensor_output_not_written_to otherwise).
    nl::store(o1[ix, iy], r.two_outputs && t[t.size() - 2].shape()[1] == r.F ? t[t.size() - 2] : full);
    return std::make_tuple(o0, o1);
  });
}

}  // namespace

TEST_CASE("random elementwise kernels: the halide path and the reference interpreter agree byte for byte") {
  int compared = 0;
  for (std::uint32_t seed = 1; seed <= 24; ++seed) {
    const Recipe r = make_recipe(seed);
    CAPTURE(seed);
    const nki::Shape shape{r.P * r.gx * 2, r.F * r.gy};
    const auto n = static_cast<std::size_t>(shape[0] * shape[1]);
    auto av = test::random_floats(n, seed * 2, -3.0f, 3.0f), bv = test::random_floats(n, seed * 2 + 1, -3.0f, 3.0f);
    for (std::size_t x = 0; x < n; x += 37) bv[x] = 0.0f;  // divisions by zero: inf and NaN paths
    auto a = nki::Tensor::from_floats(shape, r.in_dt[0], av);
    auto b = nki::Tensor::from_floats(shape, r.in_dt[1], bv);
    const nki::Kernel k = make_kernel(r);
    const nki::GridSpec grid{{nl::spmd_dim(r.gx, nl::nc(2)), r.gy}};
    auto h = k.launch(grid).with({nki::Executor::halide, nullptr}).run({a, b});
    auto ref = k.launch(grid).with({nki::Executor::reference, nullptr}).run({a, b});
    for (std::size_t o = 0; o < (r.two_outputs ? 2u : 1u); ++o) {
      const std::int64_t i = test::first_difference(h.outputs[o], ref.outputs[o]);
      if (i >= 0) {
        FAIL(fmt::format("seed {} output {} element {}: halide {} vs reference {}\n{}", seed, o, i,
                         h.outputs[o].to_floats()[i], ref.outputs[o].to_floats()[i], h.ir_text));
      }
      ++compared;
    }
  }
  CHECK(compared >= 24);
}
