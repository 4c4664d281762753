/** \file err_num_partition_exceed_arch_limit: a tile of more than 128 partitions. */
#include "test_support.h"

namespace nl = nki::language;

TEST_CASE("a load of 256 partitions is err_num_partition_exceed_arch_limit at the access") {
  static int line = 0;
  const nki::Kernel k = nki::jit("too_tall", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto i = nl::arange(256)[nl::_, nl::newaxis];
    auto j = nl::arange(512)[nl::newaxis, nl::_];
    line = __LINE__ + 1;
    auto t = nl::load(a[i, j]);
    nl::store(out[i, j], t);
    return out;
  });
  auto a = nki::Tensor::from_floats({256, 512}, nki::DType::fp32, test::random_floats(256 * 512, 1));
  const std::string msg = test::user_error_of([&] { k[1](a); });
  CHECK(msg == fmt::format("too_tall (tests/error/partition_limit_test.cpp:{}): err_num_partition_exceed_arch_limit: "
                           "number of partitions 256 exceeds architecture limitation of 128",
                           line));
}

TEST_CASE("the error carries its parts: name, kernel, location") {
  const nki::Kernel k = nki::jit("too_tall_parts", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto i = nl::arange(129)[nl::_, nl::newaxis];
    auto j = nl::arange(8)[nl::newaxis, nl::_];
    nl::store(out[i, j], nl::load(a[i, j]));
    return out;
  });
  auto a = nki::Tensor::from_floats({129, 8}, nki::DType::fp32, test::random_floats(129 * 8, 1));
  try {
    k(a);
    FAIL("no error");
  } catch (const nki::UserError& e) {
    CHECK(e.name() == "err_num_partition_exceed_arch_limit");
    CHECK(e.kernel() == "too_tall_parts");
    CHECK(e.location().file == "tests/error/partition_limit_test.cpp");
    CHECK(e.detail() == "number of partitions 129 exceeds architecture limitation of 128");
  }
}
