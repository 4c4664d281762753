/** \file err_mask_shape_mismatch: a mask whose shape does not broadcast to the op's tile. */
#include "test_support.h"

namespace nl = nki::language;

namespace {
const char* kFile = "tests/error/err_mask_shape_mismatch_test.cpp";
}

TEST_CASE("err_mask_shape_mismatch - a load mask over 64 columns on a 32-column tile") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "mask_too_wide",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 32);
        auto wide = nl::arange(64)[nl::newaxis, nl::_];
        line = __LINE__ + 1;
        auto t = nl::load(a[ip, jf], {.mask = (wide < 10)});
        nl::store(out[ip, jf], t);
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 32}, nki::DType::fp32, test::random_floats(128 * 32, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("mask_too_wide ({}:{}): err_mask_shape_mismatch: the mask of nl::load has shape [1,64]; the tile "
                    "has shape [128,32]",
                    kFile, line));
}

TEST_CASE("err_mask_shape_mismatch - a compute mask over 64 partitions on a 128-partition tile") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "mask_too_short",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 32);
        auto short_p = nl::arange(64)[nl::_, nl::newaxis];
        auto t = nl::load(a[ip, jf]);
        line = __LINE__ + 1;
        auto e = nl::exp(t, {.mask = (short_p < 10)});
        nl::store(out[ip, jf], e);
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 32}, nki::DType::fp32, test::random_floats(128 * 32, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("mask_too_short ({}:{}): err_mask_shape_mismatch: the mask of nl::exp has shape [64,1]; the tile "
                    "has shape [128,32]",
                    kFile, line));
}
