/** \file err_1d_arange_not_supported in a mask and in isa::iota (accesses: arange_1d_test.cpp, store_1d_arange_test.cpp). */
#include "test_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;

TEST_CASE("err_1d_arange_not_supported - a mask over a 1-D arange names the arange") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "flat_mask",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        line = __LINE__ + 1;
        auto m = nl::arange(128) < 100;
        nl::store(out[ip, jf], nl::load(a[ip, jf], {.mask = m}));
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("flat_mask (tests/error/err_1d_arange_not_supported_test.cpp:{}): err_1d_arange_not_supported: a "
                    "mask uses a 1-D arange(128); expand it with [_, newaxis] or [newaxis, _]",
                    line));
}

TEST_CASE("err_1d_arange_not_supported - isa::iota of a 1-D arange") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "flat_iota",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), nl::int32, nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 1);
        line = __LINE__ + 1;
        auto t = isa::iota(nl::arange(128), nl::int32);
        nl::store(out[ip, jf], t);
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 1}, nki::DType::fp32, test::random_floats(128, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("flat_iota (tests/error/err_1d_arange_not_supported_test.cpp:{}): err_1d_arange_not_supported: "
                    "isa::iota of a 1-D arange(128); expand it with [_, newaxis] or [newaxis, _]",
                    line));
}

TEST_CASE("err_1d_arange_not_supported - a 1-D arange in a load's index, also after arithmetic") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "flat_load",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 8);
        line = __LINE__ + 1;
        auto t = nl::load(a[nl::arange(128) * 2 + 1, 0]);
        nl::store(out[ip, jf], t);
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 8}, nki::DType::fp32, test::random_floats(256 * 8, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("flat_load (tests/error/err_1d_arange_not_supported_test.cpp:{}): err_1d_arange_not_supported: "
                    "tensor a is indexed with a 1-D arange(128); expand it with [_, newaxis] or [newaxis, _]",
                    line));
}
