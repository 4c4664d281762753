/** \file More simulated cores than CPUs: a trn2 chip's eight NeuronCores share one HBM and all run. */
#include "nki/kernels.h"
#include "test_support.h"

namespace nl = nki::language;

TEST_CASE("tensor_add over nc(8) on an eight-core trn2 device: each core runs its share, the sum is exact") {
  nki::sim::Device chip("trn2", 8);
  const std::int64_t P = 1024, F = 1024;
  auto a = nki::Tensor::from_floats({P, F}, nki::DType::bf16, test::random_floats(P * F, 21), chip);
  auto b = nki::Tensor::from_floats({P, F}, nki::DType::bf16, test::random_floats(P * F, 22), chip);
  const auto av = a.to_floats(), bv = b.to_floats();
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    nki::LaunchResult r = nki::kernels::tensor_add()[nl::nc(8), F / 512].with({ex, nullptr}).run({a, b});
    REQUIRE(r.cores.size() == 8);
    for (int c = 0; c < 8; ++c) {
      CHECK(r.cores[c].instances == std::vector<std::vector<std::int64_t>>{{c, 0}, {c, 1}});
    }
    CHECK(r.outputs[0].device().same_as(chip));
    const auto out = r.outputs[0].to_floats();
    for (std::size_t i = 0; i < out.size(); ++i) REQUIRE(out[i] == nki::round_to_dtype(av[i] + bv[i], nki::DType::bf16));
  }
}

TEST_CASE("a device's core count is checked against one chip of its target") {
  CHECK(test::user_error_of([] { nki::sim::Device("trn2", 9); }) ==
        "err_invalid_core_count: 9 NeuronCores requested on trn2; one chip has 1 to 8");
  CHECK(test::user_error_of([] { nki::sim::Device("trn5", 2); }) ==
        "err_unknown_target: unknown target \"trn5\"; expected one of trn1, inf2, trn2, trn3");
  CHECK(nki::sim::Device("trn1").cores() == 1);
  CHECK(nki::sim::Device().cores() == 2);
}

TEST_CASE("arguments on another device than the launch are refused") {
  nki::sim::Device other("trn2", 2);
  auto a = nki::Tensor::from_floats({128, 512}, nki::DType::fp32, test::random_floats(128 * 512, 1));
  auto b = nki::Tensor::from_floats({128, 512}, nki::DType::fp32, test::random_floats(128 * 512, 2), other);
  const int line = __LINE__ + 1;
  CHECK(test::user_error_of([&] { nki::kernels::tensor_add()[1, 1](a, b); }) ==
        fmt::format("tensor_add (tests/runtime/many_cores_test.cpp:{}): err_argument_device: argument 1 lives on another "
                    "device than the launch", line));
  CHECK(test::user_error_of([&] { nki::kernels::tensor_add()[1, 1](a); }) ==
        fmt::format("tensor_add (tests/runtime/many_cores_test.cpp:{}): err_argument_count: the kernel takes 2 tensors, "
                    "1 were passed", line + 3));
}

TEST_CASE("tensors and launches keep what they need alive: a device or kernel handle may go first") {
  nki::Tensor a = [] {
    nki::sim::Device scoped("trn2", 2);
    return nki::Tensor::from_floats({128, 512}, nki::DType::fp32, test::random_floats(128 * 512, 3), scoped);
  }();
  auto launch = nki::jit("scoped_add", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm);
    auto i = nl::arange(128)[nl::_, nl::newaxis];
    auto j = nl::arange(512)[nl::newaxis, nl::_];
    nl::store(out[i, j], nl::load(x[i, j]) + 1);
    return out;
  })[1];  // the Kernel returned by jit is a temporary
  nki::Tensor out = launch(a);
  CHECK(out.device().same_as(a.device()));
  CHECK(out.to_floats()[77] == a.to_floats()[77] + 1);
}
