/**
 * \file matmul_hoist_load: NKI's tutorial step that hoists the loads out of the innermost loop:
 * a column of lhsT tiles per M tile, a column of rhs tiles per N tile, each loaded once.
 */
#include "kernel_inputs.h"
#include "matmul_tiles.h"
#include "nki/kernels.h"
#include "nki/nki.h"

namespace nl = nki::language;

namespace nki::kernels {

const Kernel& matmul_hoist_load() {
  static const Kernel kernel = nki::jit(
      "matmul_hoist_load",
      [](nl::tensor lhsT, nl::tensor rhs) {
        const std::int64_t K = lhsT.shape()[0], M = lhsT.shape()[1], N = rhs.shape()[1];
        auto result = nl::ndarray({M, N}, lhsT.dtype(), nl::shared_hbm, "result");
        for (auto m : nl::affine_range(M / TILE_M)) {
          // The whole column of lhsT tiles for this M tile (a whole row of lhs).
          auto lhsT_tiles = nl::ndarray({K / TILE_K, nl::par_dim(TILE_K), TILE_M}, lhsT.dtype(), nl::sbuf, "lhsT_tiles");
          for (auto k : nl::affine_range(K / TILE_K))
            lhsT_tiles[k, nl::_, nl::_] = nl::load(lhsT[nl::ds(k * TILE_K, TILE_K), nl::ds(m * TILE_M, TILE_M)]);
          for (auto n : nl::affine_range(N / TILE_N)) {
            auto rhs_tiles = nl::ndarray({K / TILE_K, nl::par_dim(TILE_K), TILE_N}, rhs.dtype(), nl::sbuf, "rhs_tiles");
            for (auto k : nl::affine_range(K / TILE_K))
              rhs_tiles[k, nl::_, nl::_] = nl::load(rhs[nl::ds(k * TILE_K, TILE_K), nl::ds(n * TILE_N, TILE_N)]);
            auto res_psum = nl::zeros({TILE_M, TILE_N}, nl::float32, nl::psum, "res_psum");
            for (auto k : nl::affine_range(K / TILE_K))
              res_psum[nl::_, nl::_] += nl::matmul(lhsT_tiles[k, nl::_, nl::_], rhs_tiles[k, nl::_, nl::_], true);
            auto res_sb = nl::copy(res_psum[nl::_, nl::_], {.dtype = result.dtype()});
            nl::store(result[nl::ds(m * TILE_M, TILE_M), nl::ds(n * TILE_N, TILE_N)], res_sb);
          }
        }
        return result;
      },
      {"lhsT", "rhs"});
  return kernel;
}

GridSpec matmul_hoist_load_grid(const std::vector<Shape>& shapes) {
  check_matmul_tiled("matmul_hoist_load", shapes, matmul_dims("matmul_hoist_load", shapes), TILE_K, TILE_M, TILE_N);
  return GridSpec{};
}

}  // namespace nki::kernels
