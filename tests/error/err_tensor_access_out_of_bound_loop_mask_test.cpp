/** \file err_tensor_access_out_of_bound with loop variables and masks; a mask that covers the overflow is no error. */
#include "test_support.h"

namespace nl = nki::language;

namespace {
const char* kFile = "tests/error/err_tensor_access_out_of_bound_loop_mask_test.cpp";
}  // namespace

TEST_CASE("err_tensor_access_out_of_bound - a loop variable walks past the end") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "loop_overrun",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        for (auto i : nl::affine_range(3)) {
          line = __LINE__ + 1;
          auto t = nl::load(a[i * 128 + ip, jf]);
          nl::store(out[i * 128 + ip, jf], t);
        }
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("loop_overrun ({}:{}): err_tensor_access_out_of_bound: out-of-bound access to tensor a [256,64] "
                    "on dimension 0: index i0 + 128*l0 ranges over [0, 383], valid is [0, 255]",
                    kFile, line));
}

TEST_CASE("err_tensor_access_out_of_bound - a mask that does not cover the overflow names the loop value") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "mask_too_loose",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        for (auto i : nl::affine_range(3)) {
          auto m = (i * 128 + ip < 300);  // the tensor has 256 rows
          line = __LINE__ + 1;
          auto t = nl::load(a[i * 128 + ip, jf], {.mask = m});
          nl::store(out[i * 128 + ip, jf], t, {.mask = (i * 128 + ip < 256)});
        }
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("mask_too_loose ({}:{}): err_tensor_access_out_of_bound: out-of-bound access to tensor a "
                    "[256,64] on dimension 0: index i0 + 128*l0 ranges over [256, 299] under its mask at l0=2, valid "
                    "is [0, 255]",
                    kFile, line));
}

TEST_CASE("err_tensor_access_out_of_bound - a store whose free-dimension mask is off by one") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "store_mask_off_by_one",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto ip = nl::arange(128)[nl::_, nl::newaxis];
        auto jf = nl::arange(64)[nl::newaxis, nl::_];
        for (auto j : nl::affine_range(2)) {
          auto t = nl::load(a[ip, j * 64 + jf], {.mask = (j * 64 + jf < 100)});
          line = __LINE__ + 1;
          nl::store(out[ip, j * 64 + jf], t, {.mask = (j * 64 + jf <= 100)});
        }
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 100}, nki::DType::fp32, test::random_floats(128 * 100, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("store_mask_off_by_one ({}:{}): err_tensor_access_out_of_bound: out-of-bound access to tensor "
                    "tensor1 [128,100] on dimension 1: index i1 + 64*l0 ranges over [64, 100] under its mask at l0=1, "
                    "valid is [0, 99]",
                    kFile, line));
}

TEST_CASE("err_tensor_access_out_of_bound - a masked partial last tile that is covered runs, on both executors") {
  const nki::Kernel k = nki::jit(
      "masked_partial_tile",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        const std::int64_t rows = a.shape()[0];
        auto [ip, jf] = nl::mgrid(128, 64);
        for (auto i : nl::affine_range((rows + 127) / 128)) {
          auto m = (i * 128 + ip < rows);
          auto t = nl::load(a[i * 128 + ip, jf], {.mask = m});
          nl::store(out[i * 128 + ip, jf], nl::multiply(t, 2.0, {.mask = m}), {.mask = m});
        }
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({300, 64}, nki::DType::fp32, test::random_floats(300 * 64, 1));
  const auto in = a.to_floats();
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    const auto got = k.launch({}).with({ex, nullptr}).run({a}).outputs[0].to_floats();
    REQUIRE(got.size() == in.size());
    for (std::size_t e = 0; e < in.size(); ++e) REQUIRE(got[e] == in[e] * 2.0f);
  }
}

TEST_CASE("err_tensor_access_out_of_bound - a mask on program_id covers the last instance's partial tile") {
  const nki::Kernel k = nki::jit(
      "masked_partial_instance",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 16);
        auto row = nl::program_id(0) * 128 + ip;
        auto t = nl::load(a[row, jf], {.mask = (row < a.shape()[0])});
        nl::store(out[row, jf], t, {.mask = (row < a.shape()[0])});
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({200, 16}, nki::DType::fp32, test::random_floats(200 * 16, 2));
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    const auto got = k[2].with({ex, nullptr}).run({a}).outputs[0];
    CHECK(test::first_difference(got, a) == -1);
  }
}

TEST_CASE("err_tensor_access_out_of_bound - an overflow no mask can be proven about is caught at run time") {
  // `!=` is not a bound the validator applies, so the overflow is found by the executor.
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "runtime_overrun",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 8);
        line = __LINE__ + 1;
        auto t = nl::load(a[ip + 1, jf], {.mask = (ip != 5)});
        nl::store(out[ip, jf], t);
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 8}, nki::DType::fp32, test::random_floats(128 * 8, 1));
  const std::string msg = test::user_error_of([&] { k.launch({}).with({nki::Executor::reference, nullptr}).run({a}); });
  CHECK(msg == fmt::format("runtime_overrun ({}:{}): err_tensor_access_out_of_bound: instance (no grid) at tile coordinate [127,0] "
                    "accesses tensor a [128,8] at index 128 on dimension 0, valid is [0, 127]",
                    kFile, line));
}

TEST_CASE("err_tensor_access_out_of_bound - the halide executor refuses the unprovable overflow too") {
  const nki::Kernel k = nki::jit(
      "runtime_overrun_halide",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 8);
        auto t = nl::load(a[ip + 1, jf], {.mask = (ip != 5)});
        nl::store(out[ip, jf], t);
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 8}, nki::DType::fp32, test::random_floats(128 * 8, 1));
  try {
    k.launch({}).with({nki::Executor::halide, nullptr}).run({a});
    FAIL("the halide executor read past the end of tensor a without an error");
  } catch (const nki::UserError& e) {
    CHECK(e.name() == "err_tensor_access_out_of_bound");
    CHECK(e.kernel() == "runtime_overrun_halide");
  }
}
