/** \file Storage element types of compiled code. */
#include "storage_type.h"

#include <fmt/format.h>

#include "nki/error.h"

namespace nki {

halide_type_t storage_halide_type(DType t) {
  switch (t) {
    case DType::fp32:
    case DType::tf32: return {halide_type_float, 32, 1};
    case DType::bf16:
    case DType::fp16:
    case DType::uint16:
    case DType::fp4_e2m1fn_x4: return {halide_type_uint, 16, 1};
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
    case DType::fp8_e4m3fn:
    case DType::fp8_e8m0fnu:
    case DType::uint8:
    case DType::boolean: return {halide_type_uint, 8, 1};
    case DType::int8: return {halide_type_int, 8, 1};
    case DType::int16: return {halide_type_int, 16, 1};
    case DType::int32: return {halide_type_int, 32, 1};
    case DType::uint32:
    case DType::fp8_e5m2_x4:
    case DType::fp8_e4m3fn_x4: return {halide_type_uint, 32, 1};
  }
  throw InternalError(fmt::format("no storage type for dtype {}", static_cast<int>(t)));
}

}  // namespace nki
