/** \file mark_sharding / clear_sharding: a tensor split into shard buffers in simulated HBM. */
#pragma once

#include <string>
#include <vector>

#include "nki/mesh.h"
#include "nki/partition_spec.h"
#include "nki/sharding.h"
#include "nki/tensor.h"

namespace nki {

/**
 * A tensor sharded over a mesh (torch_xla's XLAShardedTensor): one buffer per mesh
 * device in the HBM of the tensor's sim::Device, of the padded shard shape, holding the
 * device's slice with zeros in the padding. Device id i is NeuronCore i of that device.
 * Under MPI a process may hold only its own devices' shards (from_local_shards): devices
 * first_local_device() .. + local_devices() - 1, local device i on NeuronCore i.
 */
class ShardedTensor {
 public:
  const Shape& shape() const { return shape_; }  ///< the global shape
  DType dtype() const { return dtype_; }
  const Mesh& mesh() const { return mesh_; }
  const PartitionSpec& spec() const { return spec_; }
  const Sharding& sharding() const { return sharding_; }
  /** The HloSharding text (torch_xla's `_get_xla_sharding_spec`); "" after clear_sharding. */
  std::string sharding_spec() const { return cleared_ ? std::string() : sharding_.str(); }
  const std::vector<ShardPlacement>& placement() const { return placement_; }
  /** The shard buffer of `device` (a mesh device id); err_shard_not_local when this process does not hold it. */
  const Tensor& shard(int device) const;
  /** Every shard buffer this process holds, indexed by device id - first_local_device(). */
  const std::vector<Tensor>& shards() const { return shards_; }
  /** The first mesh device whose shard this process holds (0 unless made by from_local_shards). */
  int first_local_device() const { return first_local_; }
  /** How many consecutive devices' shards this process holds (the mesh size unless made by from_local_shards). */
  int local_devices() const { return static_cast<int>(shards_.size()); }
  /** Whether this process holds the shard of `device`. */
  bool holds(int device) const { return device >= first_local_ && device < first_local_ + local_devices(); }
  /**
   * A new tensor of the global shape assembled from the shards (replica 0 of each tile); every
   * shard must be here (err_shard_not_local otherwise).
   */
  Tensor gather() const;

  /**
   * A sharded tensor of global `shape` from the shards this process holds: `shards[i]` is mesh
   * device first_device + i's, each of the padded shard shape and `dtype`, on one sim::Device
   * with a NeuronCore for each (no process needs the whole tensor; a world launch under MPI
   * takes these). Throws err_invalid_shards naming what does not fit.
   */
  static ShardedTensor from_local_shards(Shape shape, DType dtype, Mesh mesh, PartitionSpec spec, int first_device,
                                         std::vector<Tensor> shards);

 private:
  friend ShardedTensor mark_sharding(const Tensor&, const Mesh&, const PartitionSpec&);
  friend Tensor clear_sharding(ShardedTensor&);
  ShardedTensor(const Tensor& t, Mesh mesh, PartitionSpec spec);
  ShardedTensor(Shape shape, DType dtype, Mesh mesh, PartitionSpec spec);

  Shape shape_;
  DType dtype_;
  Mesh mesh_;
  PartitionSpec spec_;
  Sharding sharding_;
  std::vector<ShardPlacement> placement_;
  std::vector<Tensor> shards_;
  int first_local_ = 0;
  bool cleared_ = false;
};

/**
 * Shards `t` over `mesh` by `spec` (see Sharding::from_spec) into buffers in t's
 * device HBM. The mesh may not have more devices than the sim::Device has NeuronCores
 * (`err_mesh_exceeds_cores`).
 */
ShardedTensor mark_sharding(const Tensor& t, const Mesh& mesh, const PartitionSpec& spec);
/** The same over the global mesh (set_global_mesh). */
ShardedTensor mark_sharding(const Tensor& t, const PartitionSpec& spec);
/**
 * Removes the sharding: returns the gathered tensor, frees the shard buffers and leaves
 * `t` with no annotation (sharding_spec() is ""). Clearing twice is an error
 * (`err_sharding_cleared`), as is reading the shards of a cleared tensor.
 */
Tensor clear_sharding(ShardedTensor& t);

}  // namespace nki
