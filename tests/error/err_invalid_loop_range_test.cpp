/** \file err_invalid_loop_range: a loop with no iterations. */
#include "test_support.h"

namespace nl = nki::language;

namespace {
const char* kFile = "tests/error/err_invalid_loop_range_test.cpp";
auto input() { return nki::Tensor::from_floats({128, 8}, nki::DType::fp32, test::random_floats(128 * 8, 1)); }
}  // namespace

TEST_CASE("err_invalid_loop_range - affine_range(0)") {
  static int line = 0;
  const nki::Kernel k = nki::jit("empty_affine", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    const std::int64_t tiles = a.shape()[0] / 256;  // 0 for a 128-row input
    line = __LINE__ + 1;
    for (auto i : nl::affine_range(tiles)) nl::store(out[nl::ds(i * 128, 128), nl::_], nl::load(a.all()));
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("empty_affine ({}:{}): err_invalid_loop_range: nl::affine_range(0): the trip count must be "
                    "positive",
                    kFile, line));
}

TEST_CASE("err_invalid_loop_range - sequential_range of a negative count") {
  static int line = 0;
  const nki::Kernel k = nki::jit("negative_sequential", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    for (auto i : nl::sequential_range(-2)) nl::store(out[nl::ds(i * 128, 128), nl::_], nl::load(a.all()));
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("negative_sequential ({}:{}): err_invalid_loop_range: nl::sequential_range(-2): the trip count "
                    "must be positive",
                    kFile, line));
}

TEST_CASE("err_invalid_loop_range - a start, stop and step that give no value, and a step of 0") {
  static int line = 0;
  const nki::Kernel empty = nki::jit("empty_stepped", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    for (auto i : nl::affine_range(4, 0, 2)) nl::store(out[nl::ds(i * 128, 128), nl::_], nl::load(a.all()));
    return out;
  });
  auto a = input();
  const std::string empty_msg = test::user_error_of([&] { empty(a); });
  CHECK(empty_msg ==
        fmt::format("empty_stepped ({}:{}): err_invalid_loop_range: nl::affine_range(4, 0, 2): the range is empty; a "
                    "traced loop needs at least one iteration",
                    kFile, line));
  const nki::Kernel zero_step = nki::jit("zero_step", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    for (std::int64_t i : nl::static_range(0, 4, 0)) nl::store(out[nl::ds(i * 128, 128), nl::_], nl::load(a.all()));
    return out;
  });
  const std::string zero_step_msg = test::user_error_of([&] { zero_step(a); });
  CHECK(zero_step_msg ==
        fmt::format("zero_step ({}:{}): err_invalid_loop_range: nl::static_range(0, 4, 0): the step must not be 0",
                    kFile, line));
}

TEST_CASE("err_invalid_arange - arange(start, stop) with stop not past start") {
  static int line = 0;
  const nki::Kernel k = nki::jit("empty_arange", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    auto jf = nl::arange(5, 5)[nl::newaxis, nl::_];
    nl::store(out[nl::arange(128)[nl::_, nl::newaxis], jf], nl::load(a[nl::arange(128)[nl::_, nl::newaxis], jf]));
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("empty_arange ({}:{}): err_invalid_arange: arange(5, 5): stop must be greater than start",
                    kFile, line));
}
