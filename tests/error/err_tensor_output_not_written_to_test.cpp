/** \file err_tensor_output_not_written_to: a returned output that no store writes. */
#include "test_support.h"

namespace nl = nki::language;

namespace {
const char* kFile = "tests/error/err_tensor_output_not_written_to_test.cpp";
}

TEST_CASE("err_tensor_output_not_written_to - an ndarray returned without a store, at its allocation") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "forgot_store",
      [](nl::tensor a) {
        line = __LINE__ + 1;
        auto out = nl::ndarray({128, 64}, a.dtype(), nl::shared_hbm, "result");
        auto [ip, jf] = nl::mgrid(128, 64);
        auto t = nl::exp(nl::load(a[ip, jf]));
        (void)t;
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("forgot_store ({}:{}): err_tensor_output_not_written_to: output tensor result [128,64] is returned "
                    "but no nl::store writes it",
                    kFile, line));
}

TEST_CASE("err_tensor_output_not_written_to - the second of two outputs is never written") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "second_output_unwritten",
      [](nl::tensor a) {
        auto first = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        line = __LINE__ + 1;
        auto second = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        nl::store(first.all(), nl::load(a.all()));
        return std::tuple{first, second};
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 1));
  const std::string msg = test::user_error_of([&] { k.launch({}).run({a}); });
  CHECK(msg == fmt::format("second_output_unwritten ({}:{}): err_tensor_output_not_written_to: output tensor tensor2 "
                    "[128,64] is returned but no nl::store writes it",
                    kFile, line));
}

TEST_CASE("err_tensor_output_not_written_to - an output filled by nl::zeros or nl::full counts as written") {
  const nki::Kernel k = nki::jit(
      "filled_outputs",
      [](nl::tensor a) {
        auto z = nl::zeros(a.shape(), a.dtype(), nl::shared_hbm);
        auto f = nl::full(a.shape(), -1.5, a.dtype(), nl::shared_hbm);
        return std::tuple{z, f};
      },
      {"a"});
  auto a = nki::Tensor::from_floats({4, 8}, nki::DType::bf16, test::random_floats(32, 1));
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    auto r = k.launch({}).with({ex, nullptr}).run({a});
    REQUIRE(r.outputs.size() == 2);
    for (float v : r.outputs[0].to_floats()) REQUIRE(v == 0.0f);
    for (float v : r.outputs[1].to_floats()) REQUIRE(v == -1.5f);
  }
}
