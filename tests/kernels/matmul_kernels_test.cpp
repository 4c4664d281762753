/** \file NKI's matmul tutorial kernels: every variant against the host matmul, both executors, bf16 and fp32. */
#include "kernel_check.h"

namespace nk = nki::kernels;
using nki::DType;

namespace {

/** The matmul tutorial's check: allclose(atol=1e-4, rtol=1e-2). */
constexpr kt::ref::Tolerance kMatmulTolerance{1e-4, 1e-2};

struct Case {
  std::int64_t k, m, n;
};

/**
 * With K blocks accumulated in SBUF in the inputs' dtype (NKI's fully optimized kernel), a bf16
 * result is rounded once per K block, as a partial sum: up to half a bf16 ulp of that partial
 * each, however small the final sum. A partial of 128 products of inputs in [-1, 1] stays below
 * 16 here (half an ulp there: 2^-5), so two blocks: 2 x 2^-5.
 */
constexpr kt::ref::Tolerance kTwoBf16Roundings{2.0 / 32, 1e-2};

void check_matmul(const nki::Kernel& kernel, const nki::GridSpec& grid, Case c, DType dt, std::uint32_t seed,
                  kt::ref::Tolerance tolerance = kMatmulTolerance) {
  CAPTURE(nki::dtype_name(dt));
  CAPTURE(c.k);
  CAPTURE(c.m);
  CAPTURE(c.n);
  const nki::Tensor lhsT = kt::input({c.k, c.m}, dt, seed);
  const nki::Tensor rhs = kt::input({c.k, c.n}, dt, seed + 1);
  const std::vector<double> want = kt::ref::matmul(lhsT.to_values(), rhs.to_values(), c.k, c.m, c.n);
  const nki::Tensor out = kt::check_kernel(kernel, grid, {lhsT, rhs}, want, tolerance);
  CHECK(out.dtype() == dt);
  CHECK(out.shape() == nki::Shape{c.m, c.n});
}

}  // namespace

TEST_CASE("matmul_basic - one tile, the tutorial's 64x128x512 and smaller") {
  for (DType dt : {DType::bf16, DType::fp32})
    for (Case c : {Case{128, 64, 512}, Case{32, 128, 100}}) {
      const std::vector<nki::Shape> shapes{{c.k, c.m}, {c.k, c.n}};
      check_matmul(nk::matmul_basic(), nk::matmul_basic_grid(shapes), c, dt, 11);
    }
}

TEST_CASE("matmul_tiled - PSUM accumulation over K tiles") {
  for (DType dt : {DType::bf16, DType::fp32})
    for (Case c : {Case{256, 256, 1024}, Case{384, 128, 512}})
      check_matmul(nk::matmul_tiled(), nk::matmul_tiled_grid({{c.k, c.m}, {c.k, c.n}}), c, dt, 21);
}

TEST_CASE("matmul_hoist_load - a column of K tiles loaded once per M and N tile") {
  for (DType dt : {DType::bf16, DType::fp32})
    for (Case c : {Case{256, 256, 1024}, Case{128, 384, 512}})
      check_matmul(nk::matmul_hoist_load(), nk::matmul_hoist_load_grid({{c.k, c.m}, {c.k, c.n}}), c, dt, 31);
}

TEST_CASE("matmul_block_free_dimension - blocks of 2x2 result tiles") {
  for (DType dt : {DType::bf16, DType::fp32})
    for (Case c : {Case{256, 256, 1024}, Case{128, 512, 2048}})
      check_matmul(nk::matmul_block_free_dimension(), nk::matmul_block_free_dimension_grid({{c.k, c.m}, {c.k, c.n}}), c, dt,
                   41);
}

TEST_CASE("matmul_fully_optimized - default blocks shrunk to small matrices") {
  for (DType dt : {DType::bf16, DType::fp32})
    for (Case c : {Case{256, 256, 1024}, Case{128, 128, 512}})
      check_matmul(nk::matmul_fully_optimized(), nk::matmul_fully_optimized_grid({{c.k, c.m}, {c.k, c.n}}), c, dt, 51);
}

TEST_CASE("matmul_fully_optimized - explicit blocks, sequential K blocks, split over two cores") {
  // 2 K blocks (sequential, SBUF accumulators of the inputs' dtype), 2 M blocks, 2 N blocks: one per core.
  const nk::MatmulBlocks b{.tiles_m = 1, .tiles_n = 1, .tiles_k = 1};
  const Case c{256, 256, 1024};
  for (DType dt : {DType::bf16, DType::fp32}) {
    const nki::GridSpec grid = nk::matmul_fully_optimized_grid({{c.k, c.m}, {c.k, c.n}}, b, 2);
    CHECK(grid.str() == "spmd_dim(1,nc(2))");
    check_matmul(nk::matmul_fully_optimized(b), grid, c, dt, 61, dt == DType::bf16 ? kTwoBf16Roundings : kMatmulTolerance);
  }
}

TEST_CASE("matmul kernels - shapes that do not tile are refused with the shapes named") {
  CHECK(test::user_error_of([] { nk::matmul_tiled_grid({{256, 128}, {128, 512}}); }) ==
        "matmul_tiled: err_input_shape_mismatch: lhsT [256,128] and rhs [128,512] must be [K,M] and [K,N] with the same K");
  CHECK(test::user_error_of([] { nk::matmul_tiled_grid({{128, 100}, {128, 512}}); }) ==
        "matmul_tiled: err_input_shape_not_tiled: lhsT [128,100] and rhs [128,512]: K must be a multiple of 128, M of "
        "128 and N of 512");
  CHECK(test::user_error_of([] { nk::matmul_basic_grid({{256, 64}, {256, 512}}); }) ==
        "matmul_basic: err_input_shape_not_tiled: lhsT [256,64] and rhs [256,512]: one tile needs K <= 128, M <= 128 "
        "and N <= 512");
  CHECK(test::user_error_of([] { nk::matmul_block_free_dimension_grid({{128, 128}, {128, 1024}}); }) ==
        "matmul_block_free_dimension: err_input_shape_not_tiled: lhsT [128,128] and rhs [128,1024]: K must be a "
        "multiple of 128, M of 256 and N of 1024");
  CHECK(test::user_error_of([] { nk::matmul_fully_optimized_grid({{128, 128}, {128, 512}}, {1, 1, 1}, 2); }) ==
        "matmul_fully_optimized: err_input_shape_not_tiled: rhs [128,512]: 1 N blocks of 512 do not split evenly over 2 "
        "instances");
  CHECK(test::user_error_of([] { nk::matmul_fully_optimized_grid({{128, 128}, {128, 512}}, {0, 1, 1}, 1); }) ==
        "matmul_fully_optimized: err_invalid_block_size: blocks of 0 x 1 x 1 tiles: every block holds at least one tile");
}
