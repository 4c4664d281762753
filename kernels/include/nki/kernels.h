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

/**
 * result = lhsT^T @ rhs for lhsT [K, M] and rhs [K, N], no grid: the blocking of NKI's
 * matmul_fully_optimized (16 x 2 x 8 tiles of [128 x 512 x 128] per M x N x K block), PSUM
 * accumulation over a K block, fp32 SBUF accumulators across K blocks.
 */
const Kernel& matmul();
/** matmul's launch (no grid), after checking the shapes tile and block. */
GridSpec matmul_grid(const std::vector<Shape>& shapes);

/** Registers every library kernel (tensor_add, tensor_add_nc2, matmul) for the `nki` command. */
void register_library_kernels(KernelRegistry& registry);

}  // namespace nki::kernels
