/** \file nki::Mesh: a named, N-dimensional arrangement of device ids (torch_xla's Mesh, Shardy's mesh). */
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nki/shape.h"

namespace nki {

/** Device ids laid out in an N-dimensional array (row-major); `Mesh::logical_mesh()`. */
struct DeviceArray {
  Shape shape;
  std::vector<int> ids;  ///< row-major
  /** The id at `coords` (one per dimension). */
  int at(const std::vector<std::int64_t>& coords) const;
};

/**
 * A device mesh as torch_xla users write it: `Mesh(device_ids, shape, axis_names)`.
 * Device ids are laid into the mesh in row-major order. Here a device id is a
 * NeuronCore of a `sim::Device` (core i holds the shard of device id i). Validation:
 * the id count equals the mesh size, ids are unique and in [0, size), every dimension
 * is at least 1, and axis names (if given) are unique and one per dimension. Invalid
 * meshes throw nki::UserError `err_invalid_mesh`.
 */
class Mesh {
 public:
  Mesh(std::vector<int> device_ids, Shape shape, std::vector<std::string> axis_names = {});
  /** The common case: ids 0..n-1 in order. */
  static Mesh iota(Shape shape, std::vector<std::string> axis_names = {});

  /** (axis name, size) in axis order; torch_xla's `mesh.shape()`. Unnamed axes have name "". */
  std::vector<std::pair<std::string, std::int64_t>> shape() const;
  /** The sizes alone, in axis order. */
  const Shape& mesh_shape() const { return shape_; }
  const std::vector<std::string>& axis_names() const { return names_; }
  const std::vector<int>& device_ids() const { return ids_; }
  /** The device ids reshaped to the mesh shape; torch_xla's `get_logical_mesh()`. */
  DeviceArray logical_mesh() const;
  int size() const { return static_cast<int>(ids_.size()); }
  int rank() const { return static_cast<int>(shape_.size()); }
  /** The index of the axis called `name`, or nullopt. */
  std::optional<int> axis_index(std::string_view name) const;
  /** How axis `i` is spelled in messages: 'x' when named, else its index. */
  std::string axis_label(int i) const;
  /** The coordinates (one per axis) of the mesh position holding `device`. */
  std::vector<std::int64_t> coordinates_of(int device) const;
  /** Shardy's spelling: `{"x"=2, "y"=4}`, plus `, device_ids=[...]` when the order is not 0..n-1. */
  std::string str() const;

  friend bool operator==(const Mesh&, const Mesh&) = default;

 private:
  std::vector<int> ids_;
  Shape shape_;
  std::vector<std::string> names_;
};

/** Sets the process-wide default mesh (torch_xla's `set_global_mesh`). */
void set_global_mesh(Mesh mesh);
/** The default mesh; throws nki::UserError `err_no_global_mesh` when none was set. */
Mesh global_mesh();
/** Whether a default mesh is set. */
bool has_global_mesh();

}  // namespace nki
