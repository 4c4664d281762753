/**
 * \file matmul_fully_optimized: NKI's last matmul tutorial kernel, blocked over M, N and K.
 *
 * Blocks of tiles_m x tiles_n x tiles_k tiles of [128 x 512 x 128] (16 x 2 x 8 by default): per N
 * block, an SBUF accumulator of the inputs' dtype for every result tile (as NKI's tutorial has it:
 * half the SBUF of fp32 ones for bf16, which leaves room to double-buffer the lhsT block); per K block (a sequential_range), the rhs
 * block is loaded once and reused by every M block; each [128, 512] result tile is accumulated over
 * the K block in PSUM and added into its SBUF accumulator; the accumulators are stored once per N
 * block. With a launch grid [g] (e.g. spmd_dim(1, nc(2))) instance i computes the i-th of g equal
 * runs of N blocks, so the work splits over cores.
 */
#include <fmt/format.h>

#include <optional>
#include <tuple>

#include "kernel_inputs.h"
#include "kernel_memo.h"
#include "matmul_tiles.h"
#include "nki/kernels.h"
#include "nki/nki.h"

namespace nl = nki::language;

namespace nki::kernels {

namespace {

constexpr const char* kName = "matmul_fully_optimized";

/** The default blocking, shrunk to the matrix where it is smaller than one block. */
MatmulBlocks default_blocks(MatmulDims d) {
  const MatmulBlocks b;
  return {std::max<std::int64_t>(1, std::min(b.tiles_m, d.m / TILE_M)),
          std::max<std::int64_t>(1, std::min(b.tiles_n, d.n / TILE_N)),
          std::max<std::int64_t>(1, std::min(b.tiles_k, d.k / TILE_K))};
}

/** Throws err_input_shape_not_tiled unless the matrices are whole blocks and the N blocks split over `programs`. */
void check_blocks(const std::vector<Shape>& shapes, MatmulDims d, MatmulBlocks b, std::int64_t programs) {
  if (b.tiles_m < 1 || b.tiles_n < 1 || b.tiles_k < 1) {
    throw UserError("err_invalid_block_size", kName, {},
                    fmt::format("blocks of {} x {} x {} tiles: every block holds at least one tile", b.tiles_m, b.tiles_n,
                                b.tiles_k));
  }
  const std::int64_t bm = TILE_M * b.tiles_m, bn = TILE_N * b.tiles_n, bk = TILE_K * b.tiles_k;
  check_matmul_tiled(kName, shapes, d, bk, bm, bn);
  if ((d.n / bn) % programs != 0) {
    throw UserError("err_input_shape_not_tiled", kName, {},
                    fmt::format("rhs {}: {} N blocks of {} do not split evenly over {} instances", shape_str(shapes[1]),
                                d.n / bn, bn, programs));
  }
}

Kernel make_kernel(std::optional<MatmulBlocks> fixed) {
  return nki::jit(
      kName,
      [fixed](nl::tensor lhsT, nl::tensor rhs) {
        const std::vector<Shape> shapes{lhsT.shape(), rhs.shape()};
        const MatmulDims d = matmul_dims(kName, shapes);
        const MatmulBlocks b = fixed ? *fixed : default_blocks(d);
        const std::int64_t programs = nl::program_ndim() > 0 ? nl::num_programs(0) : 1;
        check_blocks(shapes, d, b, programs);
        const std::int64_t K = d.k, M = d.m, N = d.n;
        const std::int64_t BLOCK_M = TILE_M * b.tiles_m, BLOCK_N = TILE_N * b.tiles_n, BLOCK_K = TILE_K * b.tiles_k;
        const std::int64_t NUM_BLOCK_M = M / BLOCK_M, NUM_BLOCK_K = K / BLOCK_K;
        const std::int64_t NUM_BLOCK_N = N / BLOCK_N / programs;  // this instance's run of N blocks
        const nl::index first_n = nl::program_ndim() > 0 ? nl::program_id(0) * NUM_BLOCK_N : nl::index(0);
        auto result = nl::ndarray({M, N}, lhsT.dtype(), nl::shared_hbm, "result");
        for (auto nb : nl::affine_range(NUM_BLOCK_N)) {
          const nl::index n2 = first_n + nb;
          // Accumulators of every result tile of this N block, in the inputs' dtype as in NKI's tutorial.
          auto result_tiles = nl::zeros({NUM_BLOCK_M, b.tiles_m, b.tiles_n, nl::par_dim(TILE_M), TILE_N}, lhsT.dtype(),
                                        nl::sbuf, "result_tiles");
          for (auto k2 : nl::sequential_range(NUM_BLOCK_K)) {
            auto rhs_tiles = nl::ndarray({b.tiles_k, nl::par_dim(TILE_K), BLOCK_N}, rhs.dtype(), nl::sbuf, "rhs_tiles");
            for (auto bk : nl::affine_range(b.tiles_k))
              rhs_tiles[bk, nl::_, nl::_] =
                  nl::load(rhs[nl::ds((k2 * b.tiles_k + bk) * TILE_K, TILE_K), nl::ds(n2 * BLOCK_N, BLOCK_N)]);
            for (auto m2 : nl::affine_range(NUM_BLOCK_M)) {
              auto lhsT_tiles = nl::ndarray({b.tiles_k, nl::par_dim(TILE_K), BLOCK_M}, lhsT.dtype(), nl::sbuf, "lhsT_tiles");
              for (auto bk : nl::affine_range(b.tiles_k))
                lhsT_tiles[bk, nl::_, nl::_] =
                    nl::load(lhsT[nl::ds((k2 * b.tiles_k + bk) * TILE_K, TILE_K), nl::ds(m2 * BLOCK_M, BLOCK_M)]);
              for (auto bn : nl::affine_range(b.tiles_n)) {
                for (auto bm : nl::affine_range(b.tiles_m)) {
                  auto res_tile = nl::zeros({TILE_M, TILE_N}, nl::float32, nl::psum, "res_tile");
                  for (auto bk : nl::affine_range(b.tiles_k))
                    res_tile[nl::_, nl::_] += nl::matmul(lhsT_tiles[bk, nl::_, nl::ds(bm * TILE_M, TILE_M)],
                                                         rhs_tiles[bk, nl::_, nl::ds(bn * TILE_N, TILE_N)], true);
                  result_tiles[m2, bm, bn, nl::_, nl::_] = result_tiles[m2, bm, bn, nl::_, nl::_] + res_tile[nl::_, nl::_];
                }
              }
            }
          }
          for (auto m2 : nl::affine_range(NUM_BLOCK_M))
            for (auto bm : nl::affine_range(b.tiles_m))
              for (auto bn : nl::affine_range(b.tiles_n))
                nl::store(result[nl::ds((m2 * b.tiles_m + bm) * TILE_M, TILE_M), nl::ds(n2 * BLOCK_N + bn * TILE_N, TILE_N)],
                          nl::copy(result_tiles[m2, bm, bn, nl::_, nl::_], {.dtype = result.dtype()}));
        }
        return result;
      },
      {"lhsT", "rhs"});
}

}  // namespace

const Kernel& matmul_fully_optimized() {
  static const Kernel kernel = make_kernel(std::nullopt);
  return kernel;
}

Kernel matmul_fully_optimized(MatmulBlocks blocks) {
  return memo_kernel(std::tuple(blocks.tiles_m, blocks.tiles_n, blocks.tiles_k), [&](const auto&) { return make_kernel(blocks); });
}

GridSpec matmul_fully_optimized_grid(const std::vector<Shape>& shapes) {
  const MatmulDims d = matmul_dims(kName, shapes);
  check_matmul_tiled(kName, shapes, d, TILE_K, TILE_M, TILE_N);
  check_blocks(shapes, d, default_blocks(d), 1);
  return GridSpec{};
}

GridSpec matmul_fully_optimized_grid(const std::vector<Shape>& shapes, MatmulBlocks blocks, int cores) {
  const MatmulDims d = matmul_dims(kName, shapes);
  check_blocks(shapes, d, blocks, cores);
  if (cores == 1) return GridSpec{};
  return GridSpec{{nl::spmd_dim(1, nl::nc(cores))}};
}

}  // namespace nki::kernels
