/** \file What a launch refuses before anything runs, shared by plain and world launches. */
#pragma once

#include <cstddef>
#include <vector>

#include "nki/ir/kernel_ir.h"
#include "nki/kernel.h"
#include "nki/schedule.h"
#include "nki/simulator/device.h"
#include "nki/tensor.h"

namespace nki {

/**
 * A launch from inside a kernel being traced (err_nested_kernel_call, or
 * err_nested_kernel_with_spmd_grid with a grid), and a wrong argument count (err_argument_count).
 */
void refuse_nested_launch(const Kernel& k, const GridSpec& grid, std::size_t args);

/**
 * err_argument_written_across_ranks when a launch spreading over `ranks` MPI ranks would write
 * an argument in place: only outputs are joined, so each rank would keep its own instances'
 * writes and the copies would differ. Every rank refuses alike, before anything runs.
 */
void refuse_arguments_written_across_ranks(const ir::KernelIR& ir, int ranks);

/**
 * The executors assume distinct arguments: a kernel that writes an argument passed twice
 * would see its writes through the other name in an order no executor promises.
 */
void refuse_aliased_writes(const ir::KernelIR& ir, const std::vector<Tensor>& args);

/**
 * Every busy core allocates the kernel's per-instance tensors (SBUF, PSUM, private HBM) for
 * itself: refuses, before any is allocated, a launch whose private HBM does not fit in the
 * chip's free HBM or whose per-instance tensors would exhaust the host's memory.
 */
void refuse_per_instance_overflow(const ir::KernelIR& ir, const std::vector<CoreSchedule>& cores,
                                  const sim::Device& device);

}  // namespace nki
