/** \file transpose2d and average_pool2d: SBUF access patterns, both executors, several shapes and dtypes. */
#include "kernel_check.h"

namespace nk = nki::kernels;
using nki::DType;

TEST_CASE("transpose2d - each row's matrix transposed, exactly") {
  for (DType dt : {DType::fp32, DType::bf16, DType::int32})
    for (const nki::Shape& s : {nki::Shape{5, 3, 4}, nki::Shape{128, 16, 32}, nki::Shape{7, 1, 9}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const nki::Tensor in = kt::input(s, dt, 101, -100.0f, 100.0f);
      const nki::Tensor out = kt::check_kernel(nk::transpose2d(), nk::transpose2d_grid({s}), {in},
                                               kt::ref::transpose2d(in.to_values(), s[0], s[1], s[2]), {0, 0});
      CHECK(out.shape() == nki::Shape{s[0], s[2], s[1]});
    }
}

TEST_CASE("average_pool2d - the mean of each pool window") {
  for (DType dt : {DType::fp32, DType::bf16})
    for (const nki::Shape& s : {nki::Shape{2, 4, 6}, nki::Shape{128, 16, 32}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const nki::Tensor in = kt::input(s, dt, 111, -4.0f, 4.0f);
      // fp32: numpy's allclose defaults (the tutorial's check); bf16 outputs: rtol widened to bf16's rounding.
      const kt::ref::Tolerance tol = dt == DType::fp32 ? kt::ref::Tolerance{1e-8, 1e-5} : kt::ref::Tolerance{1e-8, 1e-2};
      const nki::Tensor out = kt::check_kernel(nk::average_pool2d(), nk::average_pool2d_grid({s}, 2), {in},
                                               kt::ref::average_pool2d(in.to_values(), s[0], s[1], s[2], 2), tol);
      CHECK(out.shape() == nki::Shape{s[0], s[1] / 2, s[2] / 2});
    }
  const nki::Tensor in = kt::input({3, 9, 6}, DType::fp32, 112);
  kt::check_kernel(nk::average_pool2d(3), nk::average_pool2d_grid({in.shape()}, 3), {in},
                   kt::ref::average_pool2d(in.to_values(), 3, 9, 6, 3), {1e-8, 1e-5});
}

TEST_CASE("access-pattern kernels - shapes they cannot take are refused with the shape named") {
  CHECK(test::user_error_of([] { nk::transpose2d_grid({{200, 3, 4}}); }) ==
        "transpose2d: err_input_shape_mismatch: in_tensor [200,3,4] must be [P, Y, X] with P <= 128 partitions");
  CHECK(test::user_error_of([] { nk::average_pool2d_grid({{2, 5, 6}}, 2); }) ==
        "average_pool2d: err_input_shape_mismatch: in_tensor [2,5,6] must be [C, H, W] with C <= 128 partitions and "
        "H, W multiples of the pool size 2");
}
