/** \file The 16-bit float conversions over whole arrays: host tensors in and out at memory speed. */
#pragma once

#include <cstdint>
#include <span>

#include "nki/dtype.h"

namespace nki {

/** out[i] = float_to_bf16_bits(in[i]) (t bf16) or float_to_fp16_bits(in[i]) (t fp16); another t is an InternalError. */
void floats_to_bits16(std::span<const float> in, DType t, std::uint16_t* out);

/** out[i] = bf16_bits_to_float(in[i]) (t bf16) or fp16_bits_to_float(in[i]) (t fp16); another t is an InternalError. */
void bits16_to_floats(const std::uint16_t* in, DType t, std::span<float> out);

}  // namespace nki
