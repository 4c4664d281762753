/** \file Element types: names, sizes, promotion and bit-exact conversions. */
#include "nki/dtype.h"
#include "nki/dtype_arrays.h"

#include <fmt/format.h>

#include "nki/error.h"

#include <bit>
#include <cmath>
#include <algorithm>
#include <cstring>
#include <utility>

namespace nki {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::fp32: return "fp32";
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
    case DType::fp8_e4m3: return "fp8_e4m3";
    case DType::fp8_e5m2: return "fp8_e5m2";
    case DType::int8: return "int8";
    case DType::int16: return "int16";
    case DType::int32: return "int32";
    case DType::uint8: return "uint8";
    case DType::uint16: return "uint16";
    case DType::uint32: return "uint32";
    case DType::boolean: return "bool";
    case DType::tf32: return "tf32";
    case DType::fp8_e4m3fn: return "fp8_e4m3fn";
    case DType::fp8_e8m0fnu: return "fp8_e8m0fnu";
    case DType::fp8_e5m2_x4: return "fp8_e5m2_x4";
    case DType::fp8_e4m3fn_x4: return "fp8_e4m3fn_x4";
    case DType::fp4_e2m1fn_x4: return "fp4_e2m1fn_x4";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType t : all_dtypes)
    if (name == dtype_name(t)) return t;
  // NKI's own names where they differ from the short ones.
  static constexpr std::pair<std::string_view, DType> nki_names[] = {
      {"float32", DType::fp32},
      {"bfloat16", DType::bf16},
      {"float16", DType::fp16},
      {"float8_e4m3", DType::fp8_e4m3},
      {"float8_e5m2", DType::fp8_e5m2},
      {"bool_", DType::boolean},
      {"tfloat32", DType::tf32},
      {"float8_e4m3fn", DType::fp8_e4m3fn},
      {"float8_e8m0fnu", DType::fp8_e8m0fnu},
      {"float8_e5m2_x4", DType::fp8_e5m2_x4},
      {"float8_e4m3fn_x4", DType::fp8_e4m3fn_x4},
      {"float4_e2m1fn_x4", DType::fp4_e2m1fn_x4},
  };
  for (const auto& [nki_name, t] : nki_names)
    if (name == nki_name) return t;
  return std::nullopt;
}

int dtype_bytes(DType t) {
  switch (t) {
    case DType::fp32:
    case DType::tf32:
    case DType::int32:
    case DType::uint32:
    case DType::fp8_e5m2_x4:
    case DType::fp8_e4m3fn_x4: return 4;
    case DType::bf16:
    case DType::fp16:
    case DType::fp4_e2m1fn_x4:
    case DType::int16:
    case DType::uint16: return 2;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
    case DType::fp8_e4m3fn:
    case DType::fp8_e8m0fnu:
    case DType::int8:
    case DType::uint8:
    case DType::boolean: return 1;
  }
  return 4;
}

bool is_float(DType t) {
  return t == DType::fp32 || t == DType::bf16 || t == DType::fp16 || t == DType::fp8_e4m3 || t == DType::fp8_e5m2 ||
         t == DType::tf32 || t == DType::fp8_e4m3fn || t == DType::fp8_e8m0fnu;
}

bool is_packed_x4(DType t) {
  return t == DType::fp8_e5m2_x4 || t == DType::fp8_e4m3fn_x4 || t == DType::fp4_e2m1fn_x4;
}

std::optional<DType> packed_element(DType t) {
  if (t == DType::fp8_e5m2_x4) return DType::fp8_e5m2;
  if (t == DType::fp8_e4m3fn_x4) return DType::fp8_e4m3fn;
  return std::nullopt;
}

bool is_integer(DType t) { return !is_float(t); }

bool is_signed_integer(DType t) { return t == DType::int8 || t == DType::int16 || t == DType::int32; }

namespace {

/// Bits of an integer dtype (bool counts as 1).
int integer_bits(DType t) { return t == DType::boolean ? 1 : 8 * dtype_bytes(t); }

DType signed_of_bits(int bits) {
  return bits <= 8 ? DType::int8 : bits <= 16 ? DType::int16 : DType::int32;
}

/// The rank of a float type by its width (tf32 is stored in 32 bits); fp8s share the lowest rank.
int float_rank(DType t) {
  return (t == DType::fp32 || t == DType::tf32) ? 2 : (t == DType::bf16 || t == DType::fp16) ? 1 : 0;
}

}  // namespace

DType promote(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::boolean) return b;  // bool gives way to anything
  if (b == DType::boolean) return a;
  const bool fa = is_float(a), fb = is_float(b);
  if (fa && !fb) return a;  // float with integer: the float, whatever its width
  if (fb && !fa) return b;
  if (fa && fb) {
    const int ra = float_rank(a), rb = float_rank(b);
    if (ra != rb) return ra > rb ? a : b;
    // Same width, different formats: (fp16, bf16) and (tf32, fp32) -> fp32; two fp8s -> bf16.
    return ra >= 1 ? DType::fp32 : DType::bf16;
  }
  // Two integers (NumPy): same signedness takes the wider; mixed takes the smallest signed
  // type holding both, which for uint32 would be int64, absent here, so fp32.
  const bool sa = is_signed_integer(a), sb = is_signed_integer(b);
  const int ba = integer_bits(a), bb = integer_bits(b);
  if (sa == sb) return ba >= bb ? a : b;
  const int s_bits = sa ? ba : bb, u_bits = sa ? bb : ba;
  if (u_bits >= 32) return DType::fp32;
  return signed_of_bits(s_bits > u_bits ? s_bits : 2 * u_bits);
}

DType promote_scalar(DType t, bool scalar_is_float) {
  if (scalar_is_float) return is_float(t) ? t : DType::fp32;
  return t == DType::boolean ? DType::int32 : t;
}

namespace {

// The 16-bit conversions, inline here so the whole-array loops below inline them too.
inline std::uint16_t bf16_of(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  // Both results computed, one selected: no branch, so the array loops vectorize.
  // NaN: sign and top payload bits kept (a bf16 NaN converts back unchanged); when the kept
  // payload would be zero the quiet bit is set, so the result stays a NaN.
  const std::uint32_t top = bits >> 16;
  const std::uint32_t nan = (top & 0x7fu) == 0 ? (top | 0x40u) : top;
  const std::uint32_t rounded = (bits + 0x7fffu + (top & 1u)) >> 16;
  return static_cast<std::uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

inline float float_of_bf16(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

inline std::uint16_t fp16_of(float f) {
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

inline float float_of_fp16(std::uint16_t h) {
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

}  // namespace

std::uint16_t float_to_bf16_bits(float f) { return bf16_of(f); }
float bf16_bits_to_float(std::uint16_t bits) { return float_of_bf16(bits); }
std::uint16_t float_to_fp16_bits(float f) { return fp16_of(f); }
float fp16_bits_to_float(std::uint16_t h) { return float_of_fp16(h); }

void floats_to_bits16(std::span<const float> in, DType t, std::uint16_t* out) {
  if (t == DType::bf16) {
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = bf16_of(in[i]);
  } else if (t == DType::fp16) {
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = fp16_of(in[i]);
  } else {
    throw InternalError(fmt::format("floats_to_bits16: {} is not a 16-bit float dtype", dtype_name(t)));
  }
}

void bits16_to_floats(const std::uint16_t* in, DType t, std::span<float> out) {
  if (t == DType::bf16) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = float_of_bf16(in[i]);
  } else if (t == DType::fp16) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = float_of_fp16(in[i]);
  } else {
    throw InternalError(fmt::format("bits16_to_floats: {} is not a 16-bit float dtype", dtype_name(t)));
  }
}

namespace {

/**
 * fp32 -> an IEEE-style 8-bit float with one sign bit, E exponent bits (bias 2^(E-1) - 1,
 * all-ones exponent for inf and NaN) and M = 7 - E mantissa bits. Round to nearest even
 * on the integer bit pattern, which also carries into the exponent and into infinity.
 */
template <int E>
std::uint8_t float_to_fp8_bits(float f) {
  constexpr int M = 7 - E;
  constexpr int bias = (1 << (E - 1)) - 1;
  constexpr std::uint32_t exp_all = (1u << E) - 1;
  constexpr std::uint32_t inf_bits = exp_all << M;
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (bits >> 24) & 0x80u;
  const std::uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) {  // NaN: sign and top payload bits kept; quiet bit only if they are zero
    const std::uint32_t payload = (abs >> (23 - M)) & ((1u << M) - 1);
    return static_cast<std::uint8_t>(sign | inf_bits | (payload == 0 ? 1u << (M - 1) : payload));
  }
  if (abs == 0x7f800000u) return static_cast<std::uint8_t>(sign | inf_bits);
  const int e = static_cast<int>(abs >> 23) - 127;  // unbiased fp32 exponent (-127 for fp32 subnormals)
  std::uint32_t r;
  if (e + bias >= 1) {
    // Normal in the target (or overflowing): rebias and round the 23-bit mantissa to M bits.
    if (e + bias >= static_cast<int>(exp_all)) return static_cast<std::uint8_t>(sign | inf_bits);
    const std::uint32_t v = (static_cast<std::uint32_t>(e + bias) << 23) | (abs & 0x7fffffu);
    constexpr int shift = 23 - M;
    const std::uint32_t rounding = ((1u << (shift - 1)) - 1) + ((v >> shift) & 1u);
    r = (v + rounding) >> shift;  // a carry past the largest finite value gives infinity
  } else {
    // Target subnormal or zero: units of 2^(1 - bias - M). The fp32 significand (implicit
    // one included) is shifted right with round to nearest even.
    const std::uint32_t sig = (abs >> 23) != 0 ? (abs & 0x7fffffu) | 0x800000u : (abs & 0x7fffffu);
    const int exp_f = (abs >> 23) != 0 ? e : -126;  // value = sig * 2^(exp_f - 23)
    const int shift = (1 - bias - M) - (exp_f - 23);  // at least 21 (e4m3) or 23 (e5m2) here
    if (shift >= 32) {
      r = 0;
    } else {
      const std::uint32_t q = sig >> shift;
      const std::uint32_t rem = sig & ((1u << shift) - 1);
      const std::uint32_t half = 1u << (shift - 1);
      r = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);  // may carry into the smallest normal
    }
  }
  return static_cast<std::uint8_t>(sign | r);
}

template <int E>
float fp8_bits_to_float(std::uint8_t b) {
  constexpr int M = 7 - E;
  constexpr int bias = (1 << (E - 1)) - 1;
  constexpr std::uint32_t exp_all = (1u << E) - 1;
  const std::uint32_t sign = static_cast<std::uint32_t>(b & 0x80u) << 24;
  const std::uint32_t exp = (b >> M) & exp_all;
  const std::uint32_t man = b & ((1u << M) - 1);
  if (exp == 0) {  // zero or subnormal: man * 2^(1 - bias - M), exact in fp32
    const float v = std::ldexp(static_cast<float>(man), 1 - bias - M);
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) | sign);
  }
  if (exp == exp_all) return std::bit_cast<float>(sign | 0x7f800000u | (man << (23 - M)));
  return std::bit_cast<float>(sign | ((exp + 127u - bias) << 23) | (man << (23 - M)));
}

/// float -> double, NaN bits moved as they are (a hardware widening would set the quiet bit).
double widen(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7fffffffu) <= 0x7f800000u) return static_cast<double>(f);
  const std::uint64_t sign = static_cast<std::uint64_t>(bits & 0x80000000u) << 32;
  const std::uint64_t payload = static_cast<std::uint64_t>(bits & 0x7fffffu) << 29;
  return std::bit_cast<double>(sign | 0x7ff0000000000000ull | payload);
}

/// double -> fp32 (round to nearest even); a NaN keeps its sign and top payload bits, with the
/// quiet bit set if they are zero, so widen() followed by narrow() is the identity.
float narrow(double v) {
  if (!std::isnan(v)) return static_cast<float>(v);
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(v);
  const std::uint32_t sign = static_cast<std::uint32_t>(bits >> 32) & 0x80000000u;
  std::uint32_t payload = static_cast<std::uint32_t>(bits >> 29) & 0x7fffffu;
  if (payload == 0) payload = 0x400000u;
  return std::bit_cast<float>(sign | 0x7f800000u | payload);
}

/// Round half to even to an integer value (independent of the floating-point environment).
double round_half_even(double v) {
  const double fl = std::floor(v);
  const double diff = v - fl;  // exact
  if (diff > 0.5) return fl + 1.0;
  if (diff < 0.5) return fl;
  return std::fmod(fl, 2.0) == 0.0 ? fl : fl + 1.0;
}

double integer_min(DType t) {
  switch (t) {
    case DType::int8: return -128.0;
    case DType::int16: return -32768.0;
    case DType::int32: return -2147483648.0;
    default: return 0.0;
  }
}

double integer_max(DType t) {
  switch (t) {
    case DType::int8: return 127.0;
    case DType::int16: return 32767.0;
    case DType::int32: return 2147483647.0;
    case DType::uint8: return 255.0;
    case DType::uint16: return 65535.0;
    case DType::uint32:
    case DType::fp8_e5m2_x4:
    case DType::fp8_e4m3fn_x4: return 4294967295.0;
    case DType::fp4_e2m1fn_x4: return 65535.0;
    default: return 1.0;
  }
}

/// `v` converted to the integer type `t` (bool included), as a double holding an exact integer.
double to_integer_value(double v, DType t) {
  if (t == DType::boolean) return v != 0.0 ? 1.0 : 0.0;  // NaN compares unequal to 0: true
  if (std::isnan(v)) return 0.0;
  if (std::isinf(v)) return v > 0 ? integer_max(t) : integer_min(t);
  const double r = round_half_even(v);
  const double lo = integer_min(t), hi = integer_max(t);
  if (r < lo) return lo;
  if (r > hi) return hi;
  return r == 0.0 ? 0.0 : r;  // no negative zero in an integer type
}

/// `v` rounded to the float type `t`, as fp32 (NaN bits kept).
float to_float_value(double v, DType t) {
  const float f = narrow(v);
  switch (t) {
    case DType::bf16: return bf16_bits_to_float(float_to_bf16_bits(f));
    case DType::fp16: return fp16_bits_to_float(float_to_fp16_bits(f));
    case DType::fp8_e4m3: return fp8_e4m3_bits_to_float(float_to_fp8_e4m3_bits(f));
    case DType::fp8_e5m2: return fp8_e5m2_bits_to_float(float_to_fp8_e5m2_bits(f));
    case DType::tf32: return std::bit_cast<float>(float_to_tf32_bits(f));
    case DType::fp8_e4m3fn: return fp8_e4m3fn_bits_to_float(float_to_fp8_e4m3fn_bits(f));
    case DType::fp8_e8m0fnu: return fp8_e8m0fnu_bits_to_float(float_to_fp8_e8m0fnu_bits(f));
    default: return f;
  }
}

template <class T>
void put(void* dst, T v) {
  std::memcpy(dst, &v, sizeof v);
}

template <class T>
T get(const void* src) {
  T v;
  std::memcpy(&v, src, sizeof v);
  return v;
}

}  // namespace

std::uint8_t float_to_fp8_e4m3_bits(float f) { return float_to_fp8_bits<4>(f); }
float fp8_e4m3_bits_to_float(std::uint8_t bits) { return fp8_bits_to_float<4>(bits); }
std::uint8_t float_to_fp8_e5m2_bits(float f) { return float_to_fp8_bits<5>(f); }
float fp8_e5m2_bits_to_float(std::uint8_t bits) { return fp8_bits_to_float<5>(bits); }

std::uint32_t float_to_tf32_bits(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {  // NaN: sign and top 10 payload bits; quiet bit if they are 0
    const std::uint32_t top = bits & 0xffffe000u;
    return (top & 0x7fffffu) == 0 ? top | 0x400000u : top;
  }
  // Round to nearest even on the bit pattern; a carry runs into the exponent and into infinity.
  return (bits + 0xfffu + ((bits >> 13) & 1u)) & 0xffffe000u;
}

std::uint8_t float_to_fp8_e4m3fn_bits(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (bits >> 24) & 0x80u;
  const std::uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint8_t>(sign | 0x7fu);
  // Past 448 + half an ulp (464, whose tie goes to 448: 480 would be the NaN code) saturates.
  if (abs >= 0x43e80000u) return static_cast<std::uint8_t>(sign | 0x7eu);
  // Below the saturation point the IEEE-style rounding of e4m3 is the same: both formats agree up
  // to exponent 14 and this one goes on with the finite codes 0x78..0x7e where e4m3 has inf/NaN.
  const int e = static_cast<int>(abs >> 23) - 127;
  std::uint32_t r;
  if (e + 7 >= 1) {
    const std::uint32_t v = (static_cast<std::uint32_t>(e + 7) << 23) | (abs & 0x7fffffu);
    r = (v + 0x7ffffu + ((v >> 20) & 1u)) >> 20;
  } else {
    const std::uint32_t sig = (abs >> 23) != 0 ? (abs & 0x7fffffu) | 0x800000u : (abs & 0x7fffffu);
    const int exp_f = (abs >> 23) != 0 ? e : -126;
    const int shift = -9 - (exp_f - 23);  // value in units of 2^-9, the smallest subnormal
    if (shift >= 32) {
      r = 0;
    } else {
      const std::uint32_t q = sig >> shift;
      const std::uint32_t rem = sig & ((1u << shift) - 1);
      const std::uint32_t half = 1u << (shift - 1);
      r = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
    }
  }
  return static_cast<std::uint8_t>(sign | r);
}

float fp8_e4m3fn_bits_to_float(std::uint8_t b) {
  const std::uint32_t sign = static_cast<std::uint32_t>(b & 0x80u) << 24;
  if ((b & 0x7fu) == 0x7fu) return std::bit_cast<float>(sign | 0x7fc00000u);
  const std::uint32_t exp = (b >> 3) & 0xfu;
  const std::uint32_t man = b & 0x7u;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(man), -9);
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) | sign);
  }
  return std::bit_cast<float>(sign | ((exp + 120u) << 23) | (man << 20));
}

std::uint8_t float_to_fp8_e8m0fnu_bits(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return 0xff;
  if ((bits >> 31) != 0 && abs != 0) return 0xff;  // no sign bit: a negative value has no code
  if (abs == 0x7f800000u) return 0xfe;
  const std::uint32_t e = abs >> 23, m = abs & 0x7fffffu;
  // The code is fp32's biased exponent (same bias 127), rounded on the mantissa: the midpoint
  // between 2^k and 2^(k+1) is 1.5 * 2^k, a mantissa of 0x400000.
  if (e == 0) {
    // Below 2^-126: between code 0 (2^-127, mantissa 0x400000 here) and code 1 (2^-126); the
    // midpoint 1.5 * 2^-127 is mantissa 0x600000 and its tie goes to the even code 0.
    return m > 0x600000u ? 1 : 0;
  }
  const std::uint32_t code = e + ((m > 0x400000u || (m == 0x400000u && (e & 1u))) ? 1u : 0u);
  return static_cast<std::uint8_t>(code >= 0xffu ? 0xfeu : code);
}

float fp8_e8m0fnu_bits_to_float(std::uint8_t b) {
  if (b == 0xff) return std::bit_cast<float>(0x7fc00000u);
  if (b == 0) return std::bit_cast<float>(0x00400000u);  // 2^-127, an fp32 subnormal
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 23);
}

std::uint8_t float_to_fp4_e2m1_bits(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const std::uint8_t sign = static_cast<std::uint8_t>((bits >> 28) & 0x8u);
  const float a = std::fabs(f);
  if (std::isnan(f)) return 0;
  // The eight magnitudes and, between neighbours, the midpoint with the code a tie goes to (even).
  static constexpr float values[] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  std::uint8_t code = 7;
  for (std::uint8_t c = 0; c < 7; ++c) {
    const float mid = (values[c] + values[c + 1]) / 2;
    if (a < mid || (a == mid && (c & 1u) == 0)) {
      code = c;
      break;
    }
  }
  return static_cast<std::uint8_t>(sign | code);
}

float fp4_e2m1_bits_to_float(std::uint8_t b) {
  static constexpr float values[] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float v = values[b & 0x7u];
  return (b & 0x8u) != 0 ? -v : v;
}

double round_to_dtype(double v, DType t) {
  if (is_float(t)) return widen(to_float_value(v, t));
  return to_integer_value(v, t);
}

void store_element(void* dst, DType t, double v) {
  switch (t) {
    case DType::fp32: put(dst, narrow(v)); return;
    case DType::bf16: put(dst, float_to_bf16_bits(narrow(v))); return;
    case DType::fp16: put(dst, float_to_fp16_bits(narrow(v))); return;
    case DType::fp8_e4m3: put(dst, float_to_fp8_e4m3_bits(narrow(v))); return;
    case DType::fp8_e5m2: put(dst, float_to_fp8_e5m2_bits(narrow(v))); return;
    case DType::int8: put(dst, static_cast<std::int8_t>(to_integer_value(v, t))); return;
    case DType::int16: put(dst, static_cast<std::int16_t>(to_integer_value(v, t))); return;
    case DType::int32: put(dst, static_cast<std::int32_t>(to_integer_value(v, t))); return;
    case DType::uint8: put(dst, static_cast<std::uint8_t>(to_integer_value(v, t))); return;
    case DType::uint16: put(dst, static_cast<std::uint16_t>(to_integer_value(v, t))); return;
    case DType::uint32: put(dst, static_cast<std::uint32_t>(to_integer_value(v, t))); return;
    case DType::boolean: put(dst, static_cast<std::uint8_t>(to_integer_value(v, t))); return;
    case DType::tf32: put(dst, float_to_tf32_bits(narrow(v))); return;
    case DType::fp8_e4m3fn: put(dst, float_to_fp8_e4m3fn_bits(narrow(v))); return;
    case DType::fp8_e8m0fnu: put(dst, float_to_fp8_e8m0fnu_bits(narrow(v))); return;
    case DType::fp8_e5m2_x4:
    case DType::fp8_e4m3fn_x4: put(dst, static_cast<std::uint32_t>(to_integer_value(v, t))); return;
    case DType::fp4_e2m1fn_x4: put(dst, static_cast<std::uint16_t>(to_integer_value(v, t))); return;
  }
}

double load_element(const void* src, DType t) {
  switch (t) {
    case DType::fp32: return widen(get<float>(src));
    case DType::bf16: return widen(bf16_bits_to_float(get<std::uint16_t>(src)));
    case DType::fp16: return widen(fp16_bits_to_float(get<std::uint16_t>(src)));
    case DType::fp8_e4m3: return widen(fp8_e4m3_bits_to_float(get<std::uint8_t>(src)));
    case DType::fp8_e5m2: return widen(fp8_e5m2_bits_to_float(get<std::uint8_t>(src)));
    case DType::int8: return get<std::int8_t>(src);
    case DType::int16: return get<std::int16_t>(src);
    case DType::int32: return get<std::int32_t>(src);
    case DType::uint8: return get<std::uint8_t>(src);
    case DType::uint16: return get<std::uint16_t>(src);
    case DType::uint32: return get<std::uint32_t>(src);
    case DType::boolean: return get<std::uint8_t>(src) != 0 ? 1.0 : 0.0;
    case DType::tf32: return widen(get<float>(src));
    case DType::fp8_e4m3fn: return widen(fp8_e4m3fn_bits_to_float(get<std::uint8_t>(src)));
    case DType::fp8_e8m0fnu: return widen(fp8_e8m0fnu_bits_to_float(get<std::uint8_t>(src)));
    case DType::fp8_e5m2_x4:
    case DType::fp8_e4m3fn_x4: return get<std::uint32_t>(src);
    case DType::fp4_e2m1fn_x4: return get<std::uint16_t>(src);
  }
  return 0.0;
}

void fill_elements(void* dst, DType t, std::int64_t count, double v) {
  unsigned char one[8];
  store_element(one, t, v);
  const auto bytes = static_cast<std::size_t>(dtype_bytes(t));
  auto* out = static_cast<unsigned char*>(dst);
  const std::size_t total = static_cast<std::size_t>(count) * bytes;
  if (total == 0) return;
  // Every fresh PSUM tile and accumulator is filled: keep it at memset speed.
  if (std::all_of(one, one + bytes, [](unsigned char b) { return b == 0; })) {
    std::memset(out, 0, total);
    return;
  }
  std::memcpy(out, one, bytes);
  for (std::size_t done = bytes; done < total; done *= 2) std::memcpy(out + done, out, std::min(done, total - done));
}

}  // namespace nki
