/** \file Element types of tensors and tiles, their names, sizes and exact conversions. */
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace nki {

/** The element types a kernel can use (NKI names in comments). */
enum class DType : std::uint8_t {
  fp32,  ///< nl.float32
  bf16,  ///< nl.bfloat16
  fp16,  ///< nl.float16
};

/** The canonical short name: "fp32", "bf16", "fp16". */
std::string_view dtype_name(DType t);
/** Parses a short name ("bf16") or an NKI long name ("bfloat16"); nullopt when unknown. */
std::optional<DType> parse_dtype(std::string_view name);
/** Bytes per element. */
int dtype_bytes(DType t);

/**
 * NKI's promotion for a binary op on two tiles: equal types stay; fp32 wins;
 * (fp16, bf16) promotes to fp32.
 */
DType promote(DType a, DType b);

// Exact conversions. Narrowing rounds to nearest, ties to even. A NaN keeps its sign and
// the top bits of its payload, so a 16-bit NaN widened and narrowed again is unchanged
// (loads and stores move NaN bits as they are); if the kept payload is zero the quiet bit
// is set so the result is still a NaN. The compiled code emits the same recipe.
std::uint16_t float_to_bf16_bits(float f);
float bf16_bits_to_float(std::uint16_t bits);
std::uint16_t float_to_fp16_bits(float f);
float fp16_bits_to_float(std::uint16_t bits);

/** Rounds an fp32 value to the nearest value representable in `t`, returned as fp32. */
float round_to_dtype(float f, DType t);

/** Writes `f` (rounded to `t`) into `dst`, which holds one element of type `t`. */
void store_element(void* dst, DType t, float f);
/** Reads one element of type `t` at `src` as fp32 (exact). */
float load_element(const void* src, DType t);

}  // namespace nki
