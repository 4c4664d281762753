/** \file Element types of tensors and tiles, their names, sizes, promotion and exact conversions. */
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace nki {

/** The element types a kernel can use (NKI names in comments). */
enum class DType : std::uint8_t {
  fp32,      ///< nl.float32
  bf16,      ///< nl.bfloat16
  fp16,      ///< nl.float16
  fp8_e4m3,  ///< nl.float8_e4m3: IEEE-style (bias 7, inf and NaN at exponent 15), max finite 240
  fp8_e5m2,  ///< nl.float8_e5m2: IEEE-style (bias 15), max finite 57344
  int8,      ///< nl.int8
  int16,     ///< nl.int16
  int32,     ///< nl.int32
  uint8,     ///< nl.uint8
  uint16,    ///< nl.uint16
  uint32,    ///< nl.uint32
  boolean,   ///< nl.bool_: one byte, 0 or 1
  // The formats below came with NKI's microscaling (MX) support; they follow the originals so
  // the enum order of the twelve above (tables, tests) stays.
  tf32,           ///< nl.tfloat32: fp32's range with a 10-bit mantissa, stored in 4 bytes (an fp32 whose low 13 bits are 0)
  fp8_e4m3fn,     ///< nl.float8_e4m3fn (OCP FP8): bias 7, no infinities, NaN 0x7f/0xff only, max finite 448
  fp8_e8m0fnu,    ///< nl.float8_e8m0fnu: unsigned exponent-only scale, 2^(code - 127), NaN 0xff
  fp8_e5m2_x4,    ///< nl.float8_e5m2_x4: four fp8_e5m2 codes in one 32-bit word, value i in byte i
  fp8_e4m3fn_x4,  ///< nl.float8_e4m3fn_x4: four fp8_e4m3fn codes in one 32-bit word, value i in byte i
  fp4_e2m1fn_x4,  ///< nl.float4_e2m1fn_x4: four fp4 e2m1 codes in one 16-bit word, value i in bits [4i, 4i+4)
};

/** Every dtype, in enum order (for tests and tables). */
inline constexpr DType all_dtypes[] = {DType::fp32,  DType::bf16,  DType::fp16,   DType::fp8_e4m3,
                                       DType::fp8_e5m2, DType::int8, DType::int16,  DType::int32,
                                       DType::uint8, DType::uint16, DType::uint32, DType::boolean,
                                       DType::tf32, DType::fp8_e4m3fn, DType::fp8_e8m0fnu, DType::fp8_e5m2_x4,
                                       DType::fp8_e4m3fn_x4, DType::fp4_e2m1fn_x4};

/** The canonical short name: "fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8", ..., "uint32", "bool". */
std::string_view dtype_name(DType t);
/** Parses a short name ("bf16") or an NKI long name ("bfloat16", "float8_e4m3", "bool_"); nullopt when unknown. */
std::optional<DType> parse_dtype(std::string_view name);
/** Bytes per element. */
int dtype_bytes(DType t);
bool is_float(DType t);    ///< fp32, bf16, fp16, tf32, fp8_* (the packed x4 types are not)
bool is_integer(DType t);  ///< int*, uint*, bool and the packed x4 types (whose elements are raw words)
/**
 * The packed MX operand types (fp8_e5m2_x4, fp8_e4m3fn_x4, fp4_e2m1fn_x4). An element is
 * one unsigned word holding four codes; outside the MX instructions it behaves as that
 * unsigned integer (uint32, or uint16 for fp4), so copies move the codes exactly.
 */
bool is_packed_x4(DType t);
/** The format of each of the four values of a packed type (fp4_e2m1fn_x4 has none of its own: nullopt). */
std::optional<DType> packed_element(DType t);
bool is_signed_integer(DType t);

/**
 * NKI's promotion for a binary op on two tiles (docs/reference.md has the table): equal
 * types stay; (fp16, bf16) -> fp32; (fp8_e4m3, fp8_e5m2) -> bf16; a float with an integer
 * gives the float; two integers follow NumPy (mixed signedness widens to the next signed
 * type; (uint32, signed) -> fp32 as there is no int64); bool gives way to anything.
 */
DType promote(DType a, DType b);
/**
 * A tile of type `t` with a weakly typed Python-style scalar: an integer scalar keeps `t`
 * (bool becomes int32); a float scalar keeps a float `t` and makes an integer `t` fp32.
 */
DType promote_scalar(DType t, bool scalar_is_float);

// Exact conversions. Narrowing rounds to nearest, ties to even. A NaN keeps its sign and
// the top bits of its payload, so a 16-bit NaN widened and narrowed again is unchanged
// (loads and stores move NaN bits as they are); if the kept payload is zero the quiet bit
// is set so the result is still a NaN. The compiled code emits the same recipe.
std::uint16_t float_to_bf16_bits(float f);
float bf16_bits_to_float(std::uint16_t bits);
std::uint16_t float_to_fp16_bits(float f);
float fp16_bits_to_float(std::uint16_t bits);
/// fp8: round to nearest even; beyond the largest finite value rounds to infinity as IEEE does.
std::uint8_t float_to_fp8_e4m3_bits(float f);
float fp8_e4m3_bits_to_float(std::uint8_t bits);
std::uint8_t float_to_fp8_e5m2_bits(float f);
float fp8_e5m2_bits_to_float(std::uint8_t bits);
/// tf32: fp32 rounded to nearest even at 10 mantissa bits (beyond the largest finite value to
/// infinity, as fp32 does); the result is an fp32 bit pattern whose low 13 bits are 0.
std::uint32_t float_to_tf32_bits(float f);
/// fp8 e4m3fn (OCP): round to nearest even; no infinity, so a magnitude past 448 (infinity
/// included) saturates to +-448; a NaN becomes 0x7f with its sign.
std::uint8_t float_to_fp8_e4m3fn_bits(float f);
float fp8_e4m3fn_bits_to_float(std::uint8_t bits);
/// fp8 e8m0fnu: the nearest power of two 2^(code - 127), ties to the even code; a magnitude
/// below 2^-127 (zero included) saturates to code 0, above 2^127 (infinity included) to code
/// 0xfe; a NaN or a negative non-zero value (no sign bit) gives the NaN code 0xff.
std::uint8_t float_to_fp8_e8m0fnu_bits(float f);
float fp8_e8m0fnu_bits_to_float(std::uint8_t bits);
/// fp4 e2m1 (OCP, one value of fp4_e2m1fn_x4): codes 0..15, bias 1, values 0, 0.5, 1, 1.5, 2, 3, 4, 6
/// and their negatives; no infinity or NaN: rounds to nearest even, saturates at +-6, NaN gives 0.
std::uint8_t float_to_fp4_e2m1_bits(float f);
float fp4_e2m1_bits_to_float(std::uint8_t bits);

/**
 * Element values travel as double, which holds every value of every dtype exactly.
 * Converting a value to `t`: a float type first rounds to fp32, then to `t`; an integer
 * type rounds to nearest (ties to even), saturates to its range, and takes NaN to 0;
 * bool is 1 for any non-zero value (NaN included) and 0 otherwise.
 */
double round_to_dtype(double v, DType t);
/** Writes `v` converted to `t` into `dst`, which holds one element of type `t`. */
void store_element(void* dst, DType t, double v);
/** Sets `count` consecutive elements of type `t` at `dst` to `v` (converted once, as store_element). */
void fill_elements(void* dst, DType t, std::int64_t count, double v);
/** Reads one element of type `t` at `src` (exact). */
double load_element(const void* src, DType t);

}  // namespace nki
