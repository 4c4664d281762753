/** \file err_unsupported_expression_in_mask: a mask is a conjunction; `|` is refused. */
#include "test_support.h"

namespace nl = nki::language;

TEST_CASE("err_unsupported_expression_in_mask - two conditions joined with |") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "or_mask",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        auto t = nl::load(a[ip, jf]);
        line = __LINE__ + 1;
        auto m = (nl::arange(128)[nl::_, nl::newaxis] < 10) | (nl::arange(64)[nl::newaxis, nl::_] < 10);
        nl::store(out[ip, jf], t, {.mask = m});
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("or_mask (tests/error/err_unsupported_expression_in_mask_test.cpp:{}): "
                    "err_unsupported_expression_in_mask: a mask is a conjunction of affine comparisons joined with &; | "
                    "(or) is not supported, split the operation into two masked operations",
                    line));
}

TEST_CASE("err_unsupported_expression_in_mask - the error points at the |, not where the indices were made") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "or_mask_far",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        auto t = nl::load(a[ip, jf]);
        auto lo = ip < 10;
        auto hi = ip >= 100;
        line = __LINE__ + 1;
        nl::store(out[ip, jf], t, {.mask = lo | hi});
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("or_mask_far (tests/error/err_unsupported_expression_in_mask_test.cpp:{}): "
                    "err_unsupported_expression_in_mask: a mask is a conjunction of affine comparisons joined with &; | "
                    "(or) is not supported, split the operation into two masked operations",
                    line));
}

TEST_CASE("err_unsupported_expression_in_mask - & of the same conditions is accepted") {
  const nki::Kernel k = nki::jit(
      "and_mask",
      [](nl::tensor a) {
        auto out = nl::zeros(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        auto t = nl::load(a[ip, jf]);
        nl::store(out[ip, jf], t, {.mask = (ip >= 10) & (jf < 20)});
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 1));
  const auto in = a.to_floats();
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    const auto got = k.launch({}).with({ex, nullptr}).run({a}).outputs[0].to_floats();
    for (int p = 0; p < 128; ++p)
      for (int f = 0; f < 64; ++f) {
        const std::size_t e = static_cast<std::size_t>(p * 64 + f);
        REQUIRE(got[e] == (p >= 10 && f < 20 ? in[e] : 0.0f));
      }
  }
}
