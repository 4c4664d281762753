/** \file Replica groups of a collective over mesh axes, as OpenXLA Shardy computes them. */
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nki/mesh.h"

namespace nki {

/** Groups of device ids; each device of a collective is in exactly one. */
using GroupList = std::vector<std::vector<int>>;

/**
 * A mesh axis or a sub-axis of it, as Shardy writes it: `"y"` (the whole axis) or
 * `"y":(m)k`, the part of axis y of size k whose more-major part has size m (its
 * pre-size). Axis y of size n splits, major to minor, into [m, k, n/(m*k)].
 */
struct AxisRef {
  std::string name;
  std::int64_t pre_size = 1;
  std::int64_t size = 0;  ///< 0: the whole axis

  /** Parses `y`, `"y"`, `y:(1)2` or `"y":(1)2`; throws nki::UserError `err_invalid_axis_ref`. */
  static AxisRef parse(std::string_view text);
  bool is_sub_axis() const { return size != 0; }
  /** `"y"` or `"y":(1)2`. */
  std::string str() const;

  friend bool operator==(const AxisRef&, const AxisRef&) = default;
};

/** The groups of a collective over some mesh axes, explicit and (when it exists) in iota form. */
struct ReplicaGroups {
  GroupList groups;
  std::optional<std::string> iota;  ///< `[2,4]<=[8]`; nullopt when the mesh's device order is not a transposed iota

  /** `[[0,1,2,3],[4,5,6,7]]`. */
  std::string str() const;
};

/**
 * The replica groups of a collective over `axes` of `mesh`, as Shardy computes them:
 * the mesh is split into the referenced (sub-)axes, the non-reduction parts are ordered
 * first (mesh order, major to minor) and the reduction axes after them in the order
 * given, and every combination of non-reduction indices is one group, its devices in
 * the order of the reduction indices. Mesh positions map to the mesh's device ids.
 * Errors (nki::UserError): an unknown axis (`err_unknown_mesh_axis`), an axis or
 * overlapping sub-axes used twice (`err_mesh_axis_used_twice`), a sub-axis that does
 * not fit its axis (`err_invalid_axis_ref`).
 */
ReplicaGroups replica_groups(const Mesh& mesh, const std::vector<AxisRef>& axes);

}  // namespace nki
