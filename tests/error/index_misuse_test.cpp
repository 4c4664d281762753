/** \file Index expressions that cannot be formed: shapes that do not broadcast, a wrong expansion. */
#include "test_support.h"

namespace nl = nki::language;

TEST_CASE("adding indices whose shapes do not broadcast names the kernel and where the index came from") {
  static int line = 0;
  const nki::Kernel k = nki::jit("bad_sum", [](nl::tensor a) {
    line = __LINE__ + 1;
    auto i = nl::arange(128)[nl::_, nl::newaxis];  // (128, 1)
    auto j = nl::arange(64)[nl::_, nl::newaxis];   // (64, 1)
    auto ij = i + j;
    nl::store(a[ij, 0], nl::load(a[ij, 0]));
  });
  auto a = nki::Tensor::from_floats({128, 1}, nki::DType::fp32, test::random_floats(128, 1));
  const std::string msg = test::user_error_of([&] { k.launch({}).run({a}); });
  CHECK(msg == fmt::format("bad_sum (tests/error/index_misuse_test.cpp:{}): err_index_shape_mismatch: index +: index "
                           "shapes [128,1] and [64,1] do not broadcast",
                           line));
}

TEST_CASE("expanding an arange with two slices is refused") {
  static int line = 0;
  const nki::Kernel k = nki::jit("bad_expand", [](nl::tensor a) {
    line = __LINE__ + 1;
    auto i = nl::arange(8)[nl::_, nl::_];
    nl::store(a[i, 0], nl::load(a[i, 0]));
  });
  auto a = nki::Tensor::from_floats({8, 1}, nki::DType::fp32, test::random_floats(8, 1));
  const std::string msg = test::user_error_of([&] { k.launch({}).run({a}); });
  CHECK(msg == fmt::format("bad_expand (tests/error/index_misuse_test.cpp:{}): err_index_expand: a 1-D arange expands "
                           "with exactly one `_` (got 2 in 2 subscripts)",
                           line));
}

TEST_CASE("a DSL call outside a kernel body is err_outside_kernel at the call") {
  const int line = __LINE__ + 1;
  const std::string msg = test::user_error_of([] { nl::program_id(0); });
  CHECK(msg == fmt::format("(tests/error/index_misuse_test.cpp:{}): err_outside_kernel: nl::program_id was called "
                           "outside a kernel; DSL calls are only valid while nki::jit traces a kernel body",
                           line));
}
