/** \file Register semantics both executors share: element <-> register conversions and dynamic trip counts. */
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <string>

#include "nki/ir/kernel_ir.h"

namespace nki::ir {

bool is_register_dtype(DType t) {
  switch (t) {
    case DType::int8:
    case DType::int16:
    case DType::int32:
    case DType::uint8:
    case DType::uint16:
    case DType::uint32: return true;
    default: return false;
  }
}

std::int32_t register_from_element(const void* src, DType t) {
  const auto v = static_cast<std::int64_t>(load_element(src, t));  // exact: every such element fits an int64
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
}

void register_to_element(void* dst, DType t, std::int32_t v) {
  const int bits = dtype_bytes(t) * 8;
  const std::uint32_t u = static_cast<std::uint32_t>(v);
  const std::uint32_t low = bits == 32 ? u : u & ((std::uint32_t{1} << bits) - 1);
  std::int64_t value = low;
  if (is_signed_integer(t) && bits < 64 && (low >> (bits - 1)) != 0) value -= std::int64_t{1} << bits;
  store_element(dst, t, static_cast<double>(value));
}

std::int64_t dynamic_trip(const LoopInfo& l, std::span<const std::int32_t> regs) {
  const std::int64_t lo = l.lower_reg >= 0 ? regs[static_cast<std::size_t>(l.lower_reg)] : l.lower;
  const std::int64_t hi = l.upper_reg >= 0 ? regs[static_cast<std::size_t>(l.upper_reg)] : l.upper;
  return hi <= lo ? 0 : (hi - lo + l.step - 1) / l.step;  // step > 0 (checked when traced)
}

std::string device_print_line(const std::string& prefix, std::span<const std::int64_t> pid, DType dtype,
                              const Shape& shape, std::span<const double> values) {
  std::string out = fmt::format("{} [{}] {}{}:", prefix, fmt::join(pid, ","), dtype_name(dtype), shape_str(shape));
  for (double v : values) out += fmt::format(" {}", v);
  return out;
}

void throw_while_loop_limit(const KernelIR& k, const LoopInfo& l, std::span<const std::int64_t> pid) {
  throw UserError("err_while_loop_limit", k.name, l.loc,
                  fmt::format("nl::while_loop ran {} iterations in instance [{}] and its condition is still non-zero; "
                              "a loop that never ends is stopped here",
                              kWhileLoopLimit, fmt::join(pid, ",")));
}

}  // namespace nki::ir
