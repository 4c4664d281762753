/** \file matmul_basic: NKI's first matmul tutorial kernel, one tile (K <= 128, M <= 128, N <= 512). */
#include <fmt/format.h>

#include "kernel_inputs.h"
#include "nki/kernels.h"
#include "nki/nki.h"

namespace nl = nki::language;

namespace nki::kernels {

const Kernel& matmul_basic() {
  static const Kernel kernel = nki::jit(
      "matmul_basic",
      [](nl::tensor lhsT, nl::tensor rhs) {
        const std::int64_t K = lhsT.shape()[0], M = lhsT.shape()[1], N = rhs.shape()[1];
        auto result = nl::ndarray({M, N}, lhsT.dtype(), nl::shared_hbm, "result");
        // The contraction axis K is the partition axis of both operands (layout constraint #1).
        auto lhs_ix = nl::mgrid(K, M);
        auto rhs_ix = nl::mgrid(K, N);
        auto out_ix = nl::mgrid(M, N);
        auto lhs_tile = nl::load(lhsT[lhs_ix.p, lhs_ix.x]);
        auto rhs_tile = nl::load(rhs[rhs_ix.p, rhs_ix.x]);
        auto result_psum = nl::matmul(lhs_tile, rhs_tile, true);
        auto result_sbuf = nl::copy(result_psum, {.dtype = result.dtype()});
        nl::store(result[out_ix.p, out_ix.x], result_sbuf);
        return result;
      },
      {"lhsT", "rhs"});
  return kernel;
}

GridSpec matmul_basic_grid(const std::vector<Shape>& shapes) {
  const MatmulDims d = matmul_dims("matmul_basic", shapes);
  if (d.k < 1 || d.k > 128 || d.m < 1 || d.m > 128 || d.n < 1 || d.n > 512) {
    throw UserError("err_input_shape_not_tiled", "matmul_basic", {},
                    fmt::format("lhsT {} and rhs {}: one tile needs K <= 128, M <= 128 and N <= 512", shape_str(shapes[0]),
                                shape_str(shapes[1])));
  }
  return GridSpec{};
}

}  // namespace nki::kernels
