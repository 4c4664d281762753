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

ShardedTensor::ShardedTensor(Shape shape, DType dtype, Mesh mesh, PartitionSpec spec)
    : shape_(std::move(shape)),
      dtype_(dtype),
      mesh_(std::move(mesh)),
      spec_(std::move(spec)),
      sharding_(Sharding::from_spec(mesh_, spec_, shape_.size())),
      placement_(sharding_.placement(shape_)) {}

ShardedTensor ShardedTensor::from_local_shards(Shape shape, DType dtype, Mesh mesh, PartitionSpec spec,
                                               int first_device, std::vector<Tensor> shards) {
  ShardedTensor t(std::move(shape), dtype, std::move(mesh), std::move(spec));
  auto fail = [](std::string detail) { throw UserError("err_invalid_shards", "", {}, std::move(detail)); };
  const int n = static_cast<int>(shards.size());
  if (n == 0 || first_device < 0 || first_device + n > t.mesh_.size()) {
    fail(fmt::format("{} shards from device {} were given for the mesh {} of {} devices; give one per device of a "
                     "consecutive run inside the mesh",
                     n, first_device, t.mesh_.str(), t.mesh_.size()));
  }
  const Shape want = t.sharding_.shard_shape(t.shape_);
  for (int i = 0; i < n; ++i) {
    const Tensor& s = shards[static_cast<std::size_t>(i)];
    if (s.shape() != want || s.dtype() != dtype) {
      fail(fmt::format("the shard of device {} is {} {}; a shard of {} {} sharded {} over {} is {} {}", first_device + i,
                       dtype_name(s.dtype()), shape_str(s.shape()), dtype_name(dtype), shape_str(t.shape_),
                       t.spec_.str(), t.mesh_.str(), dtype_name(dtype), shape_str(want)));
    }
    if (!s.device().same_as(shards.front().device()))
      fail(fmt::format("the shard of device {} lives on another sim::Device than device {}'s", first_device + i, first_device));
  }
  if (shards.front().device().cores() < n) {
    fail(fmt::format("{} shards live on a device of {} NeuronCores; each local device is a NeuronCore", n,
                     shards.front().device().cores()));
  }
  t.first_local_ = first_device;
  t.shards_ = std::move(shards);
  return t;
}

const Tensor& ShardedTensor::shard(int device) const {
  if (cleared_) cleared_error();
  if (device < 0 || device >= mesh_.size()) {
    throw UserError("err_invalid_mesh", "", {},
                    fmt::format("device {} is not in the mesh {} (ids 0 to {})", device, mesh_.str(), mesh_.size() - 1));
  }
  if (!holds(device)) {
    throw UserError("err_shard_not_local", "", {},
                    fmt::format("the shard of device {} is held by another process (this one holds devices {} to {})",
                                device, first_local_, first_local_ + local_devices() - 1));
  }
  return shards_[static_cast<std::size_t>(device - first_local_)];
}

Tensor ShardedTensor::gather() const {
  if (cleared_) cleared_error();
  if (local_devices() != mesh_.size()) (void)shard(first_local_ == 0 ? local_devices() : 0);  // names a missing shard
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
