/** \file A store through an unexpanded arange is err_1d_arange_not_supported, not a shape mismatch. */
#include "test_support.h"

namespace nl = nki::language;

TEST_CASE("storing through a 1-D arange names the arange, at the access") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "flat_store",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto i = nl::arange(128)[nl::_, nl::newaxis];
        auto j = nl::arange(8)[nl::newaxis, nl::_];
        auto t = nl::load(a[i, j]);
        line = __LINE__ + 1;
        nl::store(out[nl::arange(128), j], t);
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 8}, nki::DType::fp32, test::random_floats(128 * 8, 1));
  const std::string msg = test::user_error_of([&] { k.launch({}).run({a}); });
  CHECK(msg == fmt::format("flat_store (tests/error/store_1d_arange_test.cpp:{}): err_1d_arange_not_supported: tensor "
                           "tensor1 is indexed with a 1-D arange(128); expand it with [_, newaxis] or [newaxis, _]",
                           line));
}
