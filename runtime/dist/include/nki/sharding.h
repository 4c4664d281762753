/** \file nki::Sharding: XLA's HloSharding of a tensor over a mesh, and where each device's shard lies. */
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nki/mesh.h"
#include "nki/partition_spec.h"
#include "nki/shape.h"

namespace nki {

/** Which slice of a tensor one device holds. */
struct ShardPlacement {
  int device = 0;
  std::vector<std::int64_t> tile;                    ///< the shard's index along each tensor dimension
  std::vector<std::array<std::int64_t, 2>> slices;   ///< [start, stop) per dimension, in tensor coordinates; stop excludes padding
  std::vector<std::int64_t> padding;                 ///< zero elements after the data, per dimension
  int replica_id = 0;

  friend bool operator==(const ShardPlacement&, const ShardPlacement&) = default;
};

/**
 * How a tensor is laid over devices, as XLA's HloSharding: replicated, maximal (all on
 * one device) or tiled, with an optional last tile dimension of replicas
 * (`last_tile_dim_replicate`). A tiled sharding holds the tile assignment: tile counts
 * per tensor dimension (plus the replica count) and the device ids in row-major order.
 */
class Sharding {
 public:
  enum class Kind { replicated, maximal, tiled };

  /** Every device in `devices` holds the whole tensor. */
  static Sharding replicated(std::vector<int> devices);
  /** Only `device` holds the tensor. */
  static Sharding maximal(int device);
  /**
   * `tile_dims` tiles per tensor dimension, followed by the replica count when
   * `last_tile_dim_replicate`; `devices` in row-major order over tile_dims.
   */
  static Sharding tiled(Shape tile_dims, std::vector<int> devices, bool last_tile_dim_replicate);

  /**
   * The sharding torch_xla's mark_sharding(t, mesh, spec) gives (and JAX's NamedSharding):
   * dimension k gets the product of its axes' sizes as tile count; the device array is
   * the logical mesh transposed to (the spec's axes in order, then the unused axes in
   * mesh order), so unused axes become the replica dimension. A one-device mesh is
   * maximal; no tiling at all is replicated.
   */
  static Sharding from_spec(const Mesh& mesh, const PartitionSpec& spec, std::size_t rank);

  Kind kind() const { return kind_; }
  const Shape& tile_dims() const { return tile_dims_; }
  const std::vector<int>& devices() const { return devices_; }
  bool last_tile_dim_replicate() const { return last_tile_dim_replicate_; }

  /** HloSharding::ToString with the explicit device list: `{devices=[2,1,4]0,1,...,7 last_tile_dim_replicate}`. */
  std::string str() const;
  /** The compact iota form `{devices=[2,1,4]<=[8] last_tile_dim_replicate}`, or nullopt when the device order is not a transposed iota. */
  std::optional<std::string> iota_str() const;

  /** The padded shape of every shard of a tensor of `shape`: ceil(dim / tiles) per dimension. */
  Shape shard_shape(const Shape& shape) const;
  /**
   * Per device (ascending id): its tile, slices, padding and replica id. Shard k of a
   * dimension of size D over t tiles covers [k*c, min((k+1)*c, D)) with c = ceil(D / t),
   * clipped to D, so trailing shards may be entirely padding. The replica id is the index
   * along the replica dimension (0 without one); for a replicated tensor it is the device
   * id, as torch_xla numbers it.
   */
  std::vector<ShardPlacement> placement(const Shape& shape) const;

  friend bool operator==(const Sharding&, const Sharding&) = default;

 private:
  Kind kind_ = Kind::replicated;
  Shape tile_dims_;
  std::vector<int> devices_;
  bool last_tile_dim_replicate_ = false;
};

}  // namespace nki
