/**
 * \file matmul: result = lhsT^T @ rhs, blocked the way NKI's matmul_fully_optimized tutorial kernel is.
 *
 * Blocks of up to 16 x 2 x 8 tiles (M x N x K, tiles [128 x 512 x 128]): per N block, an fp32
 * SBUF accumulator for every M row; per K block, the rhs block is loaded once and reused by every
 * M block; each [128, 512] result tile is accumulated over the K block in PSUM and added into
 * the SBUF accumulator; the accumulator is stored once per N block.
 */
#include <fmt/format.h>

#include "nki/kernels.h"
#include "nki/nki.h"

namespace nl = nki::language;

namespace nki::kernels {

namespace {
constexpr std::int64_t TM = 128, TK = 128, TN = 512;

struct Blocking {
  std::int64_t tiles_m, tiles_n, tiles_k;  ///< tiles per block
};
Blocking blocking(std::int64_t k, std::int64_t m, std::int64_t n) {
  return {std::min<std::int64_t>(16, m / TM), std::min<std::int64_t>(2, n / TN), std::min<std::int64_t>(8, k / TK)};
}
}  // namespace

const Kernel& matmul() {
  static const Kernel kernel = nki::jit(
      "matmul",
      [](nl::tensor lhsT, nl::tensor rhs) {
        const std::int64_t K = lhsT.shape()[0], M = lhsT.shape()[1], N = rhs.shape()[1];
        const Blocking b = blocking(K, M, N);
        const std::int64_t BLOCK_M = TM * b.tiles_m, BLOCK_N = TN * b.tiles_n, BLOCK_K = TK * b.tiles_k;
        const std::int64_t NUM_BLOCK_M = M / BLOCK_M, NUM_BLOCK_N = N / BLOCK_N, NUM_BLOCK_K = K / BLOCK_K;
        auto result = nl::ndarray({M, N}, lhsT.dtype(), nl::shared_hbm, "result");
        for (auto n2 : nl::affine_range(NUM_BLOCK_N)) {
          // fp32 accumulators of every result tile of this N block.
          auto result_tiles = nl::zeros({NUM_BLOCK_M, b.tiles_m, b.tiles_n, nl::par_dim(TM), TN}, nl::float32, nl::sbuf,
                                        "result_tiles");
          for (auto k2 : nl::sequential_range(NUM_BLOCK_K)) {
            auto rhs_tiles = nl::ndarray({b.tiles_k, nl::par_dim(TK), BLOCK_N}, rhs.dtype(), nl::sbuf, "rhs_tiles");
            for (auto bk : nl::affine_range(b.tiles_k))
              rhs_tiles[bk, nl::_, nl::_] = nl::load(rhs[nl::ds((k2 * b.tiles_k + bk) * TK, TK), nl::ds(n2 * BLOCK_N, BLOCK_N)]);
            for (auto m2 : nl::affine_range(NUM_BLOCK_M)) {
              auto lhsT_tiles = nl::ndarray({b.tiles_k, nl::par_dim(TK), BLOCK_M}, lhsT.dtype(), nl::sbuf, "lhsT_tiles");
              for (auto bk : nl::affine_range(b.tiles_k))
                lhsT_tiles[bk, nl::_, nl::_] =
                    nl::load(lhsT[nl::ds((k2 * b.tiles_k + bk) * TK, TK), nl::ds(m2 * BLOCK_M, BLOCK_M)]);
              for (auto bn : nl::affine_range(b.tiles_n)) {
                for (auto bm : nl::affine_range(b.tiles_m)) {
                  auto res_tile = nl::zeros({TM, TN}, nl::float32, nl::psum, "res_tile");  // (128, 512) PSUM
                  for (auto bk : nl::affine_range(b.tiles_k))
                    res_tile[nl::_, nl::_] += nl::matmul(lhsT_tiles[bk, nl::_, nl::ds(bm * TM, TM)],
                                                         rhs_tiles[bk, nl::_, nl::ds(bn * TN, TN)], true);
                  result_tiles[m2, bm, bn, nl::_, nl::_] = result_tiles[m2, bm, bn, nl::_, nl::_] + res_tile[nl::_, nl::_];
                }
              }
            }
          }
          for (auto m2 : nl::affine_range(NUM_BLOCK_M))
            for (auto bm : nl::affine_range(b.tiles_m))
              for (auto bn : nl::affine_range(b.tiles_n))
                nl::store(result[nl::ds((m2 * b.tiles_m + bm) * TM, TM), nl::ds(n2 * BLOCK_N + bn * TN, TN)],
                          nl::copy(result_tiles[m2, bm, bn, nl::_, nl::_], {.dtype = result.dtype()}));
        }
        return result;
      },
      {"lhsT", "rhs"});
  return kernel;
}

GridSpec matmul_grid(const std::vector<Shape>& shapes) {
  if (shapes.size() != 2) throw UserError("err_argument_count", "matmul", {}, fmt::format("takes 2 inputs, {} given", shapes.size()));
  const Shape& l = shapes[0];
  const Shape& r = shapes[1];
  if (l.size() != 2 || r.size() != 2 || l[0] != r[0]) {
    throw UserError("err_input_shape_mismatch", "matmul", {},
                    fmt::format("lhsT {} and rhs {} must be [K,M] and [K,N] with the same K", shape_str(l), shape_str(r)));
  }
  const std::int64_t K = l[0], M = l[1], N = r[1];
  const bool tiled = K % TK == 0 && M % TM == 0 && N % TN == 0 && K > 0 && M > 0 && N > 0;
  if (tiled) {
    const Blocking b = blocking(K, M, N);
    if (M % (TM * b.tiles_m) == 0 && N % (TN * b.tiles_n) == 0 && K % (TK * b.tiles_k) == 0) return GridSpec{};
  }
  throw UserError("err_input_shape_not_tiled", "matmul", {},
                  fmt::format("lhsT {} and rhs {}: K and M must be multiples of 128 (of 1024 and 2048 beyond that), N "
                              "of 512 (of 1024 beyond that)",
                              shape_str(l), shape_str(r)));
}

}  // namespace nki::kernels
