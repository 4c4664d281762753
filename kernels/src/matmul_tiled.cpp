/** \file matmul_tiled: NKI's tiled matmul tutorial kernel, [128 x 512] result tiles accumulated in PSUM over K tiles. */
#include "kernel_inputs.h"
#include "matmul_tiles.h"
#include "nki/kernels.h"
#include "nki/nki.h"

namespace nl = nki::language;

namespace nki::kernels {

const Kernel& matmul_tiled() {
  static const Kernel kernel = nki::jit(
      "matmul_tiled",
      [](nl::tensor lhsT, nl::tensor rhs) {
        const std::int64_t K = lhsT.shape()[0], M = lhsT.shape()[1], N = rhs.shape()[1];
        auto result = nl::ndarray({M, N}, lhsT.dtype(), nl::shared_hbm, "result");
        for (auto m : nl::affine_range(M / TILE_M)) {
          for (auto n : nl::affine_range(N / TILE_N)) {
            auto res_psum = nl::zeros({TILE_M, TILE_N}, nl::float32, nl::psum, "res_psum");
            for (auto k : nl::affine_range(K / TILE_K)) {
              auto lhsT_tile = nl::ndarray({TILE_K, TILE_M}, lhsT.dtype(), nl::sbuf, "lhsT_tile");
              auto rhs_tile = nl::ndarray({TILE_K, TILE_N}, rhs.dtype(), nl::sbuf, "rhs_tile");
              lhsT_tile[nl::_, nl::_] = nl::load(lhsT[nl::ds(k * TILE_K, TILE_K), nl::ds(m * TILE_M, TILE_M)]);
              rhs_tile[nl::_, nl::_] = nl::load(rhs[nl::ds(k * TILE_K, TILE_K), nl::ds(n * TILE_N, TILE_N)]);
              res_psum[nl::_, nl::_] += nl::matmul(lhsT_tile[nl::_, nl::_], rhs_tile[nl::_, nl::_], true);
            }
            auto res_sb = nl::copy(res_psum[nl::_, nl::_], {.dtype = result.dtype()});
            nl::store(result[nl::ds(m * TILE_M, TILE_M), nl::ds(n * TILE_N, TILE_N)], res_sb);
          }
        }
        return result;
      },
      {"lhsT", "rhs"});
  return kernel;
}

GridSpec matmul_tiled_grid(const std::vector<Shape>& shapes) {
  check_matmul_tiled("matmul_tiled", shapes, matmul_dims("matmul_tiled", shapes), TILE_K, TILE_M, TILE_N);
  return GridSpec{};
}

}  // namespace nki::kernels
