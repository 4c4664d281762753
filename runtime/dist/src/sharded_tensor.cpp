/** \file Shard buffers in simulated HBM: splitting a tensor by its sharding and gathering it back. */
#include "nki/sharded_tensor.h"

#include <fmt/format.h>

#include <cstring>

#include "core/box_copy.h"
#include "nki/error.h"

namespace nki {

namespace {
[[noreturn]] void cleared_error() {
  throw UserError("err_sharding_cleared", "", {}, "the tensor's sharding was cleared; its shards are gone");
}

/** The start and extent of a placement's data, per dimension. */
std::vector<std::int64_t> starts_of(const ShardPlacement& p) {
  std::vector<std::int64_t> s;
  for (const auto& sl : p.slices) s.push_back(sl[0]);
  return s;
}
Shape extent_of(const ShardPlacement& p) {
  Shape e;
  for (const auto& sl : p.slices) e.push_back(sl[1] - sl[0]);
  return e;
}
}  // namespace

ShardedTensor::ShardedTensor(const Tensor& t, Mesh mesh, PartitionSpec spec)
    : shape_(t.shape()),
      dtype_(t.dtype()),
      mesh_(std::move(mesh)),
      spec_(std::move(spec)),
      sharding_(Sharding::from_spec(mesh_, spec_, t.shape().size())) {
  const sim::Device& device = t.device();
  if (mesh_.size() > device.cores()) {
    throw UserError("err_mesh_exceeds_cores", "", {},
                    fmt::format("mesh {} has {} devices but the tensor's device has {} NeuronCores; make a device "
                                "with enough cores, e.g. sim::Device(\"{}\", {})",
                                mesh_.str(), mesh_.size(), device.cores(), device.spec().name, mesh_.size()));
  }
  placement_ = sharding_.placement(shape_);
  const Shape shard_shape = sharding_.shard_shape(shape_);
  const int eb = dtype_bytes(dtype_);
  // The placement lists every mesh device once, by ascending id: the shards' order.
  shards_.reserve(placement_.size());
  for (const ShardPlacement& p : placement_) {
    Tensor buf(shard_shape, dtype_, device);
    std::memset(buf.data(), 0, static_cast<std::size_t>(buf.bytes()));
    copy_box({t.data(), shape_}, starts_of(p), {buf.data(), shard_shape}, std::vector<std::int64_t>(shape_.size(), 0),
             extent_of(p), eb);
    shards_.push_back(std::move(buf));
  }
}

const Tensor& ShardedTensor::shard(int device) const {
  if (cleared_) cleared_error();
  if (device < 0 || device >= mesh_.size()) {
    throw UserError("err_invalid_mesh", "", {},
                    fmt::format("device {} is not in the mesh {} (ids 0 to {})", device, mesh_.str(), mesh_.size() - 1));
  }
  return shards_[static_cast<std::size_t>(device)];
}

Tensor ShardedTensor::gather() const {
  if (cleared_) cleared_error();
  Tensor out(shape_, dtype_, shards_.front().device());
  const Shape shard_shape = sharding_.shard_shape(shape_);
  for (const ShardPlacement& p : placement_) {
    if (p.replica_id != 0) continue;
    copy_box({shards_[static_cast<std::size_t>(p.device)].data(), shard_shape},
             std::vector<std::int64_t>(shape_.size(), 0), {out.data(), shape_}, starts_of(p), extent_of(p),
             dtype_bytes(dtype_));
  }
  return out;
}

ShardedTensor mark_sharding(const Tensor& t, const Mesh& mesh, const PartitionSpec& spec) {
  return ShardedTensor(t, mesh, spec);
}

ShardedTensor mark_sharding(const Tensor& t, const PartitionSpec& spec) { return mark_sharding(t, global_mesh(), spec); }

Tensor clear_sharding(ShardedTensor& t) {
  Tensor whole = t.gather();
  t.shards_.clear();
  t.cleared_ = true;
  return whole;
}

}  // namespace nki
