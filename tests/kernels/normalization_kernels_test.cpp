/** \file softmax, rmsnorm and layernorm: row tiles of 128 with a masked last tile, both executors, bf16 and fp32. */
#include "kernel_check.h"
#include "nki/traced_kernel.h"

namespace nk = nki::kernels;
using nki::DType;

namespace {

/** fp32: the RMSNorm tutorial's allclose(atol=1e-5, rtol=1e-3); bf16 outputs: rtol widened to bf16's rounding. */
kt::ref::Tolerance tolerance(DType dt) { return dt == DType::fp32 ? kt::ref::Tolerance{1e-5, 1e-3} : kt::ref::Tolerance{1e-5, 1e-2}; }

const nki::Shape kShapes[] = {{250, 64}, {128, 512}, {77, 1000}};  // 250 and 77 rows: a masked last tile

}  // namespace

TEST_CASE("softmax - each row sums to one, matches the host") {
  for (DType dt : {DType::fp32, DType::bf16})
    for (const nki::Shape& s : kShapes) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const nki::Tensor x = kt::input(s, dt, 71, -4.0f, 4.0f);
      const auto want = kt::ref::softmax(x.to_values(), s[0], s[1]);
      kt::check_kernel(nk::softmax(), nk::softmax_grid({s}), {x}, want, tolerance(dt));
    }
}

TEST_CASE("rmsnorm - rows not a multiple of 128 are masked, matches the host") {
  for (DType dt : {DType::fp32, DType::bf16})
    for (const nki::Shape& s : kShapes) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const nki::Tensor a = kt::input(s, dt, 81);
      const nki::Tensor g = kt::input({s[1]}, dt, 82, 0.5f, 1.5f);  // a vector [D], as NKI's tutorial
      const auto want = kt::ref::rmsnorm(a.to_values(), g.to_values(), s[0], s[1]);
      kt::check_kernel(nk::rmsnorm(), nk::rmsnorm_grid({a.shape(), g.shape()}), {a, g}, want, tolerance(dt));
    }
}

TEST_CASE("layernorm - zero mean and unit variance per row, then gamma and beta") {
  for (DType dt : {DType::fp32, DType::bf16})
    for (const nki::Shape& s : kShapes) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const nki::Tensor x = kt::input(s, dt, 91, -3.0f, 5.0f);
      const nki::Tensor gamma = kt::input({1, s[1]}, dt, 92, 0.5f, 1.5f);
      const nki::Tensor beta = kt::input({1, s[1]}, dt, 93);
      const auto want = kt::ref::layernorm(x.to_values(), gamma.to_values(), beta.to_values(), s[0], s[1],
                                           nk::kLayernormEpsilon);
      kt::check_kernel(nk::layernorm(), nk::layernorm_grid({x.shape(), gamma.shape(), beta.shape()}), {x, gamma, beta},
                       want, tolerance(dt));
    }
}

TEST_CASE("layernorm - epsilon is part of the kernel") {
  // Constant rows: var = 0, so the output is beta exactly when epsilon is huge, and the kernels differ.
  const nki::Tensor x = nki::Tensor::from_floats({4, 8}, DType::fp32, std::vector<float>(32, 3.0f));
  const nki::Tensor gamma = nki::Tensor::from_floats({1, 8}, DType::fp32, std::vector<float>(8, 2.0f));
  const nki::Tensor beta = nki::Tensor::from_floats({1, 8}, DType::fp32, std::vector<float>(8, 0.25f));
  const auto want = kt::ref::layernorm(x.to_values(), gamma.to_values(), beta.to_values(), 4, 8, 1.0);
  kt::check_kernel(nk::layernorm(1.0), {}, {x, gamma, beta}, want, {0, 0});
  const std::vector<nki::Shape> shapes{x.shape(), gamma.shape(), beta.shape()};
  const std::vector<DType> dtypes(3, DType::fp32);
  CHECK(nk::layernorm(1.0).trace(shapes, dtypes, {})->hash != nk::layernorm().trace(shapes, dtypes, {})->hash);
}

TEST_CASE("normalization kernels - mismatched weights are refused with the shapes named") {
  CHECK(test::user_error_of([] { nk::rmsnorm_grid({{250, 64}, {32}}); }) ==
        "rmsnorm: err_input_shape_mismatch: g_tensor [32] must be the vector [64] for a_tensor [250,64]");
  CHECK(test::user_error_of([] { nk::rmsnorm_grid({{250, 64}, {1, 64}}); }) ==
        "rmsnorm: err_input_shape_mismatch: g_tensor [1,64] must be the vector [64] for a_tensor [250,64]");
  CHECK(test::user_error_of([] { nk::layernorm_grid({{250, 64}, {1, 64}, {2, 64}}); }) ==
        "layernorm: err_input_shape_mismatch: beta_vector [2,64] must be [1,64] for input_tensor [250,64]");
  CHECK(test::user_error_of([] { nk::softmax_grid({{250}}); }) ==
        "softmax: err_input_shape_mismatch: x [250] must be a 2-D [rows, cols] matrix");
}

TEST_CASE("normalization kernels - split over two cores, the last run of row tiles partly masked") {
  // [300, 64]: 3 row tiles, 2 per instance (one per core); instance 1's second tile (rows 384..511) is all masked.
  const nki::GridSpec grid{{nki::language::spmd_dim(1, nki::language::nc(2))}};
  const nki::Shape s{300, 64};
  const nki::Tensor x = kt::input(s, DType::fp32, 121, -4.0f, 4.0f);
  const nki::Tensor g = kt::input({1, s[1]}, DType::fp32, 122, 0.5f, 1.5f);
  const nki::Tensor beta = kt::input({1, s[1]}, DType::fp32, 123);
  const auto xv = x.to_values(), gv = g.to_values(), bv = beta.to_values();
  kt::check_kernel(nk::softmax(), grid, {x}, kt::ref::softmax(xv, s[0], s[1]), tolerance(DType::fp32));
  const nki::Tensor g_vector = kt::input({s[1]}, DType::fp32, 122, 0.5f, 1.5f);
  kt::check_kernel(nk::rmsnorm(), grid, {x, g_vector}, kt::ref::rmsnorm(xv, g_vector.to_values(), s[0], s[1]),
                   tolerance(DType::fp32));
  kt::check_kernel(nk::layernorm(), grid, {x, g, beta},
                   kt::ref::layernorm(xv, gv, bv, s[0], s[1], nk::kLayernormEpsilon), tolerance(DType::fp32));
}
