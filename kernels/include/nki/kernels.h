/** \file The kernel library. */
#pragma once

#include <cstdint>
#include <vector>

#include "nki/kernel.h"
#include "nki/tunable_kernel.h"

namespace nki::kernels {

/**
 * c = a + b over [P, F] tensors, one [128, 512] tile per instance: program_id(0)
 * picks the partition tile, program_id(1) the free tile (NKI's tensor-add tutorial).
 */
const Kernel& tensor_add();

/** tensor_add's grid on one core: [P/128, F/512]. */
GridSpec tensor_add_grid(const std::vector<Shape>& shapes);
/** The multi-core tutorial's grid: [spmd_dim(P/256, nc(2)), F/512]. */
GridSpec tensor_add_nc2_grid(const std::vector<Shape>& shapes);

/** The tile of tensor_add_tiled: P partition rows by F free elements. */
struct TensorAddTiles {
  std::int64_t p = 128, f = 512;
};

/**
 * c = a + b over [R, C] tensors in [P, F] tiles, NKI's loop structure: the grid
 * [spmd_dim(R/(2P), nc(2))] gives each instance one row of tiles (the two cores of an LNC=2
 * logical core take alternate rows), which it walks with affine_range(C/F).
 */
Kernel tensor_add_tiled(TensorAddTiles t);  ///< one Kernel per tile size, made once
/** tensor_add_tiled's grid, after checking both inputs are the same multiple of [2P, F]. */
GridSpec tensor_add_tiled_grid(TensorAddTiles t, const std::vector<Shape>& shapes);
/** tensor_add_tiled as a tunable kernel: P (1..512) and F (1..65536), powers of two; P > 128 is forbidden. */
TunableKernel tensor_add_tiled_tunable();

// ---- NKI's matmul tutorial: result [M, N] = lhsT^T @ rhs for lhsT [K, M] and rhs [K, N] ----
// Tiles are [TILE_M x TILE_N x TILE_K] = [128 x 512 x 128]; each *_grid checks the shapes (one-line
// err_input_shape_* errors naming them) and returns the launch grid.

/** One tile: K <= 128, M <= 128, N <= 512. */
const Kernel& matmul_basic();
GridSpec matmul_basic_grid(const std::vector<Shape>& shapes);
/** Loops over M and N tiles, PSUM accumulation over K tiles; K, M multiples of 128, N of 512. */
const Kernel& matmul_tiled();
GridSpec matmul_tiled_grid(const std::vector<Shape>& shapes);
/** matmul_tiled with the loads hoisted: a column of K tiles per M tile and per N tile. */
const Kernel& matmul_hoist_load();
GridSpec matmul_hoist_load_grid(const std::vector<Shape>& shapes);
/** Blocks of 2 x 2 result tiles; M a multiple of 256, N of 1024. */
const Kernel& matmul_block_free_dimension();
GridSpec matmul_block_free_dimension_grid(const std::vector<Shape>& shapes);

/** Tiles per block of matmul_fully_optimized along M, N and K. */
struct MatmulBlocks {
  std::int64_t tiles_m = 16, tiles_n = 2, tiles_k = 8;
};
/**
 * Blocked over M, N and K (a sequential_range over K blocks), result tiles kept in SBUF as
 * accumulators of the inputs' dtype (NKI's tutorial); this one uses the default blocks, shrunk to matrices smaller than a block.
 */
const Kernel& matmul_fully_optimized();
/** The same kernel with exactly these blocks (one Kernel per blocking, made once). */
Kernel matmul_fully_optimized(MatmulBlocks blocks);
/** Launch of the default-blocks kernel: no grid. */
GridSpec matmul_fully_optimized_grid(const std::vector<Shape>& shapes);
/**
 * Launch of matmul_fully_optimized(blocks) split over `cores` NeuronCores (spmd_dim(1, nc(cores));
 * no grid for one core): each instance computes an equal run of N blocks.
 */
GridSpec matmul_fully_optimized_grid(const std::vector<Shape>& shapes, MatmulBlocks blocks, int cores);

// ---- row-wise normalizations (rows in tiles of 128 partitions, the last tile masked; fp32 inside) ----

/** softmax over each row of x [R, C]. */
const Kernel& softmax();
GridSpec softmax_grid(const std::vector<Shape>& shapes);
/** NKI's RMSNorm tutorial: a [R, D], g [D] (read as a [1, D] reshape) -> a / sqrt(mean(a^2)) * g. */
const Kernel& rmsnorm();
GridSpec rmsnorm_grid(const std::vector<Shape>& shapes);
// ---- A Megatron-style MLP (tutorial 09) ----
/** y = gelu(x @ w1) @ w2 in fp32 on one core: x [B, H], w1 [H, F], w2 [F, H], B, H and F multiples of 128. */
const Kernel& mlp();
/**
 * One rank's part of the tensor-parallel MLP over a mesh with a `tensor` axis: x [B, H] whole,
 * w1 [H, F/T] its column shard, w2 [F/T, H] its row shard; gelu(x @ w1) @ w2 is its partial
 * product, all-reduced over the `tensor` axis (nki::collectives::all_reduce) into y [B, H].
 * Run it with nki::WorldLaunch.
 */
const Kernel& tensor_parallel_mlp();
/** The grid of both (none), after checking the three shapes fit (err_input_shape_mismatch, ...). */
GridSpec mlp_grid(const std::vector<Shape>& shapes);
/** epsilon of the registered layernorm. */
inline constexpr double kLayernormEpsilon = 1e-5;
/** NKI's LayerNorm tutorial: x [R, D], gamma and beta [1, D] -> (x - mean) / sqrt(var + epsilon) * gamma + beta. */
Kernel layernorm(double epsilon);
const Kernel& layernorm();  ///< with kLayernormEpsilon
GridSpec layernorm_grid(const std::vector<Shape>& shapes);

// ---- access-pattern kernels ----

/** NKI's Transpose2D tutorial: in [P <= 128, Y, X] -> out [P, X, Y], transposed by an SBUF access pattern. */
const Kernel& transpose2d();
GridSpec transpose2d_grid(const std::vector<Shape>& shapes);
/** pool_size of the registered average_pool2d. */
inline constexpr std::int64_t kAveragePoolSize = 2;
/** NKI's AveragePool2D tutorial: in [C <= 128, H, W] -> [C, H/pool, W/pool], the mean of each pool x pool window. */
Kernel average_pool2d(std::int64_t pool_size);
const Kernel& average_pool2d();  ///< with kAveragePoolSize
GridSpec average_pool2d_grid(const std::vector<Shape>& shapes, std::int64_t pool_size);

/**
 * matmul_fully_optimized(blocks) as a tunable kernel: tiles_m (1..32), tiles_n (1..8) and tiles_k
 * (1..32) tiles per block, powers of two (defaults 16, 2, 8), launched on the two cores of an
 * LNC=2 logical core (matmul_fully_optimized_grid(shapes, blocks, 2)). Blocks the matrices are
 * not a multiple of, and blocks over SBUF or PSUM, are forbidden with the launch's own message.
 */
TunableKernel matmul_fully_optimized_tunable();

}  // namespace nki::kernels
