/** \file The element type compiled code sees for a tensor's storage: one table for the lowering and the runner. */
#pragma once

#include <HalideRuntime.h>

#include "nki/dtype.h"

namespace nki {

/**
 * 16-bit and 8-bit floats are raw bits (our conversions are bit-exact on every CPU; Halide's
 * own float16 casts do not keep NaN on every path); bool is one byte.
 */
halide_type_t storage_halide_type(DType t);

}  // namespace nki
