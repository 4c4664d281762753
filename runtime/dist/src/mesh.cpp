/** \file Device meshes: validation, logical layout, the process-wide default mesh. */
#include "nki/mesh.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <numeric>

#include "nki/error.h"

namespace nki {

namespace {

[[noreturn]] void invalid(std::string detail) { throw UserError("err_invalid_mesh", "", {}, std::move(detail)); }

}  // namespace

int DeviceArray::at(const std::vector<std::int64_t>& coords) const {
  std::int64_t flat = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + coords[d];
  return ids[static_cast<std::size_t>(flat)];
}

Mesh::Mesh(std::vector<int> device_ids, Shape shape, std::vector<std::string> axis_names)
    : ids_(std::move(device_ids)), shape_(std::move(shape)), names_(std::move(axis_names)) {
  if (shape_.empty()) invalid("a mesh needs at least one dimension; the shape is []");
  std::int64_t size = 1;
  for (std::int64_t d : shape_) {
    if (d < 1) invalid(fmt::format("mesh shape {} has a dimension of size {}; sizes must be at least 1", shape_str(shape_), d));
    size *= d;
    if (size > (std::int64_t{1} << 20)) invalid(fmt::format("mesh shape {} has more than 2^20 devices", shape_str(shape_)));
  }
  if (static_cast<std::int64_t>(ids_.size()) != size) {
    invalid(fmt::format("{} device ids for a mesh of shape {} ({} devices)", ids_.size(), shape_str(shape_), size));
  }
  std::vector<int> sorted = ids_;
  std::sort(sorted.begin(), sorted.end());
  for (int id : ids_) {
    if (id < 0 || id >= size) {
      invalid(fmt::format("device id {} is out of range for a mesh of {} devices (ids 0 to {})", id, size, size - 1));
    }
  }
  if (auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end()) {
    invalid(fmt::format("device id {} appears twice in [{}]", *dup, fmt::join(ids_, ",")));
  }
  if (!names_.empty()) {
    if (names_.size() != shape_.size()) {
      invalid(fmt::format("{} axis names for a mesh of rank {} (shape {}); give one name per dimension", names_.size(),
                          shape_.size(), shape_str(shape_)));
    }
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (names_[i].empty()) invalid(fmt::format("axis {} has an empty name", i));
      for (std::size_t j = 0; j < i; ++j) {
        if (names_[i] == names_[j]) invalid(fmt::format("axis name '{}' is used for axes {} and {}", names_[i], j, i));
      }
    }
  }
}

Mesh Mesh::iota(Shape shape, std::vector<std::string> axis_names) {
  std::int64_t size = 1;
  for (std::int64_t d : shape) size *= std::max<std::int64_t>(d, 0);
  std::vector<int> ids(static_cast<std::size_t>(std::min<std::int64_t>(size, std::int64_t{1} << 21)));
  std::iota(ids.begin(), ids.end(), 0);
  return Mesh(std::move(ids), std::move(shape), std::move(axis_names));
}

std::vector<std::pair<std::string, std::int64_t>> Mesh::shape() const {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (std::size_t i = 0; i < shape_.size(); ++i) out.emplace_back(names_.empty() ? "" : names_[i], shape_[i]);
  return out;
}

DeviceArray Mesh::logical_mesh() const { return DeviceArray{shape_, ids_}; }

std::optional<int> Mesh::axis_index(std::string_view name) const {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return static_cast<int>(i);
  return std::nullopt;
}

std::string Mesh::axis_label(int i) const {
  return names_.empty() ? std::to_string(i) : fmt::format("'{}'", names_[static_cast<std::size_t>(i)]);
}

std::vector<std::int64_t> Mesh::coordinates_of(int device) const {
  const auto it = std::find(ids_.begin(), ids_.end(), device);
  if (it == ids_.end()) {
    throw UserError("err_invalid_mesh", "", {}, fmt::format("device {} is not in the mesh {}", device, str()));
  }
  std::int64_t flat = it - ids_.begin();
  std::vector<std::int64_t> coords(shape_.size());
  for (std::size_t d = shape_.size(); d-- > 0;) {
    coords[d] = flat % shape_[d];
    flat /= shape_[d];
  }
  return coords;
}

std::string Mesh::str() const {
  std::vector<std::string> axes;
  for (std::size_t i = 0; i < shape_.size(); ++i)
    axes.push_back(fmt::format("\"{}\"={}", names_.empty() ? std::to_string(i) : names_[i], shape_[i]));
  std::string s = fmt::format("{{{}", fmt::join(axes, ", "));
  bool in_order = true;
  for (std::size_t i = 0; i < ids_.size(); ++i) in_order = in_order && ids_[i] == static_cast<int>(i);
  if (!in_order) s += fmt::format(", device_ids=[{}]", fmt::join(ids_, ","));
  return s + "}";
}

namespace {
std::mutex global_mu;
std::optional<Mesh>& global_slot() {
  static std::optional<Mesh> mesh;
  return mesh;
}
}  // namespace

void set_global_mesh(Mesh mesh) {
  std::lock_guard lock(global_mu);
  global_slot() = std::move(mesh);
}

Mesh global_mesh() {
  std::lock_guard lock(global_mu);
  if (!global_slot()) {
    throw UserError("err_no_global_mesh", "", {}, "no global mesh is set; call nki::set_global_mesh(mesh) first");
  }
  return *global_slot();
}

bool has_global_mesh() {
  std::lock_guard lock(global_mu);
  return global_slot().has_value();
}

}  // namespace nki
