/** \file What a launch refuses before anything runs: nested launches, aliased arguments, per-instance memory. */
#include "launch_checks.h"

#include <fmt/format.h>

#include "nki/ir/passes.h"
#include "nki/simulator/host_memory.h"
#include "nki/trace.h"

namespace nki {

void refuse_nested_launch(const Kernel& k, const GridSpec& grid, std::size_t args) {
  if (Trace* outer = Trace::active()) {
    if (grid.axes.empty()) {
      throw UserError("err_nested_kernel_call", outer->ir().name, {},
                      fmt::format("kernel {} is called while kernel {} is being traced; a kernel body cannot launch "
                                  "another kernel: put the shared code in a C++ function taking nl::tensor arguments "
                                  "and call it from both",
                                  k.name(), outer->ir().name));
    }
    throw UserError("err_nested_kernel_with_spmd_grid", outer->ir().name, {},
                    fmt::format("kernel {} is launched while kernel {} is being traced; a kernel cannot launch "
                                "another kernel with a grid (call a plain C++ helper instead)",
                                k.name(), outer->ir().name));
  }
  if (args != k.arity()) {
    throw UserError("err_argument_count", k.name(), {},
                    fmt::format("the kernel takes {} tensors, {} were passed", k.arity(), args));
  }
}

void refuse_arguments_written_across_ranks(const ir::KernelIR& ir, int ranks) {
  const std::vector<int> stored = ir::count_stores(ir);
  for (std::size_t i = 0; i < ir.params.size(); ++i) {
    const int t = ir.params[i];
    if (stored[static_cast<std::size_t>(t)] == 0) continue;
    throw UserError("err_argument_written_across_ranks", ir.name, {},
                    fmt::format("the kernel writes argument {} ({}) in place, but this launch spreads over {} MPI "
                                "ranks and joins only its outputs: each rank would keep its own instances' writes; "
                                "write the result to an output instead",
                                i, ir.tensors[static_cast<std::size_t>(t)].name, ranks));
  }
}

void refuse_aliased_writes(const ir::KernelIR& ir, const std::vector<Tensor>& args) {
  const std::vector<int> stored = ir::count_stores(ir);
  for (std::size_t x = 0; x < args.size(); ++x) {
    for (std::size_t y = x + 1; y < args.size(); ++y) {
      if (args[x].data() != args[y].data()) continue;
      const int tx = ir.params[x], ty = ir.params[y];
      if (stored[tx] == 0 && stored[ty] == 0) continue;
      throw UserError("err_aliased_arguments", ir.name, {},
                      fmt::format("arguments {} and {} are the same tensor and the kernel writes {}; pass distinct "
                                  "tensors",
                                  ir.tensors[tx].name, ir.tensors[ty].name, ir.tensors[stored[tx] > 0 ? tx : ty].name));
    }
  }
}

void refuse_per_instance_overflow(const ir::KernelIR& ir, const std::vector<CoreSchedule>& cores,
                                  const sim::Device& device) {
  std::int64_t busy = 0;
  for (const CoreSchedule& c : cores) busy += c.instances.empty() ? 0 : 1;
  __int128 hbm = 0, all = 0;  // bytes per core
  for (const ir::TensorDecl& t : ir.tensors) {
    if (!ir::is_per_instance(t.memory)) continue;
    const __int128 bytes = static_cast<__int128>(shape_elements(ir::storage_shape(t))) * dtype_bytes(t.dtype);
    all += bytes;
    if (t.memory == ir::Memory::private_hbm) hbm += bytes;
  }
  const std::int64_t free_hbm = device.hbm().capacity() - device.hbm().bytes_in_use();
  if (hbm * busy > free_hbm) {
    throw UserError("err_hbm_out_of_memory", ir.name, {},
                    fmt::format("its private_hbm tensors take {} bytes on each of {} NeuronCore{} ({} bytes), more "
                                "than the {} bytes of HBM free",
                                hbm, busy, busy == 1 ? "" : "s", hbm * busy, free_hbm));
  }
  if (all * busy > sim::host_memory_bytes()) {
    throw UserError("err_host_out_of_memory", ir.name, {},
                    fmt::format("its per-instance tensors take {} bytes on each of {} NeuronCore{} ({} bytes), more "
                                "than the host's {} bytes of memory",
                                all, busy, busy == 1 ? "" : "s", all * busy, sim::host_memory_bytes()));
  }
}

}  // namespace nki
