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
};

/** Every dtype, in enum order (for tests and tables). */
inline constexpr DType all_dtypes[] = {DType::fp32,  DType::bf16,  DType::fp16,   DType::fp8_e4m3,
                                       DType::fp8_e5m2, DType::int8, DType::int16,  DType::int32,
                                       DType::uint8, DType::uint16, DType::uint32, DType::boolean};

/** The canonical short name: "fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8", ..., "uint32", "bool". */
std::string_view dtype_name(DType t);
/** Parses a short name ("bf16") or an NKI long name ("bfloat16", "float8_e4m3", "bool_"); nullopt when unknown. */
std::optional<DType> parse_dtype(std::string_view name);
/** Bytes per element. */
int dtype_bytes(DType t);
bool is_float(DType t);    ///< fp32, bf16, fp16, fp8_*
bool is_integer(DType t);  ///< int*, uint* and bool
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
