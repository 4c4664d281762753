/** \file Launches: bind tensors, place instances on NeuronCores, run each core on its own TBB worker. */
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <sstream>
#include <atomic>
#include <chrono>
#include <numeric>
#include <iostream>
#include <mutex>
#include <exception>
#include <optional>

#include "nki/traced_kernel.h"
#include "nki/placement.h"
#include "nki/communicator.h"
#include "nki/interrupt.h"
#include "nki/ir/kernel_ir.h"
#include "unwritten_marker.h"
#include "nki/ir/passes.h"
#include "nki/simulator/host_memory.h"
#include "nki/kernel.h"
#include "nki/simulator/capacity.h"
#include "bounds_check.h"
#include "core/atomic_add.h"
#include "core/core_workers.h"
#include "core_programs.h"
#include "dist/world_collectives.h"
#include "core_run.h"
#include "launch_checks.h"
#include "launch_memo.h"
#include "shared_batches.h"
#include "launch_tensors.h"
#include "nki/trace.h"
#include "core/program.h"
#include "core/rank_link.h"
#include "reference_interpreter.h"
#include "world_outputs.h"

namespace nki {

namespace {

/** A core of a plain launch: rank 0 of a world of one, and one of the two cores core_barrier and sendrecv meet. */
class PlainCoreLink final : public RankLink {
 public:
  PlainCoreLink(RankLink& solo, RankLink& cores) : solo_(solo), cores_(cores) {}
  int rank() const override { return 0; }
  void collective(const ir::KernelIR& k, int op, std::span<const TensorBinding> srcs, std::span<const TensorBinding> dsts,
                  std::span<const std::int64_t> pid) override {
    const bool cores = ir::meets_cores(std::get<ir::CollectiveOp>(k.body[static_cast<std::size_t>(op)]));
    (cores ? cores_ : solo_).collective(k, op, srcs, dsts, pid);
  }

 private:
  RankLink& solo_;
  RankLink& cores_;
};

/** Whether the kernel makes a core_barrier or sendrecv. */
bool meets_cores(const ir::KernelIR& k) {
  for (const ir::Op& op : k.body)
    if (const auto* c = std::get_if<ir::CollectiveOp>(&op); c != nullptr && ir::meets_cores(*c)) return true;
  return false;
}

/** core_barrier and sendrecv meet NC0 and NC1: both must run instances, and no other core may. */
void refuse_cores_apart(const ir::KernelIR& k, const std::vector<CoreSchedule>& cores) {
  std::vector<int> busy;
  for (const CoreSchedule& c : cores)
    if (!c.instances.empty()) busy.push_back(c.nc);
  if (busy == std::vector<int>{0, 1}) return;
  for (const ir::Op& op : k.body) {
    const auto* c = std::get_if<ir::CollectiveOp>(&op);
    if (c == nullptr || !ir::meets_cores(*c)) continue;
    throw UserError("err_core_sync_cores", k.name, c->loc,
                    fmt::format("isa::{} meets NeuronCores 0 and 1 of the logical core, but the launch runs instances on "
                                "NC{}; launch the grid over both cores (nc(2))",
                                ir::collective_name(c->kind), fmt::join(busy, ", NC")));
  }
}

/**
 * Below this, the work other threads would take off the calling thread costs less than handing
 * it to them: a two-core launch's fixed cost is ~7 us above a one-core launch's on the machine
 * bench/README.md describes ("The fixed cost of a two-core launch": the wake-up, and the launch's
 * cache lines crossing between CPUs), so cores whose instances take a few microseconds are
 * cheaper run one after the other.
 */
constexpr std::chrono::microseconds kHandOffCost{5};

/**
 * Runs every core's instances, each busy core on a thread of its own. The first failure
 * stops every core before its next batch and is rethrown with its core and instances;
 * so does an interrupt request (nki::Interrupted). Every core's thread has returned
 * before this does.
 *
 * With CoreThreads::caller, or automatic when the last timed launch of this traced kernel
 * (`memo`: threaded launches always, those on the caller one in LaunchMemo::kRetimeEvery)
 * found the cores beside the longest-running one busy for less than kHandOffCost together,
 * they run one after the other on the calling thread instead: an order the threads could also
 * have run them in. Cores that meet (core_barrier, sendrecv) always run at once.
 */
void run_on_cores(const std::string& kernel, const std::vector<std::shared_ptr<const Program>>& programs,
                  const std::vector<TensorBinding>& bindings, const std::vector<CoreSchedule>& cores,
                  const std::vector<RankLink*>& links, std::vector<DevicePrint>& prints, WorldCollectives* cores_meet,
                  CoreThreads how, LaunchMemo* memo) {
  std::mutex prints_mutex;
  std::vector<const CoreSchedule*> busy;
  busy.reserve(cores.size());
  for (const CoreSchedule& c : cores)
    if (!c.instances.empty()) busy.push_back(&c);

  std::atomic<bool> stop{false};
  std::vector<std::chrono::nanoseconds> took;  // per busy core, when timed
  auto at = [&](std::size_t i) { return static_cast<std::size_t>(busy[i] - cores.data()); };  // busy i's place in `cores`
  // Busy core i's instances on `runner`; false when another core's failure stopped them.
  auto run_instances = [&](std::size_t i, CoreRunner& runner) {
    const CoreSchedule& core = *busy[i];
    runner.set_rank_link(links[at(i)]);
    if (!run_core_instances(kernel, runner, core.instances, CoreName{"NC", core.nc}, stop)) return false;
    // The other core may still wait at a core_barrier: it learns this one made its last.
    if (cores_meet != nullptr) cores_meet->finished(core.nc);
    return true;
  };
  auto keep_prints = [&](CoreRunner& runner) {
    std::vector<DevicePrint> mine = runner.take_device_prints();
    if (mine.empty()) return;
    std::lock_guard lock(prints_mutex);
    prints.insert(prints.end(), std::make_move_iterator(mine.begin()), std::make_move_iterator(mine.end()));
  };
  bool timed = true;  // whether `took` is measured (and remembered)
  std::optional<SharedBatches> shared;  // cores on threads sharing out their batches
  // Busy core i's thread: its own instances, or with `shared` whichever batches it takes.
  auto run_core = [&](std::size_t i) {
    const auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    std::unique_ptr<CoreRunner> runner = programs[at(i)]->bind(bindings);
    if (!(shared ? shared->run(i, kernel, *runner, stop) : run_instances(i, *runner))) return;
    keep_prints(*runner);
    if (timed) took[i] = std::chrono::steady_clock::now() - start;
  };
  if (busy.size() == 1) {  // one core: the calling thread is that core's thread (nothing to time)
    timed = false;
    run_core(0);
    return;
  }
  const std::optional<std::chrono::nanoseconds> beside = memo != nullptr ? memo->work_beside_longest_core() : std::nullopt;
  const bool short_cores = how == CoreThreads::automatic && beside && *beside < kHandOffCost;
  // Cores of one program without rank links run alike on any runner: each instance starts from
  // undefined on-chip memory either way (checked mode poisons it per instance).
  bool one_program = true;
  for (std::size_t i = 0; i < busy.size(); ++i) one_program = one_program && programs[at(i)] == programs[at(0)] && links[at(i)] == nullptr;
  if (cores_meet == nullptr && (how == CoreThreads::caller || short_cores)) {
    // Forced onto the caller, nothing needs their times; found short, they are timed now and then.
    timed = short_cores && memo->retime_cores_on_caller();
    if (timed) took.resize(busy.size());
    try {
      // Such cores also share one runner, as one core's instances do: binding a runner per core
      // would only cost its allocations.
      if (one_program) {
        std::unique_ptr<CoreRunner> runner = programs[at(0)]->bind(bindings);
        for (std::size_t i = 0; i < busy.size(); ++i) {
          const auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
          run_instances(i, *runner);
          if (timed) took[i] = std::chrono::steady_clock::now() - start;
        }
        keep_prints(*runner);
      } else {
        for (std::size_t i = 0; i < busy.size(); ++i) run_core(i);
      }
    } catch (...) {
      stop = true;
      throw;
    }
  } else {
    // Several cores: each on a thread of its own, all at the same time, while the caller waits
    // (cores may wait for each other: core_barrier, sendrecv). Cores that never meet share out
    // their batches (SharedBatches): the launch ends when the work does, not when the thread
    // that started last or ran on the slower CPU does.
    took.resize(busy.size());
    if (cores_meet == nullptr && one_program) {
      std::vector<SharedCore> sharing;
      for (const CoreSchedule* c : busy) sharing.push_back({&c->instances, CoreName{"NC", c->nc}});
      shared.emplace(sharing);
    }
    run_on_own_threads(busy.size(), [&](std::size_t i) {
      try {
        run_core(i);
      } catch (const RankStopped&) {  // the other core failed: its error is the launch's
        stop = true;
      } catch (const std::exception& e) {
        stop = true;
        if (cores_meet != nullptr) cores_meet->failed(busy[i]->nc, e.what());  // the other core stops waiting
        throw;
      } catch (...) {
        stop = true;
        throw;
      }
    });
  }
  if (memo == nullptr || stop || !timed) return;
  const std::chrono::nanoseconds all = std::accumulate(took.begin(), took.end(), std::chrono::nanoseconds{0});
  memo->remember_work_beside_longest_core(all - *std::max_element(took.begin(), took.end()));
}

}  // namespace

BoundLaunch::BoundLaunch(const Kernel& k, GridSpec grid)
    : kernel_(std::make_shared<const Kernel>(k)), grid_(std::move(grid)) {}

namespace {

/**
 * One launch. With `marked` set, every output an instance is to write starts as marker `pass`
 * (unwritten_marker.h), and `marked` receives, per output, the elements still holding it.
 */
LaunchResult launch_once(const BoundLaunch& self, const std::vector<Tensor>& args, int pass,
                         std::vector<std::vector<std::int64_t>>* marked) {
  const Kernel& k = self.kernel();
  const GridSpec& grid = self.grid();
  const LaunchOptions& options = self.options();
  refuse_nested_launch(k, grid, args.size());
  const sim::Device& device =
      options.device ? *options.device : (args.empty() ? sim::Device::default_device() : args[0].device());
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!args[i].device().same_as(device)) {
      throw UserError("err_argument_device", k.name(), {},
                      fmt::format("argument {} lives on another device than the launch", i));
    }
  }

  LaunchResult result;
  result.grid = grid;
  Communicator& world = communicator();
  const bool span = options.span_ranks && world.ranks() > 1;
  if (span && options.checked) {
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
    all = placement_of(grid, device.cores() * world.ranks(), k.name(), options.unannotated_cores);
    result.cores.assign(all.begin() + first_core, all.begin() + first_core + device.cores());
    first_core = 0;
  } else {
    result.cores = placement_of(grid, device.cores(), k.name(), options.unannotated_cores);
  }

  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const Tensor& t : args) {
    shapes.push_back(t.shape());
    dtypes.push_back(t.dtype());
  }
  const std::shared_ptr<const TracedKernel> traced = k.trace(shapes, dtypes, grid, device.spec().nc_version);
  const ir::KernelIR& ir = *traced->ir;
  result.ir_text = traced->text;
  result.ir_hash = traced->hash;

  refuse_aliased_writes(ir, args);
  if (span) refuse_arguments_written_across_ranks(ir, world.ranks());
  if (!traced->memo || !traced->memo->fits(device.spec())) {
    sim::check_capacity(ir, device.spec());  // the live SBUF/PSUM of an instance fits one core
    if (traced->memo) traced->memo->remember_fits(device.spec());
  }
  refuse_per_instance_overflow(ir, result.cores, device);

  // One program per core: SPMD cores share one artifact; MPMD cores each get their own.
  std::vector<std::shared_ptr<const Program>> programs(result.cores.size());
  if (options.executor == Executor::halide && !options.checked) {
    // Compiled code clamps masked-off reads; bounds the validator could not prove are checked first.
    check_bounds_at_run_time(ir, grid.logical_shape(), traced->unproven);
    CorePrograms p = programs_for_cores(k.name(), *traced, result.cores, std::string(device.spec().name), options.mode,
                                        options.layer_unroll_factor, first_core);
    programs = std::move(p.programs);
    result.compiled = p.distinct_compiled;
    result.reused = p.distinct_reused;
    result.artifact_keys = std::move(p.distinct_keys);
  } else {
    const std::shared_ptr<const Program> reference = make_reference_program(traced->ir, options.checked);
    for (auto& p : programs) p = reference;
  }

  // Bind every tensor of the IR: arguments as given, ndarrays freshly allocated in HBM, zeroed
  // unless stores write them whole (always when spanning ranks, so every rank's copy starts alike).
  LaunchTensors tensors = bind_launch_tensors(ir, args, device, traced->stored_whole, span);
  std::vector<std::optional<Tensor>>& storage = tensors.storage;
  std::vector<bool> marker_filled(ir.outputs.size(), false);
  if (marked != nullptr) {
    for (std::size_t i = 0; i < ir.outputs.size(); ++i) {
      const ir::TensorDecl& t = ir.tensors[static_cast<std::size_t>(ir.outputs[i])];
      if (t.memory != ir::Memory::shared_hbm || t.fill || t.view_of >= 0) continue;  // an argument, a constant, a view
      // Plain stores provably write it whole over the grid (ir::stored_whole): no element can be
      // left unwritten (when spanning ranks, by the ranks together).
      const auto id = static_cast<std::size_t>(t.id);
      if (id < traced->stored_whole.size() && traced->stored_whole[id]) continue;
      fill_marker(*storage[id], pass);
      marker_filled[i] = true;
    }
  }
  const std::vector<TensorBinding>& bindings = tensors.bindings;

  // Ranks spanning the world join outputs by what changed, so each output's starting bytes are kept.
  std::vector<std::vector<std::byte>> initial;
  if (span) {
    for (int id : ir.outputs) {
      const Tensor& t = *storage[static_cast<std::size_t>(id)];
      initial.emplace_back(t.data(), t.data() + t.bytes());
    }
  }

  // Checked mode keeps launch-wide state (who wrote what) in its one program.
  if (options.checked) programs.front()->begin_launch(bindings);
  // A plain launch is a world of one rank: each busy core's collectives meet no one but itself;
  // core_barrier and sendrecv meet the logical core's two cores (its own hub, cores in different instances).
  std::vector<std::unique_ptr<WorldCollectives>> solo;
  std::unique_ptr<WorldCollectives> cores_hub;
  std::vector<std::unique_ptr<PlainCoreLink>> core_links;
  std::vector<RankLink*> links(result.cores.size(), nullptr);
  if (has_collectives(ir)) {
    const std::vector<CollectiveGroups> groups = resolve_collective_groups(ir, 1, [&](const std::vector<std::string>& axes) -> GroupList {
      throw UserError("err_unknown_mesh_axis", ir.name, {},
                      fmt::format("a collective names mesh axes {{{}}} but a plain launch has no mesh; launch it on a "
                                  "mesh with nki::WorldLaunch",
                                  fmt::join(axes, ",")));
    });
    if (meets_cores(ir)) {
      refuse_cores_apart(ir, result.cores);
      cores_hub = std::make_unique<WorldCollectives>(
          ir.name, 2, 0, std::vector<std::vector<std::vector<int>>>{own_groups(groups, 0), own_groups(groups, 1)}, nullptr,
          true);
    }
    for (std::size_t c = 0; c < result.cores.size(); ++c) {
      if (result.cores[c].instances.empty()) continue;
      solo.push_back(std::make_unique<WorldCollectives>(ir.name, 1, 0, std::vector<std::vector<std::vector<int>>>{own_groups(groups, 0)}));
      links[c] = &solo.back()->link(0);
      if (!cores_hub) continue;
      core_links.push_back(std::make_unique<PlainCoreLink>(*links[c], cores_hub->link(result.cores[c].nc)));
      links[c] = core_links.back().get();
    }
  }
  std::vector<DevicePrint> prints;
  {
    const AtomicSumsScope atomic_sums(bindings, has_atomic_updates(ir));
    run_on_cores(ir.name, programs, bindings, result.cores, links, prints, cores_hub.get(), options.core_threads,
                 traced->memo.get());
  }
  if (options.checked) programs.front()->end_launch(bindings);
  // nl.device_print: instance order (each instance's lines in the order it printed them), whatever core ran it.
  std::stable_sort(prints.begin(), prints.end(), [](const DevicePrint& a, const DevicePrint& b) { return a.pid < b.pid; });
  std::ostream& print_to = options.device_print != nullptr ? *options.device_print : std::cout;
  for (const DevicePrint& p : prints) print_to << p.text << '\n';
  if (!prints.empty()) print_to.flush();

  copy_view_outputs(ir, tensors);
  for (std::size_t i = 0; i < ir.outputs.size(); ++i) {
    const auto id = static_cast<std::size_t>(ir.outputs[i]);
    if (span) join_rank_outputs(world, ir.name, ir.tensors[id].name, *storage[id], initial[i]);
    result.outputs.push_back(*storage[id]);
    if (marked != nullptr) marked->push_back(marker_filled[i] ? elements_holding_marker(*storage[id], pass) : std::vector<std::int64_t>{});
  }
  if (span) result.cores = std::move(all);
  return result;
}

}  // namespace

LaunchResult BoundLaunch::run(const std::vector<Tensor>& args, CallSite site) const {
  try {
    return run_finding_unwritten(args);
  } catch (const UserError& e) {
    if (!e.location().file.empty() || site.loc.file.empty()) throw;
    throw UserError(e.name(), e.kernel(), site.loc, e.detail());  // no line of the body explains it: the call's
  }
}

LaunchResult BoundLaunch::run_finding_unwritten(const std::vector<Tensor>& args) const {
  if (!options_.find_unwritten || options_.checked) return launch_once(*this, args, 0, nullptr);
  std::vector<std::vector<std::int64_t>> first, second;
  LaunchResult result = launch_once(*this, args, 1, &first);
  if (std::all_of(first.begin(), first.end(), [](const auto& m) { return m.empty(); })) return result;
  // An element still holding marker 1 may have been written with that value: one that also holds
  // marker 2 after a run starting from it was written by no one. The second run works on copies
  // (the caller's arguments change once) and prints nothing.
  std::vector<Tensor> copies;
  for (const Tensor& a : args) {
    Tensor& c = copies.emplace_back(a.shape(), a.dtype(), a.device());
    std::memcpy(c.data(), a.data(), static_cast<std::size_t>(a.bytes()));
  }
  std::ostringstream no_prints;
  LaunchOptions quiet = options_;
  quiet.device_print = &no_prints;
  BoundLaunch again = *this;
  launch_once(again.with(quiet), copies, 2, &second);
  for (std::size_t i = 0; i < first.size(); ++i) {
    std::vector<std::int64_t> never;
    std::set_intersection(first[i].begin(), first[i].end(), second[i].begin(), second[i].end(), std::back_inserter(never));
    if (never.empty()) continue;
    zero_elements(result.outputs[i], never);
    result.unwritten.push_back({i, static_cast<std::int64_t>(never.size()), never.front()});
  }
  return result;
}

Tensor BoundLaunch::first_output(LaunchResult r) const {
  if (r.outputs.empty()) {
    throw UserError("err_no_output", kernel_->name(), {}, "the kernel returns no tensor; use run() for its details");
  }
  return r.outputs.front();
}

}  // namespace nki
