/** \file Copying an N-dimensional box between row-major buffers (shards, gathers, collectives). */
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nki/shape.h"

namespace nki {

/** A row-major buffer of `shape`, `elem_bytes` per element. */
struct BoxBuffer {
  std::byte* data;
  const Shape& shape;
};
struct ConstBoxBuffer {
  const std::byte* data;
  const Shape& shape;
};

/**
 * Copies the box of extent `box` starting at `src_start` in `src` to `dst_start` in
 * `dst` (all row-major, same rank). Rows along the last dimension move with memcpy.
 */
void copy_box(ConstBoxBuffer src, const std::vector<std::int64_t>& src_start, BoxBuffer dst,
              const std::vector<std::int64_t>& dst_start, const Shape& box, int elem_bytes);

}  // namespace nki
