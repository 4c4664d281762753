/** \file err_tensor_access_out_of_bound: an access the launch grid provably takes past a tensor's end. */
#include "nki/kernels.h"
#include "test_support.h"

namespace nl = nki::language;

TEST_CASE("tensor_add on a grid one tile too wide is out of bounds, with the index range and the valid range") {
  auto a = nki::Tensor::from_floats({256, 1024}, nki::DType::fp32, test::random_floats(256 * 1024, 1));
  // Grid [2, 3]: program_id(1) reaches 2, so the free index reaches 2*512 + 511 = 1535.
  CHECK(test::user_error_of([&] { nki::kernels::tensor_add()[2, 3](a, a); }) ==
        "tensor_add (kernels/src/tensor_add.cpp:19): err_tensor_access_out_of_bound: out-of-bound access to tensor a "
        "[256,1024] on dimension 1: index 512*pid1 + i1 ranges over [0, 1535], valid is [0, 1023]");
}

TEST_CASE("a negative offset is out of bounds too") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "shift_left",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto i = nl::arange(128)[nl::_, nl::newaxis];
        auto j = nl::arange(16)[nl::newaxis, nl::_];
        line = __LINE__ + 1;
        nl::store(out[i, j], nl::load(a[i, j - 1]));
        return out;
      },
      {"x"});
  auto a = nki::Tensor::from_floats({128, 16}, nki::DType::fp32, test::random_floats(128 * 16, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("shift_left (tests/error/access_out_of_bound_test.cpp:{}): err_tensor_access_out_of_bound: "
                    "out-of-bound access to tensor x [128,16] on dimension 1: index i1 - 1 ranges over [-1, 14], "
                    "valid is [0, 15]",
                    line));
}

TEST_CASE("program_id past the grid's rank is refused at trace time") {
  static int line = 0;
  const nki::Kernel k = nki::jit("axis_two", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    auto i = nl::program_id(1) + nl::arange(128)[nl::_, nl::newaxis];
    nl::store(out[i, 0], nl::load(a[i, 0]));
    return out;
  });
  auto a = nki::Tensor::from_floats({128, 1}, nki::DType::fp32, test::random_floats(128, 1));
  const std::string msg = test::user_error_of([&] { k[1](a); });
  CHECK(msg == fmt::format("axis_two (tests/error/access_out_of_bound_test.cpp:{}): err_program_id_axis_out_of_range: "
                    "program_id(1) on a launch grid of rank 1; valid axes are [0, 1)",
                    line));
}

TEST_CASE("an access found out of bounds as the kernel runs names the values of the loops around it, and only those") {
  // Loop l0 runs first; the shifted read past a's end (at ip = 127 of the last instance, which
  // `!=` masks cannot bound for the validator) comes after it, outside l0, then again inside l1.
  static int line_after = 0, line_inside = 0;
  const auto make = [](bool inside) {
    return nki::jit(
        inside ? "shift_in_loop" : "shift_after_loop",
        [inside](nl::tensor a) {
          auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
          auto [ip, jf] = nl::mgrid(128, 8);
          auto row = nl::program_id(0) * 128 + ip;
          for ([[maybe_unused]] auto r : nl::sequential_range(3)) nl::store(out[row, jf], nl::load(a[row, jf]));
          if (!inside) {
            line_after = __LINE__ + 1;
            nl::store(out[row, jf], nl::load(a[row + 1, jf], {.mask = (ip != 5)}), {.mask = (ip != 5)});
          } else {
            for (auto r : nl::sequential_range(2)) {
              line_inside = __LINE__ + 1;
              nl::store(out[row, jf], nl::load(a[row + r, jf], {.mask = (ip != 5)}), {.mask = (ip != 5)});
            }
          }
          return out;
        },
        {"a"});
  };
  auto a = nki::Tensor::from_floats({256, 8}, nki::DType::fp32, test::random_floats(256 * 8, 1));
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(std::string(nki::executor_name(ex)));
    const nki::Kernel after = make(false), inside = make(true);
    const std::string after_msg = test::user_error_of([&] { after[2].with({ex, nullptr}).run({a}); });
    CHECK(after_msg == fmt::format("shift_after_loop (tests/error/access_out_of_bound_test.cpp:{}): "
                                   "err_tensor_access_out_of_bound: instance [1] at tile coordinate [127,0] accesses "
                                   "tensor a [256,8] at index 256 on dimension 0, valid is [0, 255]",
                                   line_after));
    const std::string inside_msg = test::user_error_of([&] { inside[2].with({ex, nullptr}).run({a}); });
    CHECK(inside_msg == fmt::format("shift_in_loop (tests/error/access_out_of_bound_test.cpp:{}): "
                                    "err_tensor_access_out_of_bound: instance [1] l1=1 at tile coordinate [127,0] "
                                    "accesses tensor a [256,8] at index 256 on dimension 0, valid is [0, 255]",
                                    line_inside));
  }
}
