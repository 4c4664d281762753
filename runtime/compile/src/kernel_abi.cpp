/**
 * \file Functions compiled kernels call by name (`nki_activation`, ...): the same C++ the
 * reference interpreter runs, so both executors share libm and the fp8 code. Exported from
 * the program (nki_compile links with -rdynamic) so a kernel's shared object finds them.
 */
#include "kernel_abi.h"

#include "nki/dtype.h"
#include "nki/ir/kernel_ir.h"

extern "C" {

float nki_activation(int32_t kind, float x) { return nki::ir::apply_activation(static_cast<nki::ir::ActKind>(kind), x); }

float nki_power(float a, float b) { return nki::ir::apply_binary(nki::ir::BinaryKind::power, a, b); }

float nki_binary(int32_t kind, float a, float b) { return nki::ir::apply_binary(static_cast<nki::ir::BinaryKind>(kind), a, b); }

double nki_bitwise(int32_t kind, int32_t dtype, double a, double b) {
  return nki::ir::apply_bitwise(static_cast<nki::ir::BinaryKind>(kind), static_cast<nki::DType>(dtype), a, b);
}

float nki_fp8_to_f32(int32_t e5m2, uint8_t bits) {
  return e5m2 ? nki::fp8_e5m2_bits_to_float(bits) : nki::fp8_e4m3_bits_to_float(bits);
}

uint8_t nki_f32_to_fp8(int32_t e5m2, float f) {
  return e5m2 ? nki::float_to_fp8_e5m2_bits(f) : nki::float_to_fp8_e4m3_bits(f);
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
                                      reinterpret_cast<const void*>(&nki_gather_index)};
  return table;
}

}  // namespace nki
