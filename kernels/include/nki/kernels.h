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

/** Registers every library kernel (tensor_add, tensor_add_nc2) for the `nki` command. */
void register_library_kernels(KernelRegistry& registry);

}  // namespace nki::kernels
