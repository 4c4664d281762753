/**
 * \file A launch's own errors (those no line of the kernel body explains) carry the file:line of
 * the launch call; errors of the body keep the body's line.
 */
#include "nki/kernels.h"
#include "test_support.h"

namespace nl = nki::language;

namespace {

constexpr const char* kThisFile = "tests/runtime/launch_call_site_test.cpp";

nki::Tensor rows(std::int64_t r, std::int64_t c) {
  return nki::Tensor::from_floats({r, c}, nki::DType::fp32, std::vector<float>(static_cast<std::size_t>(r * c), 1.0f));
}

}  // namespace

TEST_CASE("err_argument_count names the line of the launch call, whichever way the kernel is called") {
  const nki::Tensor a = rows(128, 512);
  const std::string count = "err_argument_count: the kernel takes 2 tensors, 1 were passed";
  int line = __LINE__ + 1;
  CHECK(test::user_error_of([&] { (void)nki::kernels::tensor_add()[1, 1](a); }) ==
        fmt::format("tensor_add ({}:{}): {}", kThisFile, line, count));
  line = __LINE__ + 1;
  CHECK(test::user_error_of([&] { (void)nki::kernels::tensor_add().launch(nki::parse_grid("1,1")).run({a}); }) ==
        fmt::format("tensor_add ({}:{}): {}", kThisFile, line, count));
  // A kernel without a grid, called without arguments.
  line = __LINE__ + 1;
  CHECK(test::user_error_of([&] { (void)nki::kernels::tensor_add()(); }) ==
        fmt::format("tensor_add ({}:{}): err_argument_count: the kernel takes 2 tensors, 0 were passed", kThisFile, line));
}

TEST_CASE("err_grid_exceeds_cores names the line of the launch call") {
  const nki::Tensor a = rows(512, 512);
  const int line = __LINE__ + 1;
  CHECK(test::user_error_of([&] { (void)nki::kernels::tensor_add()[nl::nc(4), 1](a, a); }) ==
        fmt::format("tensor_add ({}:{}): err_grid_exceeds_cores: grid \"nc(4),1\" spreads over 4 NeuronCores but the "
                    "device has 2",
                    kThisFile, line));
}

TEST_CASE("an error of the kernel body keeps the body's line, not the launch call's") {
  int body_line = 0;
  const nki::Kernel k = nki::jit(
      "reads_too_far",
      [&](nl::tensor a) {
        auto c = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "c");
        auto i = nl::arange(256)[nl::_, nl::newaxis];
        auto j = nl::arange(8)[nl::newaxis, nl::_];
        body_line = __LINE__ + 1;
        nl::store(c[i, j], nl::load(a[i, j]));
        return c;
      },
      {"a"});
  const std::string what = test::user_error_of([&] { (void)k(rows(256, 8)); });
  CHECK(what.starts_with(fmt::format("reads_too_far ({}:{}): ", kThisFile, body_line)));
}

TEST_CASE("CallSite::unknown(): a launch made on a user's behalf names no line of its own") {
  const nki::Tensor a = rows(128, 512);
  CHECK(test::user_error_of([&] {
          (void)nki::kernels::tensor_add().launch(nki::parse_grid("1,1")).run({a}, nki::CallSite::unknown());
        }) == "tensor_add: err_argument_count: the kernel takes 2 tensors, 1 were passed");
}
