/** \file HloSharding from a mesh and a partition spec, its two spellings, and shard placement. */
#include "nki/sharding.h"

#include <fmt/format.h>

#include <algorithm>

#include "nki/error.h"
#include "nki/iota_tile_assignment.h"

namespace nki {

Sharding Sharding::replicated(std::vector<int> devices) {
  Sharding s;
  s.kind_ = Kind::replicated;
  s.devices_ = std::move(devices);
  return s;
}

Sharding Sharding::maximal(int device) {
  Sharding s;
  s.kind_ = Kind::maximal;
  s.devices_ = {device};
  return s;
}

Sharding Sharding::tiled(Shape tile_dims, std::vector<int> devices, bool last_tile_dim_replicate) {
  std::int64_t n = 1;
  for (std::int64_t d : tile_dims) n *= d;
  if (n != static_cast<std::int64_t>(devices.size()) || (last_tile_dim_replicate && tile_dims.empty())) {
    throw InternalError(fmt::format("tile assignment {} does not hold {} devices", shape_str(tile_dims), devices.size()));
  }
  Sharding s;
  s.kind_ = Kind::tiled;
  s.tile_dims_ = std::move(tile_dims);
  s.devices_ = std::move(devices);
  s.last_tile_dim_replicate_ = last_tile_dim_replicate;
  return s;
}

Sharding Sharding::from_spec(const Mesh& mesh, const PartitionSpec& spec, std::size_t rank) {
  const std::vector<std::vector<int>> axes = spec.resolve(mesh, rank);
  if (mesh.size() == 1) return maximal(mesh.device_ids()[0]);

  const Shape& ms = mesh.mesh_shape();
  std::vector<int> perm;  // mesh axes in the order of the device array's dimensions
  Shape tiles;
  for (const std::vector<int>& entry : axes) {
    std::int64_t t = 1;
    for (int a : entry) {
      perm.push_back(a);
      t *= ms[static_cast<std::size_t>(a)];
    }
    tiles.push_back(t);
  }
  std::int64_t replicas = 1;
  for (int a = 0; a < mesh.rank(); ++a) {
    if (std::find(perm.begin(), perm.end(), a) == perm.end()) {
      perm.push_back(a);
      replicas *= ms[static_cast<std::size_t>(a)];
    }
  }
  if (replicas == mesh.size()) return replicated(mesh.device_ids());

  // The logical mesh transposed by perm, in row-major order.
  const std::vector<std::int64_t> mesh_strides = row_major_strides(ms);
  Shape perm_shape;
  for (int a : perm) perm_shape.push_back(ms[static_cast<std::size_t>(a)]);
  std::vector<int> devices;
  devices.reserve(static_cast<std::size_t>(mesh.size()));
  std::vector<std::int64_t> idx(perm.size(), 0);
  for (int i = 0; i < mesh.size(); ++i) {
    std::int64_t flat = 0;
    for (std::size_t k = 0; k < perm.size(); ++k) flat += idx[k] * mesh_strides[static_cast<std::size_t>(perm[k])];
    devices.push_back(mesh.device_ids()[static_cast<std::size_t>(flat)]);
    for (std::size_t k = perm.size(); k-- > 0;) {
      if (++idx[k] < perm_shape[k]) break;
      idx[k] = 0;
    }
  }
  const bool partial = replicas > 1;
  if (partial) tiles.push_back(replicas);
  return tiled(std::move(tiles), std::move(devices), partial);
}

std::string Sharding::str() const {
  switch (kind_) {
    case Kind::replicated: return "{replicated}";
    case Kind::maximal: return fmt::format("{{maximal device={}}}", devices_[0]);
    case Kind::tiled: break;
  }
  return fmt::format("{{devices=[{}]{}{}}}", fmt::join(tile_dims_, ","), fmt::join(devices_, ","),
                     last_tile_dim_replicate_ ? " last_tile_dim_replicate" : "");
}

std::optional<std::string> Sharding::iota_str() const {
  if (kind_ != Kind::tiled) return str();
  const std::optional<std::string> iota = nki::iota_str(tile_dims_, devices_);
  if (!iota) return std::nullopt;
  return fmt::format("{{devices={}{}}}", *iota, last_tile_dim_replicate_ ? " last_tile_dim_replicate" : "");
}

namespace {
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
}  // namespace

Shape Sharding::shard_shape(const Shape& shape) const {
  if (kind_ != Kind::tiled) return shape;
  const std::size_t rank = tile_dims_.size() - (last_tile_dim_replicate_ ? 1 : 0);
  if (rank != shape.size()) {
    throw UserError("err_partition_spec_rank_mismatch", "", {},
                    fmt::format("sharding {} tiles {} dimensions; the tensor shape {} has {}", str(), rank,
                                shape_str(shape), shape.size()));
  }
  Shape out;
  for (std::size_t k = 0; k < rank; ++k) out.push_back(ceil_div(shape[k], tile_dims_[k]));
  return out;
}

std::vector<ShardPlacement> Sharding::placement(const Shape& shape) const {
  const Shape shard = shard_shape(shape);
  std::vector<ShardPlacement> out;
  if (kind_ != Kind::tiled) {
    for (int d : devices_) {
      ShardPlacement p;
      p.device = d;
      p.tile.assign(shape.size(), 0);
      for (std::int64_t n : shape) p.slices.push_back({0, n});
      p.padding.assign(shape.size(), 0);
      p.replica_id = kind_ == Kind::replicated ? d : 0;
      out.push_back(std::move(p));
    }
  } else {
    std::vector<std::int64_t> idx(tile_dims_.size(), 0);
    for (int d : devices_) {
      ShardPlacement p;
      p.device = d;
      for (std::size_t k = 0; k < shape.size(); ++k) {
        const std::int64_t start = std::min(idx[k] * shard[k], shape[k]);
        const std::int64_t stop = std::min(start + shard[k], shape[k]);
        p.tile.push_back(idx[k]);
        p.slices.push_back({start, stop});
        p.padding.push_back(shard[k] - (stop - start));
      }
      p.replica_id = last_tile_dim_replicate_ ? static_cast<int>(idx.back()) : 0;
      out.push_back(std::move(p));
      for (std::size_t k = idx.size(); k-- > 0;) {
        if (++idx[k] < tile_dims_[k]) break;
        idx[k] = 0;
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const ShardPlacement& a, const ShardPlacement& b) { return a.device < b.device; });
  return out;
}

}  // namespace nki
