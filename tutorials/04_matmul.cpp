/**
 * \file Tutorial 4: NKI's matrix-multiplication tutorial, every step of it, checked.
 *
 * The Tensor engine computes stationary^T @ moving: the contraction axis K must be the partition
 * axis of both operands, so the left matrix is given transposed, lhsT [K, M], and rhs is [K, N].
 * A matmul tile is at most [TILE_M = 128] x [TILE_N = 512] with TILE_K = 128, accumulated in PSUM
 * (fp32). The five kernels (kernels/src/matmul_*.cpp) are the tutorial's steps:
 *   matmul_basic                 one tile
 *   matmul_tiled                 loops over M and N tiles, PSUM accumulation over K tiles
 *   matmul_hoist_load            loads hoisted out of the innermost loop: each tile loaded once per row/column
 *   matmul_block_free_dimension  2 x 2 result tiles per block: each loaded tile serves two results
 *   matmul_fully_optimized       blocks over M, N and K, K blocks in a sequential_range, fp32 result tiles kept in SBUF
 * Each runs on bf16 inputs and is compared with a host matmul (allclose, atol 1e-4, rtol 1e-2, the
 * tutorial's check); the profile line is the simulated NeuronCore's estimate of each step.
 */
#include <fmt/format.h>

#include "nki/kernel_references.h"
#include "nki/kernels.h"
#include "nki/nki.h"
#include "nki/profile.h"
#include "tutorial_check.h"

namespace nl = nki::language;
namespace nk = nki::kernels;

namespace {

/** Runs one step of the tutorial, prints its simulated latency, and checks it. */
int step(const char* name, const nki::Kernel& k, const nki::GridSpec& grid, const nki::Tensor& lhsT, const nki::Tensor& rhs) {
  const std::int64_t K = lhsT.shape()[0], M = lhsT.shape()[1], N = rhs.shape()[1];
  const nki::Tensor result = k.launch(grid).run({lhsT, rhs}).outputs.at(0);
  const nki::ProfileReport p = nki::profile(k.launch(grid), {{lhsT.shape(), lhsT.dtype()}, {rhs.shape(), rhs.dtype()}}, "trn2",
                                            false);
  fmt::print("{:<30} [{}x{}] @ [{}x{}]: simulated {:.1f} us, hfu {:.2f}; ", name, M, K, K, N, p.latency_us, p.hfu);
  const std::vector<double> want =
      nk::reference::matmul(lhsT.to_values(), rhs.to_values(), K, M, N);
  const std::vector<double> got = result.to_values();
  return tutorial::check_allclose({got.begin(), got.end()}, {want.begin(), want.end()}, 1e-4, 1e-2);
}

}  // namespace

int main() {
  int failed = 0;
  // Step 1: one tile, the tutorial's 64 x 128 x 512.
  {
    const nki::Tensor lhsT = tutorial::random_tensor({128, 64}, nl::bfloat16, -1.0f, 1.0f, 1);
    const nki::Tensor rhs = tutorial::random_tensor({128, 512}, nl::bfloat16, -1.0f, 1.0f, 2);
    failed += step("matmul_basic", nk::matmul_basic(), {}, lhsT, rhs);
  }
  // Steps 2-5 on [512 x 512] @ [512 x 2048]: one M block, two N blocks, one K block.
  const nki::Tensor lhsT = tutorial::random_tensor({512, 512}, nl::bfloat16, -1.0f, 1.0f, 3);
  const nki::Tensor rhs = tutorial::random_tensor({512, 2048}, nl::bfloat16, -1.0f, 1.0f, 4);
  failed += step("matmul_tiled", nk::matmul_tiled(), {}, lhsT, rhs);
  failed += step("matmul_hoist_load", nk::matmul_hoist_load(), {}, lhsT, rhs);
  failed += step("matmul_block_free_dimension", nk::matmul_block_free_dimension(), {}, lhsT, rhs);
  failed += step("matmul_fully_optimized", nk::matmul_fully_optimized(), {}, lhsT, rhs);
  // The last step split over the two NeuronCores of a trn2 logical core: one N block each.
  const nk::MatmulBlocks blocks{.tiles_m = 4, .tiles_n = 2, .tiles_k = 4};
  const nki::GridSpec two_cores = nk::matmul_fully_optimized_grid({lhsT.shape(), rhs.shape()}, blocks, 2);
  failed += step("matmul_fully_optimized nc(2)", nk::matmul_fully_optimized(blocks), two_cores, lhsT, rhs);
  if (failed != 0) {
    fmt::print("{} steps differ from the reference\n", failed);
    return 1;
  }
  fmt::print("all steps: NKI and reference match\n");
  return 0;
}
