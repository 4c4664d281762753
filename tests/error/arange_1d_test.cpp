/** \file err_1d_arange_not_supported: indexing with an arange that was never expanded. */
#include "test_support.h"

namespace nl = nki::language;

TEST_CASE("indexing with a 1-D arange is err_1d_arange_not_supported, naming the tensor and the arange") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "flat_index",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto i = nl::arange(128);
        auto j = nl::arange(64)[nl::newaxis, nl::_];
        line = __LINE__ + 1;
        nl::store(out[i, j], nl::load(a[i, j]));
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 1));
  const std::string msg = test::user_error_of([&] { k[1](a); });
  CHECK(msg == fmt::format("flat_index (tests/error/arange_1d_test.cpp:{}): err_1d_arange_not_supported: tensor a is indexed "
                    "with a 1-D arange(128); expand it with [_, newaxis] or [newaxis, _]",
                    line));
}
