/** \file err_free_dim_mismatch: operands whose free dimensions do not broadcast. */
#include "test_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;

namespace {
const char* kFile = "tests/error/err_free_dim_mismatch_test.cpp";
auto input() { return nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 1)); }
}  // namespace

TEST_CASE("err_free_dim_mismatch - 64 and 32 columns") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "columns_differ",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto x = nl::load(a.all());
        auto y = nl::load(a[nl::_, nl::ds(0, 32)]);
        line = __LINE__ + 1;
        auto z = nl::maximum(x, y);
        nl::store(out.all(), z);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("columns_differ ({}:{}): err_free_dim_mismatch: nl::maximum operand shapes [128,64] and [128,32] "
                    "do not broadcast",
                    kFile, line));
}

TEST_CASE("err_free_dim_mismatch - isa::tensor_scalar with a [P, 2] operand") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "tensor_scalar_wide",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto x = nl::load(a.all());
        auto s = nl::load(a[nl::_, nl::ds(0, 2)]);
        line = __LINE__ + 1;
        auto z = isa::tensor_scalar(x, nl::multiply, s);
        nl::store(out.all(), z);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("tensor_scalar_wide ({}:{}): err_free_dim_mismatch: isa::tensor_scalar: an operand is a scalar or "
                    "a [128, 1] tile, got [128,2]",
                    kFile, line));
}

TEST_CASE("err_free_dim_mismatch - isa::activation with a [P, 4] scale") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "activation_wide_scale",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto x = nl::load(a.all());
        auto s = nl::load(a[nl::_, nl::ds(0, 4)]);
        line = __LINE__ + 1;
        auto z = isa::activation(nl::tanh, x, 0.0, s);
        nl::store(out.all(), z);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("activation_wide_scale ({}:{}): err_free_dim_mismatch: isa::activation: bias and scale are a "
                    "scalar or a [P, 1] tile, got [128,4]",
                    kFile, line));
}
