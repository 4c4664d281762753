/** \file Tensor and tile shapes (row-major, dimension 0 first). */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nki {

using Shape = std::vector<std::int64_t>;

/** "[512,2048]": the spelling used in the IR, in messages and in JSON. */
std::string shape_str(const Shape& s);
/** Number of elements (1 for rank 0); throws nki::UserError (err_invalid_shape) if it overflows. */
std::int64_t shape_elements(const Shape& s);
/** Row-major (C order) strides in elements, dimension 0 first. */
std::vector<std::int64_t> row_major_strides(const Shape& s);
/** The coordinates of row-major element `flat` of `shape` (messages name elements this way). */
std::vector<std::int64_t> coord_of_flat(const Shape& shape, std::int64_t flat);
/**
 * Steps `coord` to the next coordinate of `shape` in row-major order (the last dimension fastest);
 * false, with `coord` back at all zeros, after the last. Rank 0 has one coordinate.
 */
bool next_coord(std::vector<std::int64_t>& coord, const Shape& shape);

}  // namespace nki
