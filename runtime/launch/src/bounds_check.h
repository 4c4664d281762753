/** \file Run-time bounds of masked accesses the validator could not prove, and the error both executors raise. */
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nki/ir/kernel_ir.h"

namespace nki {

/**
 * err_tensor_access_out_of_bound for element `coord` of access `a` reaching index `value` on
 * dimension `dim`, naming the values of the loops `enclosing` the access (`loop`: by loop id).
 */
[[noreturn]] void throw_out_of_bound(const ir::KernelIR& k, const ir::Access& a, std::span<const std::int64_t> pid,
                                     std::span<const int> enclosing, std::span<const std::int64_t> loop,
                                     std::span<const std::int64_t> coord, std::int64_t value, std::size_t dim,
                                     std::int64_t rank = 0);

/**
 * Checks the masked loads and stores at body indices `positions` for every instance of a
 * launch grid, every rank of a world of `world_size` and every loop iteration, element by
 * element (index arithmetic only), and
 * throws the first out-of-bound access. Used before a compiled launch, which clamps
 * masked-off reads and so could not tell.
 */
void check_bounds_at_run_time(const ir::KernelIR& k, const std::vector<std::int64_t>& grid,
                              const std::vector<std::size_t>& positions, int world_size = 1);

}  // namespace nki
