/** \file Launches: bind tensors, place instances on NeuronCores, run each core on its own TBB worker. */
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <mutex>
#include <exception>
#include <optional>

#include "nki/traced_kernel.h"
#include "nki/placement.h"
#include "nki/communicator.h"
#include "nki/interrupt.h"
#include "nki/ir/kernel_ir.h"
#include "nki/ir/passes.h"
#include "nki/simulator/host_memory.h"
#include "nki/kernel.h"
#include "nki/simulator/capacity.h"
#include "bounds_check.h"
#include "core/core_workers.h"
#include "core_programs.h"
#include "nki/trace.h"
#include "core/program.h"
#include "reference_interpreter.h"
#include "world_outputs.h"

namespace nki {

namespace {

/** Every element of `t` set to `v` (zeros / ones / full in shared_hbm, before any instance runs). */
void fill_tensor(Tensor& t, double v) {
  fill_elements(t.data(), t.dtype(), t.elements(), v);
}

std::string pid_str(const std::vector<std::int64_t>& pid) { return fmt::format("[{}]", fmt::join(pid, ",")); }

/// Longest batch a core hands to its runner at once; bounds how late a stop request is seen.
constexpr std::size_t kMaxBatch = 64;

/** How many instances from `i` on form a run whose ids differ only by +1 steps in the last axis. */
std::size_t consecutive_run(const std::vector<std::vector<std::int64_t>>& ids, std::size_t i) {
  std::size_t n = 1;
  if (ids[i].empty()) return n;
  while (n < kMaxBatch && i + n < ids.size()) {
    const auto& prev = ids[i + n - 1];
    const auto& next = ids[i + n];
    if (next.back() != prev.back() + 1 || !std::equal(prev.begin(), prev.end() - 1, next.begin())) break;
    ++n;
  }
  return n;
}

/**
 * The executors assume distinct arguments: a kernel that writes an argument passed twice
 * would see its writes through the other name in an order no executor promises.
 */
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

/**
 * Every busy core allocates the kernel's per-instance tensors (SBUF, PSUM, private HBM) for
 * itself: refuses, before any is allocated, a launch whose private HBM does not fit in the
 * chip's free HBM or whose per-instance tensors would exhaust the host's memory.
 */
void refuse_per_instance_overflow(const ir::KernelIR& ir, const std::vector<CoreSchedule>& cores,
                                  const sim::Device& device) {
  std::int64_t busy = 0;
  for (const CoreSchedule& c : cores) busy += c.instances.empty() ? 0 : 1;
  __int128 hbm = 0, all = 0;  // bytes per core
  for (const ir::TensorDecl& t : ir.tensors) {
    if (!ir::is_per_instance(t.memory)) continue;
    const __int128 bytes = static_cast<__int128>(shape_elements(t.shape)) * dtype_bytes(t.dtype);
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

/**
 * Runs every core's instances, each busy core on a thread of its own. The first failure
 * stops every core before its next batch and is rethrown with its core and instances;
 * so does an interrupt request (nki::Interrupted). Every core's thread has returned
 * before this does.
 */
void run_on_cores(const std::string& kernel, const std::vector<std::shared_ptr<const Program>>& programs,
                  const std::vector<TensorBinding>& bindings, const std::vector<CoreSchedule>& cores,
                  std::vector<DevicePrint>& prints) {
  std::mutex prints_mutex;
  std::vector<const CoreSchedule*> busy;
  for (const CoreSchedule& c : cores)
    if (!c.instances.empty()) busy.push_back(&c);

  std::atomic<bool> stop{false};
  auto run_core = [&](const CoreSchedule& core) {
    std::unique_ptr<CoreRunner> runner = programs[static_cast<std::size_t>(&core - cores.data())]->bind(bindings);
    const auto& ids = core.instances;
    for (std::size_t i = 0; i < ids.size();) {
      if (stop.load(std::memory_order_relaxed)) return;
      if (interrupt_requested()) {
        stop = true;
        throw Interrupted(fmt::format("the launch of {} was interrupted: NC{} stopped before instance {}",
                                      kernel, core.nc, pid_str(ids[i])));
      }
      const std::size_t n = consecutive_run(ids, i);
      try {
        runner->run_batch(ids[i], static_cast<std::int64_t>(n));
      } catch (const InternalError& e) {
        stop = true;
        throw InternalError(fmt::format("NC{} instance{} {}{}: {}", core.nc, n > 1 ? "s" : "", pid_str(ids[i]),
                                        n > 1 ? ".." + pid_str(ids[i + n - 1]) : "", e.detail()));
      } catch (...) {
        stop = true;
        throw;
      }
      i += n;
    }
    std::vector<DevicePrint> mine = runner->take_device_prints();
    if (mine.empty()) return;
    std::lock_guard lock(prints_mutex);
    prints.insert(prints.end(), std::make_move_iterator(mine.begin()), std::make_move_iterator(mine.end()));
  };
  if (busy.size() == 1) {  // one core: the calling thread is that core's thread
    run_core(*busy[0]);
    return;
  }
  // Several cores: each runs on a TBB worker of its own, all at the same time, while the caller waits.
  run_on_own_workers(busy.size(), [&](std::size_t i) {
    try {
      run_core(*busy[i]);
    } catch (...) {
      stop = true;
      throw;
    }
  });
}

}  // namespace

BoundLaunch::BoundLaunch(const Kernel& k, GridSpec grid)
    : kernel_(std::make_shared<const Kernel>(k)), grid_(std::move(grid)) {}

LaunchResult BoundLaunch::run(const std::vector<Tensor>& args) const {
  const Kernel& k = *kernel_;
  if (Trace* outer = Trace::active()) {
    if (grid_.axes.empty()) {
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
  if (args.size() != k.arity()) {
    throw UserError("err_argument_count", k.name(), {},
                    fmt::format("the kernel takes {} tensors, {} were passed", k.arity(), args.size()));
  }
  const sim::Device& device =
      options_.device ? *options_.device : (args.empty() ? sim::Device::default_device() : args[0].device());
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!args[i].device().same_as(device)) {
      throw UserError("err_argument_device", k.name(), {},
                      fmt::format("argument {} lives on another device than the launch", i));
    }
  }

  LaunchResult result;
  result.grid = grid_;
  Communicator& world = communicator();
  const bool span = options_.span_ranks && world.ranks() > 1;
  if (span && options_.checked) {
    // Checked mode keeps who-wrote-what for the whole launch in one process.
    throw UserError("err_checked_spans_ranks", k.name(), {},
                    fmt::format("checked mode runs a launch in one process, but this one would spread over {} MPI "
                                "ranks; run it without mpirun",
                                world.ranks()));
  }
  int first_core = world.rank() * device.cores();  // this chip's first core in the world
  std::vector<CoreSchedule> all;  // spanning ranks: every core of the world
  if (span) {
    // The world's cores, of which this rank's chip runs its own (their ids stay global).
    all = place_instances(grid_, device.cores() * world.ranks(), k.name(), options_.unannotated_cores);
    result.cores.assign(all.begin() + first_core, all.begin() + first_core + device.cores());
    first_core = 0;
  } else {
    result.cores = place_instances(grid_, device.cores(), k.name(), options_.unannotated_cores);
  }

  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const Tensor& t : args) {
    shapes.push_back(t.shape());
    dtypes.push_back(t.dtype());
  }
  const std::shared_ptr<const TracedKernel> traced = k.trace(shapes, dtypes, grid_, device.spec().nc_version);
  const ir::KernelIR& ir = *traced->ir;
  result.ir_text = traced->text;
  result.ir_hash = traced->hash;

  refuse_aliased_writes(ir, args);
  sim::check_capacity(ir, device.spec());  // the live SBUF/PSUM of an instance fits one core
  refuse_per_instance_overflow(ir, result.cores, device);

  // One program per core: SPMD cores share one artifact; MPMD cores each get their own.
  std::vector<std::shared_ptr<const Program>> programs(result.cores.size());
  if (options_.executor == Executor::halide && !options_.checked) {
    // Compiled code clamps masked-off reads; bounds the validator could not prove are checked first.
    check_bounds_at_run_time(ir, grid_.logical_shape(), traced->unproven);
    CorePrograms p = programs_for_cores(k.name(), *traced, result.cores, std::string(device.spec().name), options_.mode,
                                        options_.layer_unroll_factor, first_core);
    programs = std::move(p.programs);
    result.compiled = p.distinct_compiled;
    result.reused = p.distinct_reused;
    result.artifact_keys = std::move(p.distinct_keys);
  } else {
    const std::shared_ptr<const Program> reference = make_reference_program(traced->ir, options_.checked);
    for (auto& p : programs) p = reference;
  }

  // Bind every tensor of the IR: arguments as given, ndarrays freshly allocated in HBM.
  // Per-instance tensors (SBUF, PSUM, private HBM) belong to each core's runner.
  std::vector<std::optional<Tensor>> storage(ir.tensors.size());
  std::vector<TensorBinding> bindings;
  for (const ir::TensorDecl& t : ir.tensors) {
    if (t.memory == ir::Memory::hbm_input) {
      const auto pos = std::find(ir.params.begin(), ir.params.end(), t.id) - ir.params.begin();
      storage[static_cast<std::size_t>(t.id)] = args[static_cast<std::size_t>(pos)];
    } else if (t.memory == ir::Memory::shared_hbm) {
      Tensor& out = storage[static_cast<std::size_t>(t.id)].emplace(t.shape, t.dtype, device);
      if (t.fill) fill_tensor(out, *t.fill);
      else if (span) fill_tensor(out, 0.0);  // every rank's copy starts alike
    } else if (t.memory == ir::Memory::constant_hbm) {
      // nl::shared_constant: the values the IR carries, in HBM before any instance runs.
      Tensor& c = storage[static_cast<std::size_t>(t.id)].emplace(t.shape, t.dtype, device);
      std::byte* data = c.data();
      const int eb = dtype_bytes(t.dtype);
      for (std::size_t i = 0; i < t.values.size(); ++i) store_element(data + static_cast<std::ptrdiff_t>(i) * eb, t.dtype, t.values[i]);
    }
    const std::optional<Tensor>& s = storage[static_cast<std::size_t>(t.id)];
    bindings.push_back(s ? TensorBinding{const_cast<std::byte*>(s->data()), s->shape(), s->strides(), s->dtype()}
                         : TensorBinding{nullptr, t.shape, row_major_strides(t.shape), t.dtype});
  }

  // Ranks spanning the world join outputs by what changed, so each output's starting bytes are kept.
  std::vector<std::vector<std::byte>> initial;
  if (span) {
    for (int id : ir.outputs) {
      const Tensor& t = *storage[static_cast<std::size_t>(id)];
      initial.emplace_back(t.data(), t.data() + t.bytes());
    }
  }

  // Checked mode keeps launch-wide state (who wrote what) in its one program.
  if (options_.checked) programs.front()->begin_launch(bindings);
  std::vector<DevicePrint> prints;
  run_on_cores(ir.name, programs, bindings, result.cores, prints);
  if (options_.checked) programs.front()->end_launch(bindings);
  // nl.device_print: instance order (each instance's lines in the order it printed them), whatever core ran it.
  std::stable_sort(prints.begin(), prints.end(), [](const DevicePrint& a, const DevicePrint& b) { return a.pid < b.pid; });
  std::ostream& print_to = options_.device_print != nullptr ? *options_.device_print : std::cout;
  for (const DevicePrint& p : prints) print_to << p.text << '\n';
  if (!prints.empty()) print_to.flush();

  for (std::size_t i = 0; i < ir.outputs.size(); ++i) {
    const auto id = static_cast<std::size_t>(ir.outputs[i]);
    if (span) join_rank_outputs(world, ir.name, ir.tensors[id].name, *storage[id], initial[i]);
    result.outputs.push_back(*storage[id]);
  }
  if (span) result.cores = std::move(all);
  return result;
}

Tensor BoundLaunch::first_output(LaunchResult r) const {
  if (r.outputs.empty()) {
    throw UserError("err_no_output", kernel_->name(), {}, "the kernel returns no tensor; use run() for its details");
  }
  return r.outputs.front();
}

}  // namespace nki
