/** \file The C functions compiled kernels call (see kernel_abi.cpp). */
#pragma once

#include <cstdint>

extern "C" {
float nki_activation(int32_t kind, float x);
float nki_power(float a, float b);
float nki_binary(int32_t kind, float a, float b);
double nki_bitwise(int32_t kind, int32_t dtype, double a, double b);
/// format: 0 fp8_e4m3, 1 fp8_e5m2, 2 fp8_e4m3fn, 3 fp8_e8m0fnu (fp8_format() of the lowering).
float nki_fp8_to_f32(int32_t format, uint8_t bits);
uint8_t nki_f32_to_fp8(int32_t format, float f);
/// MX (ir/mx_format.h); `packed` is the nki::DType of the packed type.
uint8_t nki_mx_scale(int32_t packed, float amax);
uint32_t nki_mx_pack(int32_t packed, uint8_t scale, float v0, float v1, float v2, float v3);
float nki_mx_dequantize(int32_t packed, uint32_t word, int32_t i, uint8_t scale);
/** A gather's index: itself when in [0, limit), else -1, recording the first such index when oob_error. */
int32_t nki_gather_index(double index, int32_t limit, int32_t tile, int32_t oob_error);
}

namespace nki {
/** The first out-of-bound gather index this thread's compiled code met (tile -1: none). */
struct GatherFault {
  int32_t tile = -1;
  int64_t index = 0;
  int32_t limit = 0;
};
GatherFault& gather_fault();
/** The functions' addresses; referencing it keeps them linked into every program that loads artifacts. */
const void* const* kernel_abi_table();
}  // namespace nki
