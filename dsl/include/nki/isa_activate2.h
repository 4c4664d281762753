/**
 * \file isa.activate2: the Scalar engine's activation with a two-step tensor-scalar stage in front
 * (dsl/src/activate2.cpp). Included by nki/language.h.
 */
#pragma once

#include <optional>
#include <source_location>

#include "nki/language.h"

namespace nki::isa {

namespace nl = nki::language;

/** Options of isa::activate2 (the keyword arguments of NKI's nisa.activate2). */
struct activate2_options {
  std::optional<DType> dtype;              ///< of the result (default: data's)
  nl::operand relu_param = 0.0;            ///< the negative slope of nl::relu (PReLU); a scalar or a [P, 1] tile
  bool reverse0 = false;                   ///< imm0 op0 data instead of data op0 imm0
  bool reverse1 = false;                   ///< imm1 op1 x instead of x op1 imm1
  std::optional<nl::binary_fn> reduce_op;  ///< add, maximum, minimum, abs_max or abs_min of the activated values
  std::optional<nl::access> reduce_res;    ///< where the [P, 1] reduction goes
  isa::reduce_cmd reduce_cmd = isa::reduce_cmd::idle;
};

/**
 * op((data op0 imm0) op1 imm1) on the Scalar engine, fp32 throughout, the result rounded to
 * o.dtype. imm0 and imm1 are scalars or [P, 1] tiles. op0 / op1 of nl::bypass (or std::nullopt)
 * switches the stage off (it passes its input on); the pairs are (multiply, add), (multiply, subtract),
 * (multiply, bypass), (add, bypass), (subtract, bypass) and (bypass, bypass). With reduce_op,
 * reduce_res and reduce_cmd = reset_reduce, the fp32 activated values of each partition are also
 * reduced into reduce_res.
 */
nl::tile activate2(const nl::unary_fn& op, const nl::operand& data, const nl::operand& imm0, const nl::operand& imm1,
                   const std::optional<nl::binary_fn>& op0, const std::optional<nl::binary_fn>& op1,
                   const activate2_options& o = {}, std::source_location loc = std::source_location::current());

}  // namespace nki::isa
