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
 * `device` (filled when the IR says, else zeroed when `zero_outputs`, except those a top-level
 * collective writes whole before anything reads them), shared constants filled with the IR's values.
 */
LaunchTensors bind_launch_tensors(const ir::KernelIR& ir, const std::vector<Tensor>& args, const sim::Device& device,
                                  bool zero_outputs);
/**
 * A tensor.reshape / tensor.view the kernel returns: its storage is a copy made at binding, so
 * after the instances ran it takes the bytes of the tensor it reinterprets again.
 */
void copy_view_outputs(const ir::KernelIR& ir, LaunchTensors& tensors);

}  // namespace nki
