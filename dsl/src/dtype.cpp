/** \file Element types: names, sizes, promotion and bit-exact conversions. */
#include "nki/dtype.h"

#include <bit>
#include <cstring>

namespace nki {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::fp32: return "fp32";
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  if (name == "fp32" || name == "float32") return DType::fp32;
  if (name == "bf16" || name == "bfloat16") return DType::bf16;
  if (name == "fp16" || name == "float16") return DType::fp16;
  return std::nullopt;
}

int dtype_bytes(DType t) { return t == DType::fp32 ? 4 : 2; }

DType promote(DType a, DType b) {
  if (a == b) return a;
  return DType::fp32;  // fp32 with anything, and (fp16, bf16), compute and stay in fp32
}

std::uint16_t float_to_bf16_bits(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    // NaN: sign and top payload bits kept (a bf16 NaN converts back unchanged); when the
    // kept payload would be zero the quiet bit is set, so the result stays a NaN.
    const std::uint16_t top = static_cast<std::uint16_t>(bits >> 16);
    return (top & 0x7fu) == 0 ? static_cast<std::uint16_t>(top | 0x40u) : top;
  }
  const std::uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

float bf16_bits_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t float_to_fp16_bits(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) {  // NaN: sign and top payload bits kept; quiet bit only if they are zero
    const std::uint32_t payload = (abs >> 13) & 0x03ffu;
    return static_cast<std::uint16_t>(sign | 0x7c00u | (payload == 0 ? 0x0200u : payload));
  }
  if (abs >= 0x477ff000u) {  // rounds to >= 65520: overflows to infinity
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  }
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    // Scale into half-subnormal units with one rounding step: value / 2^-24.
    const float scaled = std::bit_cast<float>(abs) * 16777216.0f;  // exact (power of two)
    // Round half to even on an integer in [0, 1024].
    const float floor_v = static_cast<float>(static_cast<std::uint32_t>(scaled));
    const float frac = scaled - floor_v;
    std::uint32_t m = static_cast<std::uint32_t>(floor_v);
    if (frac > 0.5f || (frac == 0.5f && (m & 1u))) ++m;
    return static_cast<std::uint16_t>(sign | m);
  }
  // Normal: rebias exponent (127 -> 15) and round the 23-bit mantissa to 10 bits.
  std::uint32_t v = abs - (112u << 23);
  const std::uint32_t rounding = 0x0fffu + ((v >> 13) & 1u);
  v = (v + rounding) >> 13;
  return static_cast<std::uint16_t>(sign | v);
}

float fp16_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t man = h & 0x03ffu;
  if (exp == 0) {  // zero or subnormal: man * 2^-24, exact in fp32
    const float v = static_cast<float>(man) * 5.9604644775390625e-8f;
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) | sign);
  }
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (man << 13));
}

float round_to_dtype(float f, DType t) {
  switch (t) {
    case DType::fp32: return f;
    case DType::bf16: return bf16_bits_to_float(float_to_bf16_bits(f));
    case DType::fp16: return fp16_bits_to_float(float_to_fp16_bits(f));
  }
  return f;
}

void store_element(void* dst, DType t, float f) {
  switch (t) {
    case DType::fp32: std::memcpy(dst, &f, 4); return;
    case DType::bf16: {
      const std::uint16_t b = float_to_bf16_bits(f);
      std::memcpy(dst, &b, 2);
      return;
    }
    case DType::fp16: {
      const std::uint16_t b = float_to_fp16_bits(f);
      std::memcpy(dst, &b, 2);
      return;
    }
  }
}

float load_element(const void* src, DType t) {
  switch (t) {
    case DType::fp32: {
      float f;
      std::memcpy(&f, src, 4);
      return f;
    }
    case DType::bf16: {
      std::uint16_t b;
      std::memcpy(&b, src, 2);
      return bf16_bits_to_float(b);
    }
    case DType::fp16: {
      std::uint16_t b;
      std::memcpy(&b, src, 2);
      return fp16_bits_to_float(b);
    }
  }
  return 0.0f;
}

}  // namespace nki
