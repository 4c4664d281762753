/** \file err_invalid_slice: a basic slice of no elements. */
#include "test_support.h"

namespace nl = nki::language;

namespace {
const char* kFile = "tests/error/err_invalid_slice_test.cpp";
auto input() { return nki::Tensor::from_floats({128, 8}, nki::DType::fp32, test::random_floats(128 * 8, 1)); }
}  // namespace

TEST_CASE("err_invalid_slice - nl::ds of size 0") {
  static int line = 0;
  const nki::Kernel k = nki::jit("empty_slice", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    auto t = nl::load(a[nl::_, nl::ds(4, 0)]);
    nl::store(out.all(), t);
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("empty_slice ({}:{}): err_invalid_slice: slice of dimension 1 of tensor in0 has size 0; sizes must "
                    "be positive",
                    kFile, line));
}

TEST_CASE("err_invalid_slice - nl::ds of a negative size in a store") {
  static int line = 0;
  const nki::Kernel k = nki::jit("negative_slice", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto t = nl::load(a.all());
    line = __LINE__ + 1;
    nl::store(out[nl::ds(0, -128), nl::_], t);
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("negative_slice ({}:{}): err_invalid_slice: slice of dimension 0 of tensor out has size -128; sizes "
                    "must be positive",
                    kFile, line));
}
