/** \file MX group scales, quantized codes and dequantized values (see mx_format.h). */
#include "nki/ir/mx_format.h"

#include <cmath>
#include <limits>

namespace nki::ir::mx {

int max_exponent(DType packed) {
  switch (packed) {
    case DType::fp8_e5m2_x4: return 15;
    case DType::fp4_e2m1fn_x4: return 2;
    default: return 8;  // fp8_e4m3fn_x4: 448 = 1.75 * 2^8
  }
}

std::uint8_t scale_code(float amax, DType packed) {
  if (!std::isfinite(amax)) return 0xff;
  if (amax == 0.0f) return 0;
  int e2 = 0;
  (void)std::frexp(amax, &e2);  // amax = m * 2^e2, m in [0.5, 1): floor(log2(amax)) = e2 - 1
  const int code = (e2 - 1) - (max_exponent(packed) - 1) + 127;
  return static_cast<std::uint8_t>(code < 0 ? 0 : code > 254 ? 254 : code);
}

std::uint32_t quantize_value(float v, std::uint8_t scale, DType packed) {
  // Dividing by a power of two is exact in double; the one rounding is to the element format
  // (through fp32, exact here: the quotient keeps v's few significant bits).
  const float q = scale == 0xff ? std::nanf("") : static_cast<float>(std::ldexp(static_cast<double>(v), 127 - scale));
  switch (packed) {
    case DType::fp8_e5m2_x4: return float_to_fp8_e5m2_bits(q);
    case DType::fp4_e2m1fn_x4: return float_to_fp4_e2m1_bits(q);
    default: return float_to_fp8_e4m3fn_bits(q);
  }
}

float dequantize(std::uint32_t word, int i, DType packed, std::uint8_t scale) {
  float v;
  switch (packed) {
    case DType::fp8_e5m2_x4: v = fp8_e5m2_bits_to_float(static_cast<std::uint8_t>(word >> (8 * i))); break;
    case DType::fp4_e2m1fn_x4: v = fp4_e2m1_bits_to_float(static_cast<std::uint8_t>((word >> (4 * i)) & 0xfu)); break;
    default: v = fp8_e4m3fn_bits_to_float(static_cast<std::uint8_t>(word >> (8 * i))); break;
  }
  if (scale == 0xff || std::isnan(v)) return std::numeric_limits<float>::quiet_NaN();
  return static_cast<float>(std::ldexp(static_cast<double>(v), scale - 127));  // one rounding, to fp32
}

std::uint8_t scale_code_of(double value, DType scale_dtype) {
  if (scale_dtype == DType::fp8_e8m0fnu) return float_to_fp8_e8m0fnu_bits(static_cast<float>(value));
  return static_cast<std::uint8_t>(value);
}

}  // namespace nki::ir::mx
