/**
 * \file World launches: one kernel on every rank of a device mesh, each rank a NeuronCore that
 * sees its shard of each sharded argument, with collectives between ranks inside the kernel
 * (nki/kernel_collectives.h). Under MPI the ranks span every process's chip.
 */
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "nki/kernel.h"
#include "nki/mesh.h"
#include "nki/partition_spec.h"
#include "nki/sharded_tensor.h"
#include "nki/simulator/cost_model.h"
#include "nki/simulator/target.h"

namespace nki {

/** An argument of a world launch: a sharded tensor (each rank sees its shard) or a tensor every rank sees whole. */
class WorldArg {
 public:
  WorldArg(const ShardedTensor& t) : v_(&t) {}  // NOLINT: sharded over the launch's mesh
  WorldArg(const Tensor& t) : v_(&t) {}         // NOLINT: replicated (read-only: every rank shares it)
  const ShardedTensor* sharded() const { return std::holds_alternative<const ShardedTensor*>(v_) ? std::get<0>(v_) : nullptr; }
  const Tensor* replicated() const { return std::holds_alternative<const Tensor*>(v_) ? std::get<1>(v_) : nullptr; }

 private:
  std::variant<const ShardedTensor*, const Tensor*> v_;
};

struct WorldOptions {
  /// How each output (in return order) lies over the mesh: its partition spec, each rank's
  /// output being its shard (the global shape is the shard's times the tiles of each dimension).
  /// An output past the list's end is replicated: every rank's copy must then be the same
  /// (err_output_replicas_differ otherwise), as must be the copies of a sharded tile's replicas.
  std::vector<PartitionSpec> out_specs;
};

/** Everything a world launch did. */
struct WorldResult {
  std::vector<ShardedTensor> outputs;  ///< over the launch's mesh; under MPI each holds this process's shards
  /// Per rank of this process (world rank first_rank + i): its NeuronCore (nc) and the instances it ran.
  std::vector<CoreSchedule> ranks;
  int first_rank = 0;               ///< the world rank of ranks[0]
  int world_size = 1;
  int compiled = 0;                 ///< distinct artifacts this launch compiled
  int reused = 0;                   ///< distinct artifacts it found compiled
  std::vector<std::string> artifact_keys;  ///< distinct cache keys the ranks used
  std::string ir_text;              ///< canonical IR of the traced kernel (SPMD: the one every rank runs)
  std::string ir_hash;
};

/**
 * kernel[grid] on every device of `mesh`: world rank r is mesh device id r, run by NeuronCore r
 * of the arguments' sim::Device (under MPI: NeuronCore r - first of this process's chip, the
 * world's ranks split evenly over the processes). Each rank runs the whole grid on its core
 * (so the grid may not ask for more than one core: err_grid_exceeds_cores), with rank_id() its
 * world rank; a collective meets the same instance's collective on every rank of its group.
 * The launch options' executor, checked mode and compile mode apply: SPMD compiles one
 * artifact for every rank, MPMD one per rank with its rank and groups baked in.
 *
 * Before anything runs: arguments sharded over another mesh (err_mesh_mismatch), a mesh the
 * device's cores or the processes cannot hold (err_mesh_exceeds_cores), a kernel that writes a
 * replicated argument (err_replicated_argument_written), and collectives whose groups do not
 * fit the world (err_replica_group_mismatch, err_unknown_mesh_axis, ...).
 */
/** What every rank of a world launch runs, for the cost model (no data; nki::profile_world). */
struct WorldWork {
  std::shared_ptr<const TracedKernel> traced;
  /// Every rank of the world, in rank order: nc is its core on its chip, chip = rank / ranks per
  /// chip, and each collective's group size and chip span.
  std::vector<sim::CoreWork> ranks;
};

class WorldLaunch {
 public:
  WorldLaunch(const BoundLaunch& launch, Mesh mesh, WorldOptions options = {});
  WorldResult run(const std::vector<WorldArg>& args) const;
  /**
   * The trace and every rank's work for per-rank argument `shapes` and `dtypes` on target `t`,
   * each rank a logical core of `lnc` NeuronCores (so t.cores_per_chip / lnc ranks per chip),
   * checked as run() checks before anything runs.
   */
  WorldWork plan_cost(const std::vector<Shape>& shapes, const std::vector<DType>& dtypes, const sim::TargetSpec& t,
                      int lnc = 1) const;
  const Mesh& mesh() const { return mesh_; }

 private:
  BoundLaunch launch_;
  Mesh mesh_;
  WorldOptions options_;
};

}  // namespace nki
