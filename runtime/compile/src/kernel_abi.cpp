/**
 * \file Functions compiled kernels call by name (`nki_activation`, ...): the same C++ the
 * reference interpreter runs, so both executors share libm and the fp8 code. Exported from
 * the program (nki_compile links with -rdynamic) so a kernel's shared object finds them.
 */
#include "kernel_abi.h"

#include "nki/dtype.h"
#include "nki/ir/kernel_ir.h"
#include "nki/ir/mx_format.h"

extern "C" {

float nki_activation(int32_t kind, float x) { return nki::ir::apply_activation(static_cast<nki::ir::ActKind>(kind), x); }

float nki_power(float a, float b) { return nki::ir::apply_binary(nki::ir::BinaryKind::power, a, b); }

float nki_binary(int32_t kind, float a, float b) { return nki::ir::apply_binary(static_cast<nki::ir::BinaryKind>(kind), a, b); }

double nki_bitwise(int32_t kind, int32_t dtype, double a, double b) {
  return nki::ir::apply_bitwise(static_cast<nki::ir::BinaryKind>(kind), static_cast<nki::DType>(dtype), a, b);
}

float nki_fp8_to_f32(int32_t format, uint8_t bits) {
  switch (format) {
    case 1: return nki::fp8_e5m2_bits_to_float(bits);
    case 2: return nki::fp8_e4m3fn_bits_to_float(bits);
    case 3: return nki::fp8_e8m0fnu_bits_to_float(bits);
    default: return nki::fp8_e4m3_bits_to_float(bits);
  }
}

uint8_t nki_f32_to_fp8(int32_t format, float f) {
  switch (format) {
    case 1: return nki::float_to_fp8_e5m2_bits(f);
    case 2: return nki::float_to_fp8_e4m3fn_bits(f);
    case 3: return nki::float_to_fp8_e8m0fnu_bits(f);
    default: return nki::float_to_fp8_e4m3_bits(f);
  }
}

uint8_t nki_mx_scale(int32_t packed, float amax) { return nki::ir::mx::scale_code(amax, static_cast<nki::DType>(packed)); }

uint32_t nki_mx_pack(int32_t packed, uint8_t scale, float v0, float v1, float v2, float v3) {
  const auto t = static_cast<nki::DType>(packed);
  const int bits = t == nki::DType::fp4_e2m1fn_x4 ? 4 : 8;
  const float v[] = {v0, v1, v2, v3};
  uint32_t word = 0;
  for (int i = 0; i < 4; ++i) word |= nki::ir::mx::quantize_value(v[i], scale, t) << (bits * i);
  return word;
}

float nki_mx_dequantize(int32_t packed, uint32_t word, int32_t i, uint8_t scale) {
  return nki::ir::mx::dequantize(word, i, static_cast<nki::DType>(packed), scale);
}

int32_t nki_gather_index(double index, int32_t limit, int32_t tile, int32_t oob_error) {
  if (index >= 0 && index < limit) return static_cast<int32_t>(index);
  nki::GatherFault& f = nki::gather_fault();
  if (oob_error && f.tile < 0) f = {tile, static_cast<int64_t>(index), limit};
  return -1;
}

}  // extern "C"

namespace nki {

GatherFault& gather_fault() {
  thread_local GatherFault f;
  return f;
}

const void* const* kernel_abi_table() {
  static const void* const table[] = {reinterpret_cast<const void*>(&nki_activation),
                                      reinterpret_cast<const void*>(&nki_power),
                                      reinterpret_cast<const void*>(&nki_binary),
                                      reinterpret_cast<const void*>(&nki_bitwise),
                                      reinterpret_cast<const void*>(&nki_fp8_to_f32),
                                      reinterpret_cast<const void*>(&nki_f32_to_fp8),
                                      reinterpret_cast<const void*>(&nki_mx_scale),
                                      reinterpret_cast<const void*>(&nki_mx_pack),
                                      reinterpret_cast<const void*>(&nki_mx_dequantize),
                                      reinterpret_cast<const void*>(&nki_gather_index)};
  return table;
}

}  // namespace nki
