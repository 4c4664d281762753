/** \file Sizes past what an executor or 64-bit arithmetic can address are refused, never wrapped. */
#include "test_support.h"

namespace nl = nki::language;

namespace {
const nki::Kernel& first_tile_copy() {
  static const nki::Kernel k = nki::jit(
      "first_tile_copy",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 512}, a.dtype(), nl::shared_hbm, "out");
        auto i = nl::arange(1)[nl::_, nl::newaxis];
        auto j = nl::arange(512)[nl::newaxis, nl::_];
        nl::store(out[i, j], nl::load(a[i, j]));
        return out;
      },
      {"a"});
  return k;
}
}  // namespace

TEST_CASE("a tensor of 2^31 elements is refused by the halide executor with the limit and the alternative") {
  nki::Tensor a({1, std::int64_t{1} << 31}, nki::DType::bf16);  // 4 GiB, never touched
  const int line = __LINE__ + 1;
  CHECK(test::user_error_of([&] { first_tile_copy().launch({}).run({a}); }) ==
        fmt::format("first_tile_copy (tests/error/size_limits_test.cpp:{}): err_tensor_too_large: tensor a [1,2147483648] "
                    "has 2147483648 elements; the halide executor indexes with 32-bit integers (at most 2147483647); use "
                    "the reference executor",
                    line));
}

TEST_CASE("a shape whose element count overflows 64 bits is refused") {
  const std::int64_t big = std::int64_t{1} << 32;
  CHECK(test::user_error_of([&] { nki::Tensor({big, big}, nki::DType::fp32); }) ==
        "err_invalid_shape: shape [4294967296,4294967296] has no element count that fits 64 bits");
}

TEST_CASE("an index whose range overflows 64 bits is out of bounds, not wrapped into range") {
  const nki::Kernel k = nki::jit(
      "huge_stride",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto i = nl::program_id(0) * 6148914691236517206 + nl::arange(128)[nl::_, nl::newaxis];
        auto j = nl::arange(4)[nl::newaxis, nl::_];
        nl::store(out[i, j], nl::load(a[i, j]));
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 4}, nki::DType::fp32, test::random_floats(256 * 4, 1));
  const std::string msg = test::user_error_of([&] { k[nl::spmd_dim(2, nl::nc(2))](a); });
  CHECK(msg.find("err_tensor_access_out_of_bound: out-of-bound access to tensor a [256,4] on dimension 0: index "
                 "6148914691236517206*pid0 + i0 ranges over [0, 9223372036854775807], valid is [0, 255]") !=
        std::string::npos);
}
