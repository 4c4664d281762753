/**
 * \file matmul_block_free_dimension: NKI's tutorial step that blocks the free dimensions, 2 M tiles x 2 N
 * tiles per block, so each loaded lhsT and rhs tile serves two result tiles.
 */
#include "kernel_inputs.h"
#include "matmul_tiles.h"
#include "nki/kernels.h"
#include "nki/nki.h"

namespace nl = nki::language;

namespace nki::kernels {

namespace {
constexpr std::int64_t TILES_IN_BLOCK_M = 2, TILES_IN_BLOCK_N = 2;
constexpr std::int64_t BLOCK_M = TILE_M * TILES_IN_BLOCK_M;  // 256
constexpr std::int64_t BLOCK_N = TILE_N * TILES_IN_BLOCK_N;  // 1024
}  // namespace

const Kernel& matmul_block_free_dimension() {
  static const Kernel kernel = nki::jit(
      "matmul_block_free_dimension",
      [](nl::tensor lhsT, nl::tensor rhs) {
        const std::int64_t K = lhsT.shape()[0], M = lhsT.shape()[1], N = rhs.shape()[1];
        auto result = nl::ndarray({M, N}, lhsT.dtype(), nl::shared_hbm, "result");
        for (auto m : nl::affine_range(M / BLOCK_M)) {
          auto lhsT_tiles = nl::ndarray({TILES_IN_BLOCK_M, K / TILE_K, nl::par_dim(TILE_K), TILE_M}, lhsT.dtype(), nl::sbuf,
                                        "lhsT_tiles");
          for (auto bm : nl::affine_range(TILES_IN_BLOCK_M))
            for (auto k : nl::affine_range(K / TILE_K))
              lhsT_tiles[bm, k, nl::_, nl::_] =
                  nl::load(lhsT[nl::ds(k * TILE_K, TILE_K), nl::ds((m * TILES_IN_BLOCK_M + bm) * TILE_M, TILE_M)]);
          for (auto n : nl::affine_range(N / BLOCK_N)) {
            auto rhs_tiles = nl::ndarray({TILES_IN_BLOCK_N, K / TILE_K, nl::par_dim(TILE_K), TILE_N}, rhs.dtype(), nl::sbuf,
                                         "rhs_tiles");
            for (auto bn : nl::affine_range(TILES_IN_BLOCK_N))
              for (auto k : nl::affine_range(K / TILE_K))
                rhs_tiles[bn, k, nl::_, nl::_] =
                    nl::load(rhs[nl::ds(k * TILE_K, TILE_K), nl::ds((n * TILES_IN_BLOCK_N + bn) * TILE_N, TILE_N)]);
            for (auto bm : nl::affine_range(TILES_IN_BLOCK_M)) {
              for (auto bn : nl::affine_range(TILES_IN_BLOCK_N)) {
                auto result_tile = nl::zeros({TILE_M, TILE_N}, nl::float32, nl::psum, "result_tile");
                for (auto k : nl::affine_range(K / TILE_K))
                  result_tile[nl::_, nl::_] +=
                      nl::matmul(lhsT_tiles[bm, k, nl::_, nl::_], rhs_tiles[bn, k, nl::_, nl::_], true);
                auto result_sbuf = nl::copy(result_tile[nl::_, nl::_], {.dtype = result.dtype()});
                nl::store(result[nl::ds((m * TILES_IN_BLOCK_M + bm) * TILE_M, TILE_M),
                                 nl::ds((n * TILES_IN_BLOCK_N + bn) * TILE_N, TILE_N)],
                          result_sbuf);
              }
            }
          }
        }
        return result;
      },
      {"lhsT", "rhs"});
  return kernel;
}

GridSpec matmul_block_free_dimension_grid(const std::vector<Shape>& shapes) {
  check_matmul_tiled("matmul_block_free_dimension", shapes, matmul_dims("matmul_block_free_dimension", shapes), TILE_K,
                     BLOCK_M, BLOCK_N);
  return GridSpec{};
}

}  // namespace nki::kernels
