/** \file Reductions of collectives, element by element, bit for bit the same in every backend. */
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nki/collectives.h"
#include "nki/dtype.h"

namespace nki {

/**
 * dst[dst_offset + i] = srcs[0][src_offset + i] op srcs[1][src_offset + i] op ... (left to
 * right, the group's order), accumulated in fp32 (integer dtypes: double) and rounded to
 * the dtype once; every NaN result is the canonical quiet NaN.
 */
void reduce_range(DType t, ReduceOp op, const std::vector<const std::byte*>& srcs, std::int64_t src_offset,
                  std::byte* dst, std::int64_t dst_offset, std::int64_t count);

}  // namespace nki
