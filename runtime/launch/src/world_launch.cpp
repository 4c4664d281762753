/**
 * \file World launches: the kernel on every rank of a mesh, each rank a NeuronCore with its shards,
 * collectives between them, outputs back as sharded tensors.
 */
#include "nki/world_launch.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "bounds_check.h"
#include "core/atomic_add.h"
#include "core/program.h"
#include "core_programs.h"
#include "core_run.h"
#include "dist/world_collectives.h"
#include "launch_checks.h"
#include "launch_tensors.h"
#include "nki/communicator.h"
#include "nki/ir/passes.h"
#include "nki/placement.h"
#include "nki/replica_groups.h"
#include "nki/simulator/capacity.h"
#include "nki/traced_kernel.h"
#include "reference_interpreter.h"
#include "world_plan.h"

namespace nki {

namespace {

[[noreturn]] void world_error(const std::string& kernel, const char* name, std::string detail) {
  throw UserError(name, kernel, {}, std::move(detail));
}

/** The global shape of an output whose every rank holds a shard of `shard` under `sharding`. */
Shape global_shape(const Shape& shard, const Sharding& sharding) {
  Shape g = shard;
  if (sharding.kind() == Sharding::Kind::tiled)
    for (std::size_t d = 0; d < g.size(); ++d) g[d] *= sharding.tile_dims()[d];
  return g;
}

/** A 64-bit hash of a buffer's bytes, eight at a time (for comparing replicas across processes). */
std::string content_hash(const Tensor& t) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  const auto n = static_cast<std::size_t>(t.bytes());
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, t.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < n; ++i) h = (h ^ static_cast<std::uint64_t>(t.data()[i])) * 0x100000001b3ull;
  return fmt::format("{:016x}", h);
}

/**
 * Replicas of one tile must agree: err_output_replicas_differ names two ranks that do not (this
 * process's by their first differing element, another process's by a hash of the contents).
 * Each local replica is compared with its tile's first local one; tiles with a replica on
 * another process exchange one hash per process.
 */
void check_replicas(Communicator& world, const std::string& kernel, const std::string& name,
                    const std::vector<ShardPlacement>& placement, int first, const std::vector<Tensor>& shards) {
  const int n = static_cast<int>(shards.size());
  auto tile_of = [&](int device) { return placement[static_cast<std::size_t>(device)].tile; };
  std::map<std::vector<std::int64_t>, std::vector<int>> devices_of;  // tile -> every device holding it
  for (const ShardPlacement& p : placement) devices_of[p.tile].push_back(p.device);
  std::map<std::vector<std::int64_t>, int> first_local;  // tile -> its first local device
  bool crosses = false;
  std::string local_error;  // the first pair of this process's replicas that differ
  for (int a = 0; a < n; ++a) {
    const auto tile = tile_of(first + a);
    const std::vector<int>& all = devices_of[tile];
    crosses = crosses || std::any_of(all.begin(), all.end(), [&](int d) { return d < first || d >= first + n; });
    const auto [it, fresh] = first_local.emplace(tile, first + a);
    if (fresh || !local_error.empty()) continue;
    const Tensor& x = shards[static_cast<std::size_t>(it->second - first)];
    const Tensor& y = shards[static_cast<std::size_t>(a)];
    if (std::memcmp(x.data(), y.data(), static_cast<std::size_t>(x.bytes())) == 0) continue;
    const std::vector<double> xv = x.to_values(), yv = y.to_values();
    std::size_t e = 0;
    while (e < xv.size() && (xv[e] == yv[e] || (xv[e] != xv[e] && yv[e] != yv[e]))) ++e;
    local_error = fmt::format("output {} is declared the same on ranks {} and {} (replicas of tile [{}]) but element {} "
                              "is {} on rank {} and {} on rank {}; declare its partition spec over the axes it differs "
                              "along, or make the ranks compute the same",
                              name, it->second, first + a, fmt::join(tile, ","), e, xv[e], it->second, yv[e], first + a);
  }
  if (world.ranks() == 1) {
    if (!local_error.empty()) world_error(kernel, "err_output_replicas_differ", local_error);
    return;
  }
  // Every process says what it found and whether it holds a replica another holds too: all raise
  // the first process's finding alike (none left waiting), or compare hashes where replicas cross.
  bool any = false;
  for (const std::string& c : world.all_gather_text((crosses ? "1" : "0") + local_error)) {
    if (c.size() > 1) world_error(kernel, "err_output_replicas_differ", c.substr(1));
    any = any || c[0] == '1';
  }
  if (!any) return;
  std::string mine;
  for (const auto& [tile, device] : first_local) {
    if (devices_of[tile].size() < 2) continue;
    mine += fmt::format("{} {} {}\n", device, fmt::join(tile, ","), content_hash(shards[static_cast<std::size_t>(device - first)]));
  }
  std::map<std::string, std::pair<int, std::string>> by_tile;
  for (const std::string& part : world.all_gather_text(mine)) {
    std::istringstream in(part);
    int device = 0;
    std::string tile, hash;
    while (in >> device >> tile >> hash) {
      auto [it, fresh] = by_tile.emplace(tile, std::make_pair(device, hash));
      if (fresh || it->second.second == hash) continue;
      world_error(kernel, "err_output_replicas_differ",
                  fmt::format("output {} is declared the same on ranks {} and {} (replicas of tile [{}]) but their "
                              "contents differ; declare its partition spec over the axes it differs along, or make the "
                              "ranks compute the same",
                              name, it->second.first, device, tile));
    }
  }
}

}  // namespace

WorldLaunch::WorldLaunch(const BoundLaunch& launch, Mesh mesh, WorldOptions options)
    : launch_(launch), mesh_(std::move(mesh)), options_(std::move(options)) {}

WorldWork WorldLaunch::plan_cost(const std::vector<Shape>& shapes, const std::vector<DType>& dtypes,
                                 const sim::TargetSpec& t, int lnc) const {
  const Kernel& k = launch_.kernel();
  refuse_nested_launch(k, launch_.grid(), shapes.size());
  const int W = mesh_.size();
  WorldWork w;
  w.traced = k.trace(shapes, dtypes, launch_.grid(), t.nc_version, W);
  sim::check_capacity(*w.traced->ir, t);
  const WorldPlan plan = plan_world(*w.traced, mesh_, 0, W, CompileMode::spmd);
  const std::vector<CoreSchedule> placed = place_instances(launch_.grid(), 1, k.name(), 1);
  const int per_chip = std::max(1, t.cores_per_chip / std::max(1, lnc));
  for (int r = 0; r < W; ++r)
    w.ranks.push_back({r % per_chip, placed.front().instances.to_vectors(), r, r / per_chip, collective_shapes(plan, *w.traced->ir, r, per_chip)});
  return w;
}

WorldResult WorldLaunch::run(const std::vector<WorldArg>& args) const {
  const Kernel& k = launch_.kernel();
  const LaunchOptions& o = launch_.options();
  refuse_nested_launch(k, launch_.grid(), args.size());

  // The world: mesh device r is world rank r; the processes hold equal consecutive runs of ranks.
  Communicator& world = communicator();
  const int W = mesh_.size(), P = world.ranks();
  if (W % P != 0) {
    world_error(k.name(), "err_mesh_exceeds_cores",
                fmt::format("the mesh {} has {} devices, which do not split evenly over {} processes", mesh_.str(), W, P));
  }
  const int n = W / P, first = world.rank() * n;
  // Everything refused before anything runs, on every process alike: under MPI a process whose
  // arguments are wrong fails every process instead of leaving them in the next exchange.
  WorldResult result;
  result.first_rank = first;
  result.world_size = W;
  const sim::Device* device = nullptr;
  std::vector<std::vector<Tensor>> rank_args;
  std::shared_ptr<const TracedKernel> traced;
  WorldPlan plan;
  auto prepare = [&] {
    const sim::Device* device_ptr = o.device;
    for (const WorldArg& a : args) {
      if (device_ptr != nullptr) break;
      if (const ShardedTensor* s = a.sharded(); s != nullptr && s->local_devices() > 0) device_ptr = &s->shards().front().device();
      else if (const Tensor* t = a.replicated()) device_ptr = &t->device();
    }
    device = device_ptr != nullptr ? device_ptr : &sim::Device::default_device();
    if (device->cores() < n) {
      world_error(k.name(), "err_mesh_exceeds_cores",
                  fmt::format("the mesh {} puts {} ranks on each process's device, which has {} NeuronCores; make a "
                              "device with enough cores, e.g. sim::Device(\"{}\", {})",
                              mesh_.str(), n, device->cores(), device->spec().name, n));
    }

    // Each rank's view of the arguments: its shard, or the replicated tensor.
    rank_args.assign(static_cast<std::size_t>(n), {});
    std::vector<Shape> shapes;
    std::vector<DType> dtypes;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const WorldArg& a = args[i];
      if (const ShardedTensor* s = a.sharded()) {
        if (!(s->mesh() == mesh_)) {
          world_error(k.name(), "err_mesh_mismatch",
                      fmt::format("argument {} is sharded over the mesh {}, the launch runs on {}", i, s->mesh().str(), mesh_.str()));
        }
        for (int r = 0; r < n; ++r) rank_args[static_cast<std::size_t>(r)].push_back(s->shard(first + r));
      } else {
        for (int r = 0; r < n; ++r) rank_args[static_cast<std::size_t>(r)].push_back(*a.replicated());
      }
      const Tensor& t0 = rank_args.front().back();
      if (!t0.device().same_as(*device))
        world_error(k.name(), "err_argument_device", fmt::format("argument {} lives on another device than the launch", i));
      shapes.push_back(t0.shape());
      dtypes.push_back(t0.dtype());
    }

    traced = k.trace(shapes, dtypes, launch_.grid(), device->spec().nc_version, W);
    const ir::KernelIR& ir = *traced->ir;
    result.ir_text = traced->text;
    result.ir_hash = traced->hash;
    refuse_aliased_writes(ir, rank_args.front());
    const std::vector<int> stores = ir::count_stores(ir);
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (args[i].replicated() == nullptr || stores[static_cast<std::size_t>(ir.params[i])] == 0) continue;
      world_error(k.name(), "err_replicated_argument_written",
                  fmt::format("the kernel writes argument {} ({}), which every rank shares whole; pass it sharded, or "
                              "write an output instead",
                              i, ir.tensors[static_cast<std::size_t>(ir.params[i])].name));
    }

    // Every collective's groups, checked against the world before anything runs; MPMD kernels per rank.
    plan = plan_world(*traced, mesh_, first, n, o.mode);

    // Every rank runs the whole grid on its own NeuronCore, in the grid's row-major order.
    const std::vector<CoreSchedule> placed = place_instances(launch_.grid(), 1, k.name(), 1);
    for (int r = 0; r < n; ++r) result.ranks.push_back({r, placed.front().instances});
    sim::check_capacity(ir, device->spec());
    refuse_per_instance_overflow(ir, result.ranks, *device);
  };
  if (P > 1) on_every_rank(world, prepare);
  else prepare();
  const ir::KernelIR& ir = *traced->ir;

  std::vector<std::shared_ptr<const Program>> programs(static_cast<std::size_t>(n));
  const std::vector<std::shared_ptr<const TracedKernel>>& baked = plan.baked;
  if (o.executor == Executor::halide && !o.checked) {
    check_bounds_at_run_time(ir, launch_.grid().logical_shape(), traced->unproven, W);
    CorePrograms p = programs_for_cores(k.name(), *traced, result.ranks, std::string(device->spec().name), o.mode,
                                        o.layer_unroll_factor, first, baked, plan.mesh_key);
    programs = std::move(p.programs);
    result.compiled = p.distinct_compiled;
    result.reused = p.distinct_reused;
    result.artifact_keys = std::move(p.distinct_keys);
  } else {
    for (int r = 0; r < n; ++r)  // checked mode keeps one launch's state per program: one per rank
      programs[static_cast<std::size_t>(r)] = make_reference_program(baked.empty() ? traced->ir : baked[static_cast<std::size_t>(r)]->ir, o.checked);
  }

  std::vector<LaunchTensors> tensors;
  for (int r = 0; r < n; ++r) tensors.push_back(bind_launch_tensors(ir, rank_args[static_cast<std::size_t>(r)], *device, traced->stored_whole));
  if (o.checked)
    for (int r = 0; r < n; ++r) programs[static_cast<std::size_t>(r)]->begin_launch(tensors[static_cast<std::size_t>(r)].bindings);

  // Each rank on a thread of its own (they wait for each other at collectives); this thread
  // serves the steps that cross processes.
  WorldCollectives hub(k.name(), W, first, plan.rank_groups, P > 1 ? &world : nullptr);
  std::atomic<bool> stop{false};
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
  std::vector<std::vector<DevicePrint>> prints(static_cast<std::size_t>(n));
  std::exception_ptr serve_error;
  {
    std::vector<std::unique_ptr<AtomicSumsScope>> atomic_sums;  // declared before the threads: dropped after they join
    for (int r = 0; r < n; ++r)
      atomic_sums.push_back(std::make_unique<AtomicSumsScope>(tensors[static_cast<std::size_t>(r)].bindings, has_atomic_updates(ir)));
    std::vector<std::jthread> threads;
    for (int r = 0; r < n; ++r) {
      threads.emplace_back([&, r] {
        const auto i = static_cast<std::size_t>(r);
        try {
          std::unique_ptr<CoreRunner> runner = programs[i]->bind(tensors[i].bindings);
          runner->set_rank_link(&hub.link(r));
          if (run_core_instances(k.name(), *runner, result.ranks[i].instances, CoreName{"rank ", first + r}, stop))
            hub.finished(r);
          prints[i] = runner->take_device_prints();
        } catch (const RankStopped&) {
          errors[i] = std::current_exception();
        } catch (const std::exception& e) {
          errors[i] = std::current_exception();
          stop = true;
          hub.failed(r, e.what());
        }
      });
    }
    try {
      hub.serve();
    } catch (...) {
      serve_error = std::current_exception();
      stop = true;
    }
  }  // every rank's thread joined
  for (const std::exception_ptr& e : errors) {  // the first rank's own failure, not the ones it stopped
    if (!e) continue;
    try {
      std::rethrow_exception(e);
    } catch (const RankStopped&) {
    }
  }
  if (serve_error) std::rethrow_exception(serve_error);
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);  // stopped, with no rank's own reason here: an internal fault
  if (o.checked)
    for (int r = 0; r < n; ++r) programs[static_cast<std::size_t>(r)]->end_launch(tensors[static_cast<std::size_t>(r)].bindings);

  std::ostream& print_to = o.device_print != nullptr ? *o.device_print : std::cout;
  for (int r = 0; r < n; ++r) {
    std::vector<DevicePrint>& mine = prints[static_cast<std::size_t>(r)];
    std::stable_sort(mine.begin(), mine.end(), [](const DevicePrint& a, const DevicePrint& b) { return a.pid < b.pid; });
    for (const DevicePrint& p : mine) print_to << "[rank " << first + r << "] " << p.text << '\n';
  }
  print_to.flush();

  // Each output as the sharded tensor its declared spec makes of the ranks' copies.
  for (LaunchTensors& mine : tensors) copy_view_outputs(ir, mine);
  for (std::size_t i = 0; i < ir.outputs.size(); ++i) {
    const auto id = static_cast<std::size_t>(ir.outputs[i]);
    const ir::TensorDecl& t = ir.tensors[id];
    const PartitionSpec spec = i < options_.out_specs.size()
                                   ? options_.out_specs[i]
                                   : PartitionSpec(std::vector<PartitionSpec::Entry>(t.shape.size()));
    const Sharding sharding = Sharding::from_spec(mesh_, spec, t.shape.size());
    const Shape global = global_shape(t.shape, sharding);
    std::vector<Tensor> shards;
    for (int r = 0; r < n; ++r) shards.push_back(*tensors[static_cast<std::size_t>(r)].storage[id]);
    check_replicas(world, k.name(), t.name, sharding.placement(global), first, shards);
    result.outputs.push_back(ShardedTensor::from_local_shards(global, t.dtype, mesh_, spec, first, std::move(shards)));
  }
  return result;
}

}  // namespace nki
