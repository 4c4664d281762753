/** \file err_unexpected_output_dependencies: iterations of an affine_range writing the same elements. */
#include "test_support.h"

namespace nl = nki::language;

namespace {
const char* kFile = "tests/error/err_unexpected_output_dependencies_test.cpp";
}  // namespace

TEST_CASE("err_unexpected_output_dependencies - a store in an affine_range that ignores the loop variable") {
  static int loop_line = 0, line = 0;
  const nki::Kernel k = nki::jit(
      "store_ignores_loop",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 64}, a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        loop_line = __LINE__ + 1;
        for (auto i : nl::affine_range(4)) {
          auto t = nl::load(a[i * 128 + ip, jf]);
          line = __LINE__ + 1;
          nl::store(out[ip, jf], t);
        }
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({512, 64}, nki::DType::fp32, test::random_floats(512 * 64, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("store_ignores_loop ({0}:{1}): err_unexpected_output_dependencies: iterations of affine_range l0 "
                    "({0}:{2}, 4 iterations) write the same elements of tensor tensor1: the write does not depend on "
                    "the loop variable; index by the loop variable, or use sequential_range for a carried dependency",
                    kFile, line, loop_line));
}

TEST_CASE("err_unexpected_output_dependencies - consecutive iterations whose windows overlap") {
  static int loop_line = 0, line = 0;
  const nki::Kernel k = nki::jit(
      "overlapping_stores",
      [](nl::tensor a) {
        auto out = nl::ndarray({256, 64}, a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        loop_line = __LINE__ + 1;
        for (auto i : nl::affine_range(3)) {
          auto t = nl::load(a[i * 64 + ip, jf]);
          line = __LINE__ + 1;
          nl::store(out[i * 64 + ip, jf], t);
        }
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("overlapping_stores ({0}:{1}): err_unexpected_output_dependencies: iterations of affine_range l0 "
                    "({0}:{2}, 3 iterations) write the same elements of tensor tensor1: the writes of consecutive "
                    "iterations overlap; index by the loop variable, or use sequential_range for a carried dependency",
                    kFile, line, loop_line));
}

TEST_CASE("err_unexpected_output_dependencies - an sbuf accumulator written with = in an affine_range") {
  static int loop_line = 0, line = 0;
  const nki::Kernel k = nki::jit(
      "sbuf_carried_in_affine",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 64}, nl::float32, nl::shared_hbm);
        auto acc = nl::zeros({128, 64}, nl::float32, nl::sbuf, "acc");
        auto [ip, jf] = nl::mgrid(128, 64);
        loop_line = __LINE__ + 1;
        for (auto i : nl::affine_range(2)) {
          auto t = nl::load(a[i * 128 + ip, jf]);
          line = __LINE__ + 1;
          acc[ip, jf] = acc[ip, jf] + t;
        }
        nl::store(out[ip, jf], nl::copy(acc[ip, jf]));
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("sbuf_carried_in_affine ({0}:{1}): err_unexpected_output_dependencies: iterations of affine_range "
                    "l0 ({0}:{2}, 2 iterations) write the same elements of tensor acc: the write does not depend on "
                    "the loop variable; index by the loop variable, or use sequential_range for a carried dependency",
                    kFile, line, loop_line));
}

TEST_CASE("err_unexpected_output_dependencies - the inner affine_range of a nest is named") {
  static int loop_line = 0, line = 0;
  const nki::Kernel k = nki::jit(
      "inner_loop_ignored",
      [](nl::tensor a) {
        auto out = nl::ndarray({256, 64}, a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        for (auto i : nl::affine_range(2)) {
          loop_line = __LINE__ + 1;
          for (auto j : nl::affine_range(2)) {
            auto t = nl::load(a[i * 128 + ip, j * 64 + jf]);
            line = __LINE__ + 1;
            nl::store(out[i * 128 + ip, jf], t);
          }
        }
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 128}, nki::DType::fp32, test::random_floats(256 * 128, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("inner_loop_ignored ({0}:{1}): err_unexpected_output_dependencies: iterations of affine_range l1 "
                    "({0}:{2}, 2 iterations) write the same elements of tensor tensor1: the write does not depend on "
                    "the loop variable; index by the loop variable, or use sequential_range for a carried dependency",
                    kFile, line, loop_line));
}

namespace {
/** The elementwise sum of `blocks` consecutive [128, 64] blocks of a. */
std::vector<float> block_sums(const std::vector<float>& a, int blocks) {
  std::vector<float> want(128 * 64, 0.0f);
  for (int b = 0; b < blocks; ++b)
    for (int e = 0; e < 128 * 64; ++e) want[static_cast<std::size_t>(e)] += a[static_cast<std::size_t>(b * 128 * 64 + e)];
  return want;
}
}  // namespace

TEST_CASE("err_unexpected_output_dependencies - sequential_range carries an sbuf accumulator") {
  const nki::Kernel k = nki::jit(
      "sbuf_carried_in_sequential",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 64}, nl::float32, nl::shared_hbm);
        auto acc = nl::zeros({128, 64}, nl::float32, nl::sbuf);
        auto [ip, jf] = nl::mgrid(128, 64);
        for (auto i : nl::sequential_range(3)) {
          auto t = nl::load(a[i * 128 + ip, jf]);
          acc[ip, jf] = acc[ip, jf] + t;
        }
        nl::store(out[ip, jf], nl::copy(acc[ip, jf]));
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({384, 64}, nki::DType::fp32, test::random_floats(384 * 64, 1));
  const auto want = block_sums(a.to_floats(), 3);
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    const auto got = k.launch({}).with({ex, nullptr}).run({a}).outputs[0].to_floats();
    for (std::size_t e = 0; e < want.size(); ++e) REQUIRE(got[e] == want[e]);
  }
}

TEST_CASE("err_unexpected_output_dependencies - psum += in an affine_range accumulates") {
  const nki::Kernel k = nki::jit(
      "psum_accumulate_in_affine",
      [](nl::tensor lhs_t, nl::tensor rhs) {
        auto out = nl::ndarray({64, 32}, nl::float32, nl::shared_hbm);
        auto acc = nl::zeros({64, 32}, nl::float32, nl::psum);
        for (auto kk : nl::affine_range(3)) {
          auto x = nl::load(lhs_t[nl::ds(kk * 128, 128), nl::_]);
          auto y = nl::load(rhs[nl::ds(kk * 128, 128), nl::_]);
          acc[nl::_, nl::_] += nl::matmul(x, y, true);
        }
        nl::store(out.all(), nl::copy(acc));
        return out;
      },
      {"lhs_t", "rhs"});
  // Small integers: every fp32 sum is exact, whatever the order.
  std::vector<float> xv(384 * 64), yv(384 * 32);
  for (std::size_t e = 0; e < xv.size(); ++e) xv[e] = static_cast<float>(static_cast<int>(e % 7) - 3);
  for (std::size_t e = 0; e < yv.size(); ++e) yv[e] = static_cast<float>(static_cast<int>(e % 5) - 2);
  auto x = nki::Tensor::from_floats({384, 64}, nki::DType::fp32, xv);
  auto y = nki::Tensor::from_floats({384, 32}, nki::DType::fp32, yv);
  std::vector<float> want(64 * 32, 0.0f);
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < 32; ++n)
      for (int kk = 0; kk < 384; ++kk) want[static_cast<std::size_t>(m * 32 + n)] += xv[kk * 64 + m] * yv[kk * 32 + n];
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    const auto got = k.launch({}).with({ex, nullptr}).run({x, y}).outputs[0].to_floats();
    for (std::size_t e = 0; e < want.size(); ++e) REQUIRE(got[e] == want[e]);
  }
}

TEST_CASE("err_unexpected_output_dependencies - a tensor allocated inside the affine_range is fresh each iteration") {
  const nki::Kernel k = nki::jit(
      "fresh_buffer_per_iteration",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        for (auto i : nl::affine_range(2)) {
          auto buf = nl::ndarray({128, 64}, a.dtype(), nl::sbuf);
          buf[ip, jf] = nl::load(a[i * 128 + ip, jf]);
          nl::store(out[i * 128 + ip, jf], nl::copy(buf[ip, jf]));
        }
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 1));
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    CHECK(test::first_difference(k.launch({}).with({ex, nullptr}).run({a}).outputs[0], a) == -1);
  }
}
