/** \file Loads see HBM as it was at the load, whatever later stores do; stores land in program order. */
#include "test_support.h"

namespace nl = nki::language;

namespace {
std::vector<float> iota(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}
}  // namespace

TEST_CASE("a tile loaded before a store to the same tensor keeps the old values") {
  const nki::Kernel k = nki::jit("stale_read", [](nl::tensor a) {
    auto d = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto i = nl::arange(128)[nl::_, nl::newaxis];
    auto j = nl::arange(16)[nl::newaxis, nl::_];
    auto old = nl::load(a[i, j]);  // (128, 16)
    nl::store(a[i, j], old * 2);
    nl::store(d[i, j], old);
    return d;
  });
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    auto a = nki::Tensor::from_floats({128, 16}, nki::DType::fp32, iota(128 * 16));
    auto d = k.launch({}).with({ex, nullptr}).run({a}).outputs[0].to_floats();
    auto av = a.to_floats();
    for (std::size_t x = 0; x < d.size(); ++x) {
      REQUIRE(d[x] == static_cast<float>(x));
      REQUIRE(av[x] == 2.0f * static_cast<float>(x));
    }
  }
}

TEST_CASE("an in-place store that overlaps its own load reads the values from before the store") {
  const nki::Kernel k = nki::jit("flip_rows", [](nl::tensor a) {
    auto i = nl::arange(128)[nl::_, nl::newaxis];
    auto j = nl::arange(8)[nl::newaxis, nl::_];
    nl::store(a[127 - i, j], nl::load(a[i, j]));
  });
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    auto a = nki::Tensor::from_floats({128, 8}, nki::DType::bf16, iota(128 * 8));
    k.launch({}).with({ex, nullptr}).run({a});
    auto av = a.to_floats();
    for (int r = 0; r < 128; ++r)
      for (int c = 0; c < 8; ++c)
        REQUIRE(av[r * 8 + c] == static_cast<float>(nki::round_to_dtype((127 - r) * 8 + c, nki::DType::bf16)));
  }
}

TEST_CASE("two stores to one tensor land in program order, instance after instance") {
  // Instance p writes row p from a, then row p + 1 from b: in order, row 1 ends as a's.
  const nki::Kernel k = nki::jit("overlapping_rows", [](nl::tensor a, nl::tensor b) {
    auto out = nl::ndarray({3, 64}, nl::float32, nl::shared_hbm);
    auto p = nl::program_id(0) + nl::arange(1)[nl::_, nl::newaxis];  // (1, 1)
    auto j = nl::arange(64)[nl::newaxis, nl::_];                      // (1, 64)
    nl::store(out[p, j], nl::load(a[0, j]));
    nl::store(out[p + 1, j], nl::load(b[0, j]));
    return out;
  });
  auto a = nki::Tensor::from_floats({1, 64}, nki::DType::fp32, std::vector<float>(64, 1.0f));
  auto b = nki::Tensor::from_floats({1, 64}, nki::DType::fp32, std::vector<float>(64, 2.0f));
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    auto out = k[2].with({ex, nullptr}).run({a, b}).outputs[0].to_floats();
    CHECK(out[0] == 1.0f);
    CHECK(out[64] == 1.0f);
    CHECK(out[128] == 2.0f);
  }
}

TEST_CASE("one tensor passed as two arguments of a kernel that writes one of them is refused") {
  const nki::Kernel k = nki::jit(
      "copy_into",
      [](nl::tensor dst, nl::tensor src) {
        auto i = nl::arange(128)[nl::_, nl::newaxis];
        auto j = nl::arange(8)[nl::newaxis, nl::_];
        nl::store(dst[i, j], nl::load(src[i, j]));
      },
      {"dst", "src"});
  auto a = nki::Tensor::from_floats({128, 8}, nki::DType::fp32, iota(128 * 8));
  const int line = __LINE__ + 1;
  CHECK(test::user_error_of([&] { k.launch({}).run({a, a}); }) ==
        fmt::format("copy_into (tests/runtime/load_store_hazards_test.cpp:{}): err_aliased_arguments: arguments dst and "
                    "src are the same tensor and the kernel writes dst; pass distinct tensors", line));
  auto b = nki::Tensor::from_floats({128, 8}, nki::DType::fp32, std::vector<float>(128 * 8, 0.0f));
  k.launch({}).run({b, a});
  CHECK(b.to_floats()[1000] == 1000.0f);
}
