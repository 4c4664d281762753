/** \file XLA's compact "iota" spelling of a device array: `[2,4]<=[8]`, `[4,2]<=[2,4]T(1,0)`. */
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nki/shape.h"

namespace nki {

/**
 * An array of device ids written as XLA writes an IotaTileAssignment: the ids are
 * iota(N) reshaped to `reshape_dims`, transposed by `perm`, and reshaped to the array's
 * own dims. The form is canonical as XLA makes it: no size-1 reshape dims, and reshape
 * dims that stay adjacent under the transpose merged (so an identity perm is `<=[N]`).
 */
struct IotaForm {
  Shape reshape_dims;
  std::vector<int> perm;  ///< empty when the identity
  /** `<=[2,4]T(1,0)` or `<=[8]`: what follows the array's dims. */
  std::string str() const;
};

/**
 * The iota form of `ids` (row-major), or nullopt when the ids are not a transposed iota
 * (for example a reversed device order): then only the explicit list describes them.
 */
std::optional<IotaForm> iota_form(std::span<const int> ids);

/** `[2,4]<=[8]`: `dims` followed by the iota form of `ids`, or nullopt as above. */
std::optional<std::string> iota_str(const Shape& dims, std::span<const int> ids);

}  // namespace nki
