/** \file err_scalar_only_operation: tile ops given only scalars. */
#include "test_support.h"

namespace nl = nki::language;

namespace {
const char* kFile = "tests/error/err_scalar_only_operation_test.cpp";
auto input() { return nki::Tensor::from_floats({128, 8}, nki::DType::fp32, test::random_floats(128 * 8, 1)); }
}  // namespace

TEST_CASE("err_scalar_only_operation - nl::add of two scalars") {
  static int line = 0;
  const nki::Kernel k = nki::jit("add_scalars", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    auto s = nl::add(1.0, 2);
    nl::store(out.all(), s);
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("add_scalars ({}:{}): err_scalar_only_operation: nl::add needs at least one tile operand, got only "
                    "scalars",
                    kFile, line));
}

TEST_CASE("err_scalar_only_operation - nl::exp of a scalar") {
  static int line = 0;
  const nki::Kernel k = nki::jit("exp_scalar", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    auto s = nl::exp(1.0);
    nl::store(out.all(), s);
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("exp_scalar ({}:{}): err_scalar_only_operation: nl::exp needs a tile operand, got a scalar", kFile,
                    line));
}

TEST_CASE("err_scalar_only_operation - nl::store of a scalar") {
  static int line = 0;
  const nki::Kernel k = nki::jit("store_scalar", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    nl::store(out.all(), 3.0);
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("store_scalar ({}:{}): err_scalar_only_operation: nl::store writes a tile; got a scalar (fill a "
                    "tile first)",
                    kFile, line));
}

TEST_CASE("err_scalar_only_operation - a matmul operand that is a scalar") {
  static int line = 0;
  const nki::Kernel k = nki::jit("matmul_scalar", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm);
    auto t = nl::load(a.all());
    line = __LINE__ + 1;
    auto r = nl::matmul(t, 2.0, true);
    nl::store(out.all(), nl::copy(r));
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("matmul_scalar ({}:{}): err_scalar_only_operation: nl::matmul: the y operand is a scalar; it must "
                    "be a tile",
                    kFile, line));
}
