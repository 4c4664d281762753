/**
 * \file The element arithmetic of NKI's microscaling (MX) instructions, shared by both
 * executors so they agree bit for bit: group scales, quantized codes, dequantized values.
 *
 * A group is 8 partitions x 4 consecutive values of one partition's free axis, i.e. one
 * packed x4 element in each of 8 partitions. Its shared scale is an fp8_e8m0fnu code s,
 * the power of two 2^(s - 127); 0xff is NaN.
 */
#pragma once

#include <cstdint>

#include "nki/dtype.h"

namespace nki::ir::mx {

inline constexpr int kGroupPartitions = 8;  ///< partitions of a group
inline constexpr int kPacked = 4;           ///< values per packed element

/** The largest unbiased exponent of the values a packed type holds: 8 (e4m3fn), 15 (e5m2), 2 (e2m1). */
int max_exponent(DType packed);

/**
 * quantize_mx's scale code for a group whose largest magnitude is `amax`: the exponent
 * floor(log2(amax)) - (max_exponent - 1), biased by 127 and clamped to [0, 254]; 0 (2^-127)
 * for an all-zero group; 0xff (NaN) when the group holds a NaN or an infinity.
 */
std::uint8_t scale_code(float amax, DType packed);

/** The code of one value `v` of a group with scale `scale`: v / 2^(scale - 127) rounded to the element format. */
std::uint32_t quantize_value(float v, std::uint8_t scale, DType packed);

/** Value i (0..3) of a packed word times 2^(scale - 127), in fp32 (NaN for the NaN scale or a NaN code). */
float dequantize(std::uint32_t word, int i, DType packed, std::uint8_t scale);

/** The scale code a scale tile element holds: an fp8_e8m0fnu value, or a uint8 that is the code itself. */
std::uint8_t scale_code_of(double value, DType scale_dtype);

}  // namespace nki::ir::mx
