/** \file The Halide path and the reference interpreter produce identical bytes on the same kernels and inputs. */
#include <limits>

#include "test_support.h"

namespace nl = nki::language;

namespace {

/** Every elementwise op, a scalar operand and a free-dimension broadcast, over [P, F] in [128, 64] tiles. */
const nki::Kernel& mixed_ops() {
  static const nki::Kernel k = nki::jit(
      "mixed_ops",
      [](nl::tensor a, nl::tensor b) {
        auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
        auto ix = nl::program_id(0) * 128 + nl::arange(128)[nl::_, nl::newaxis];  // (128, 1)
        auto iy = nl::program_id(1) * 64 + nl::arange(64)[nl::newaxis, nl::_];    // (1, 64)
        auto x = nl::load(a[ix, iy]);                                              // (128, 64)
        auto y = nl::load(b[ix, iy]);                                              // (128, 64)
        auto col = nl::load(b[ix, 0]);                                             // (128, 1): broadcast along F
        auto t = nl::maximum(x * y - x / y, nl::minimum(x, col)) + 0.5f;
        nl::store(out[ix, iy], t / (y + 2.0));
        return out;
      },
      {"a", "b"});
  return k;
}

/** A transposed store (tile axis 0 walks tensor axis 1) and an offset read. */
const nki::Kernel& transpose_tiles() {
  static const nki::Kernel k = nki::jit("transpose_tiles", [](nl::tensor a) {
    auto out = nl::ndarray({a.shape()[1], a.shape()[0]}, a.dtype(), nl::shared_hbm, "out");
    auto i = nl::arange(64)[nl::_, nl::newaxis];  // (64, 1)
    auto j = nl::arange(32)[nl::newaxis, nl::_];  // (1, 32)
    auto t = nl::load(a[nl::program_id(0) * 64 + i, j]);  // (64, 32)
    nl::store(out[j, nl::program_id(0) * 64 + i], t * 3);
    return out;
  });
  return k;
}

void expect_same(const nki::Kernel& k, const nki::GridSpec& grid, const std::vector<nki::Tensor>& args) {
  nki::LaunchResult h = k.launch(grid).with({nki::Executor::halide, nullptr}).run(args);
  nki::LaunchResult r = k.launch(grid).with({nki::Executor::reference, nullptr}).run(args);
  REQUIRE(h.outputs.size() == r.outputs.size());
  for (std::size_t o = 0; o < h.outputs.size(); ++o) {
    const std::int64_t i = test::first_difference(h.outputs[o], r.outputs[o]);
    if (i >= 0) {
      FAIL(fmt::format("{} output {} element {}: halide {} vs reference {}", k.name(), o, i,
                       h.outputs[o].to_floats()[i], r.outputs[o].to_floats()[i]));
    }
  }
}

std::vector<float> with_specials(std::vector<float> v) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float specials[] = {0.0f, -0.0f, inf, -inf, nan, -nan, 1e-40f, -1e-45f, 65504.0f, 3.0e38f};
  for (std::size_t i = 0; i < std::size(specials); ++i) v[i * 7] = specials[i];
  return v;
}

}  // namespace

TEST_CASE("executors agree on every elementwise op, scalars and broadcasts, over dtypes and shapes") {
  const nki::DType dtypes[] = {nki::DType::fp32, nki::DType::bf16, nki::DType::fp16};
  const nki::Shape shapes[] = {{128, 64}, {256, 192}, {384, 128}};
  for (nki::DType da : dtypes) {
    for (nki::DType db : dtypes) {
      for (const nki::Shape& s : shapes) {
        CAPTURE(nki::dtype_name(da));
        CAPTURE(nki::dtype_name(db));
        CAPTURE(nki::shape_str(s));
        const auto n = static_cast<std::size_t>(s[0] * s[1]);
        auto a = nki::Tensor::from_floats(s, da, with_specials(test::random_floats(n, 1)));
        auto b = nki::Tensor::from_floats(s, db, test::random_floats(n, 2, 0.25f, 4.0f));
        expect_same(mixed_ops(), nki::GridSpec{{s[0] / 128, s[1] / 64}}, {a, b});
      }
    }
  }
}

TEST_CASE("executors agree on a transposed, strided store split over two cores") {
  for (nki::DType dt : {nki::DType::fp32, nki::DType::bf16}) {
    auto a = nki::Tensor::from_floats({256, 32}, dt, test::random_floats(256 * 32, 3));
    expect_same(transpose_tiles(), nki::GridSpec{{nl::nc(2) * 2}}, {a});
    auto out = transpose_tiles()[nl::nc(2) * 2](a).to_floats();
    auto in = a.to_floats();
    CHECK(out[5 * 256 + 130] == nki::round_to_dtype(in[130 * 32 + 5] * 3, dt));
  }
}

TEST_CASE("the result dtype follows NKI promotion: bf16 + fp16 computes and stays in fp32") {
  const nki::Kernel k = nki::jit("promote", [](nl::tensor a, nl::tensor b) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm);
    auto i = nl::arange(128)[nl::_, nl::newaxis];
    auto j = nl::arange(4)[nl::newaxis, nl::_];
    auto s = nl::load(a[i, j]) + nl::load(b[i, j]);  // (128, 4)
    CHECK(s.dtype() == nki::DType::fp32);
    nl::store(out[i, j], s);
    return out;
  });
  std::vector<float> av(512, 1.0f), bv(512, 1.0f / 1024);  // 1 + 2^-10: exact in fp32, not in bf16
  auto a = nki::Tensor::from_floats({128, 4}, nki::DType::bf16, av);
  auto b = nki::Tensor::from_floats({128, 4}, nki::DType::fp16, bv);
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CHECK(k.launch({}).with({ex, nullptr}).run({a, b}).outputs[0].to_floats()[0] == 1.0f + 1.0f / 1024);
  }
}
