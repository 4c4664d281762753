/** \file err_unsupported_reduction_axis (and err_unsupported_reduction_op): reductions run over free axes only. */
#include "test_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;

namespace {
const char* kFile = "tests/error/err_unsupported_reduction_axis_test.cpp";
auto input() { return nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 1)); }
}  // namespace

TEST_CASE("err_unsupported_reduction_axis - nl::sum over the partition axis") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "sum_partitions",
      [](nl::tensor a) {
        auto out = nl::ndarray({1, 64}, a.dtype(), nl::shared_hbm);
        auto t = nl::load(a.all());
        line = __LINE__ + 1;
        auto s = nl::sum(t, 0, {.keepdims = true});
        nl::store(out.all(), s);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("sum_partitions ({}:{}): err_unsupported_reduction_axis: nl::sum over axis 0 of a tile of shape "
                    "[128,64]: axis 0 is the partition dimension; reductions run over free axes (1..1)",
                    kFile, line));
}

TEST_CASE("err_unsupported_reduction_axis - nl::max over an axis the tile does not have") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "max_axis_two",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 1}, a.dtype(), nl::shared_hbm);
        auto t = nl::load(a.all());
        line = __LINE__ + 1;
        auto s = nl::max(t, {1, 2});
        nl::store(out.all(), s);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("max_axis_two ({}:{}): err_unsupported_reduction_axis: nl::max over axis 2 of a tile of shape "
                    "[128,64]; valid free axes are 1..1",
                    kFile, line));
}

TEST_CASE("err_unsupported_reduction_axis - isa::tensor_reduce over a negative axis") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "reduce_negative_axis",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 1}, a.dtype(), nl::shared_hbm);
        auto t = nl::load(a.all());
        line = __LINE__ + 1;
        auto s = isa::tensor_reduce(t, nl::add, -1, true);
        nl::store(out.all(), s);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("reduce_negative_axis ({}:{}): err_unsupported_reduction_axis: nl::sum over axis -1 of a tile of "
                    "shape [128,64]; valid free axes are 1..1",
                    kFile, line));
}

TEST_CASE("err_unsupported_reduction_op - isa::tensor_reduce with multiply") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "reduce_multiply",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 1}, a.dtype(), nl::shared_hbm);
        auto t = nl::load(a.all());
        line = __LINE__ + 1;
        auto s = isa::tensor_reduce(t, nl::multiply, 1, true);
        nl::store(out.all(), s);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("reduce_multiply ({}:{}): err_unsupported_reduction_op: isa::tensor_reduce with op multiply; "
                    "supported are add, average, maximum, minimum",
                    kFile, line));
}
