/** \file err_shared_hbm_must_in_kernel_level: a shared_hbm allocation inside a loop. */
#include "test_support.h"

namespace nl = nki::language;

namespace {
const char* kFile = "tests/error/err_shared_hbm_must_in_kernel_level_test.cpp";
}  // namespace

TEST_CASE("err_shared_hbm_must_in_kernel_level - ndarray in shared_hbm inside an affine_range") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "output_in_loop",
      [](nl::tensor a) {
        auto [ip, jf] = nl::mgrid(128, 64);
        for (auto i : nl::affine_range(2)) {
          line = __LINE__ + 1;
          auto out = nl::ndarray({128, 64}, a.dtype(), nl::shared_hbm);
          nl::store(out[ip, jf], nl::load(a[i * 128 + ip, jf]));
        }
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 1));
  const std::string msg = test::user_error_of([&] { k.launch({}).run({a}); });
  CHECK(msg == fmt::format("output_in_loop ({}:{}): err_shared_hbm_must_in_kernel_level: nl::ndarray(..., "
                    "buffer=shared_hbm) inside a loop; shared_hbm tensors are allocated at the top level of the kernel",
                    kFile, line));
}

TEST_CASE("err_shared_hbm_must_in_kernel_level - zeros in shared_hbm inside a sequential_range") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "zeros_in_loop",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        for (auto i : nl::sequential_range(2)) {
          line = __LINE__ + 1;
          auto scratch = nl::zeros({128, 64}, a.dtype(), nl::shared_hbm);
          nl::store(out[i * 128 + ip, jf], nl::load(a[i * 128 + ip, jf]));
          nl::store(scratch[ip, jf], nl::load(a[i * 128 + ip, jf]));
        }
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("zeros_in_loop ({}:{}): err_shared_hbm_must_in_kernel_level: nl::zeros(..., buffer=shared_hbm) "
                    "inside a loop; shared_hbm tensors are allocated at the top level of the kernel",
                    kFile, line));
}

TEST_CASE("err_shared_hbm_must_in_kernel_level - private_hbm and sbuf may be allocated inside a loop") {
  const nki::Kernel k = nki::jit(
      "private_in_loop",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        for (auto i : nl::affine_range(2)) {
          auto scratch = nl::ndarray({128, 64}, a.dtype(), nl::private_hbm);
          nl::store(scratch[ip, jf], nl::load(a[i * 128 + ip, jf]));
          nl::store(out[i * 128 + ip, jf], nl::load(scratch[ip, jf]));
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
