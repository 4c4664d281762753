/** \file Names and fp32 semantics of the IR's enumerations. */
#include "nki/ir/kernel_ir.h"

#include <cmath>
#include <limits>

namespace nki::ir {

const char* memory_name(Memory m) {
  switch (m) {
    case Memory::hbm_input: return "hbm_input";
    case Memory::shared_hbm: return "shared_hbm";
  }
  return "?";
}

const char* binary_name(BinaryKind k) {
  switch (k) {
    case BinaryKind::add: return "add";
    case BinaryKind::subtract: return "subtract";
    case BinaryKind::multiply: return "multiply";
    case BinaryKind::divide: return "divide";
    case BinaryKind::maximum: return "maximum";
    case BinaryKind::minimum: return "minimum";
  }
  return "?";
}

namespace {
float apply_binary_raw(BinaryKind k, float a, float b) {
  switch (k) {
    case BinaryKind::add: return a + b;
    case BinaryKind::subtract: return a - b;
    case BinaryKind::multiply: return a * b;
    case BinaryKind::divide: return a / b;
    // numpy.maximum / numpy.minimum: a NaN operand propagates; otherwise a >= b ? a : b.
    case BinaryKind::maximum: return std::isnan(a) ? a : std::isnan(b) ? b : (a >= b ? a : b);
    case BinaryKind::minimum: return std::isnan(a) ? a : std::isnan(b) ? b : (a <= b ? a : b);
  }
  return 0.0f;
}
}  // namespace

float apply_binary(BinaryKind k, float a, float b) {
  const float r = apply_binary_raw(k, a, b);
  // IEEE leaves the payload of a NaN result open (and compilers may swap commutative operands):
  // every NaN result is the canonical quiet NaN, so both executors agree bit for bit.
  return std::isnan(r) ? std::numeric_limits<float>::quiet_NaN() : r;
}

}  // namespace nki::ir
