/** \file The C functions compiled kernels call (see kernel_abi.cpp). */
#pragma once

#include <cstdint>

extern "C" {
float nki_activation(int32_t kind, float x);
float nki_power(float a, float b);
float nki_binary(int32_t kind, float a, float b);
double nki_bitwise(int32_t kind, int32_t dtype, double a, double b);
float nki_fp8_to_f32(int32_t e5m2, uint8_t bits);
uint8_t nki_f32_to_fp8(int32_t e5m2, float f);
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
