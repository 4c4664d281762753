/** \file err_nested_kernel_with_spmd_grid: launching a kernel on a grid from inside another kernel's body. */
#include "test_support.h"

namespace nl = nki::language;

namespace {
const nki::Kernel& inner_copy() {
  static const nki::Kernel k = nki::jit(
      "inner_copy",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 8);
        nl::store(out[nl::program_id(0) * 128 + ip, jf], nl::load(a[nl::program_id(0) * 128 + ip, jf]));
        return out;
      },
      {"a"});
  return k;
}
}  // namespace

// The message names the line of the inner launch call (nki::CallSite), inside the outer kernel's body.
TEST_CASE("err_nested_kernel_with_spmd_grid - a kernel body launches another kernel on a grid") {
  static int launch_line = 0;
  const nki::Kernel outer = nki::jit(
      "outer_launcher",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        nki::Tensor host({256, 8}, nki::DType::fp32);
        launch_line = __LINE__ + 1;
        inner_copy()[2](host);
        auto [ip, jf] = nl::mgrid(128, 8);
        nl::store(out[ip, jf], nl::load(a[ip, jf]));
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 8}, nki::DType::fp32, test::random_floats(256 * 8, 1));
  const std::string msg = test::user_error_of([&] { outer(a); });
  CHECK(msg == fmt::format("outer_launcher (tests/error/err_nested_kernel_with_spmd_grid_test.cpp:{}): "
                           "err_nested_kernel_with_spmd_grid: kernel inner_copy is launched while kernel outer_launcher "
                           "is being traced; a kernel cannot launch another kernel with a grid (call a plain C++ helper "
                           "instead)",
                           launch_line));
}

TEST_CASE("err_nested_kernel_with_spmd_grid - the launching kernel still works once the nested launch is gone") {
  const nki::Kernel outer = nki::jit(
      "outer_helper",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 8);
        auto body = [&](nl::index base) { nl::store(out[base + ip, jf], nl::load(a[base + ip, jf])); };
        for (auto i : nl::static_range(2)) body(nl::index(i * 128));
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 8}, nki::DType::fp32, test::random_floats(256 * 8, 1));
  CHECK(test::first_difference(outer(a), a) == -1);
}
