/** \file The HBM tensors a launch binds: its arguments, and the ndarrays and constants it allocates. */
#pragma once

#include <optional>
#include <vector>

#include "core/program.h"
#include "nki/ir/kernel_ir.h"
#include "nki/simulator/device.h"
#include "nki/tensor.h"

namespace nki {

/** Per IR tensor id: what holds it (nullopt for per-instance tensors, which each core's runner owns) and its binding. */
struct LaunchTensors {
  std::vector<std::optional<Tensor>> storage;
  std::vector<TensorBinding> bindings;
};

/**
 * Binds every tensor of `ir`: arguments as given, shared_hbm ndarrays freshly allocated on
 * `device`, shared constants filled with the IR's values. A fresh ndarray is filled when the
 * IR says; else zeroed, so no element shows an earlier tensor's bytes, unless `stored_whole`
 * (TracedKernel::stored_whole) says plain stores write it whole or a top-level collective
 * writes it whole before anything reads it. A launch `spanning_ranks` zeroes it even then:
 * each rank runs only its part of the grid, and joining the ranks' outputs by what changed
 * needs every rank's copy to start alike.
 */
LaunchTensors bind_launch_tensors(const ir::KernelIR& ir, const std::vector<Tensor>& args, const sim::Device& device,
                                  const std::vector<bool>& stored_whole, bool spanning_ranks = false);
/**
 * A tensor.reshape / tensor.view the kernel returns: its storage is a copy made at binding, so
 * after the instances ran it takes the bytes of the tensor it reinterprets again.
 */
void copy_view_outputs(const ir::KernelIR& ir, LaunchTensors& tensors);

}  // namespace nki
