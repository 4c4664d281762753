/** \file matmul_fully_optimized's block sizes as tuning parameters, for sweeps and autotuning. */
#include "nki/kernels.h"

namespace nki::kernels {

namespace {

MatmulBlocks blocks_of(const TuningConfig& c) { return {c.at("tiles_m"), c.at("tiles_n"), c.at("tiles_k")}; }

}  // namespace

TunableKernel matmul_fully_optimized_tunable() {
  TunableKernel k;
  k.name = "matmul_fully_optimized";
  k.description = "matmul blocked over M, N, K; tunable tiles per block; two cores (LNC=2)";
  k.params = {{"tiles_m", "[128 x 512] result tiles per block along M", {1, 2, 4, 8, 16, 32}, 16},
              {"tiles_n", "result tiles per block along N", {1, 2, 4, 8}, 2},
              {"tiles_k", "128-deep contraction tiles per block along K", {1, 2, 4, 8, 16, 32}, 8}};
  k.make = [](const TuningConfig& c) { return matmul_fully_optimized(blocks_of(c)); };
  k.grid = [](const TuningConfig& c, const std::vector<Shape>& shapes) {
    return matmul_fully_optimized_grid(shapes, blocks_of(c), 2);
  };
  // tiles_k decides where fp32 partial sums are rounded (PSUM within a K block, SBUF across them),
  // and the result is rounded once more to bf16/fp16: configurations agree to within that.
  k.result_tolerance = 1.0 / 64;
  // Every limit a block size can break shows in the launch's own checks (blocks that do not divide
  // the matrices, SBUF and PSUM capacity), which nki::config_rejection runs.
  return k;
}

}  // namespace nki::kernels
