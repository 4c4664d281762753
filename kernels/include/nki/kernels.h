/** \file The kernel library. */
#pragma once

#include "nki/kernel.h"
#include "nki/registry.h"

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
Kernel tensor_add_tiled(TensorAddTiles t);
/** tensor_add_tiled's grid, after checking both inputs are the same multiple of [2P, F]. */
GridSpec tensor_add_tiled_grid(TensorAddTiles t, const std::vector<Shape>& shapes);
/** tensor_add_tiled as a tunable kernel: P (1..512) and F (1..65536), powers of two; P > 128 is forbidden. */
TunableKernel tensor_add_tiled_tunable();

/**
 * result = lhsT^T @ rhs for lhsT [K, M] and rhs [K, N], no grid: the blocking of NKI's
 * matmul_fully_optimized (16 x 2 x 8 tiles of [128 x 512 x 128] per M x N x K block), PSUM
 * accumulation over a K block, fp32 SBUF accumulators across K blocks.
 */
const Kernel& matmul();
/** matmul's launch (no grid), after checking the shapes tile and block. */
GridSpec matmul_grid(const std::vector<Shape>& shapes);

/** Registers every library kernel (tensor_add, tensor_add_nc2, matmul; tunable: tensor_add_tiled) for the `nki` command. */
void register_library_kernels(KernelRegistry& registry);

}  // namespace nki::kernels
