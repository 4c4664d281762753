/**
 * \file isa.tensor_copy_predicated, isa.select_reduce, isa.range_select: selects of the tile
 * language (isa_composites.cpp). Kept out of language.h only so adding them did not rebuild
 * every file; they belong in its isa block.
 */
#pragma once

#include "nki/language.h"

namespace nki::isa {

/** Writes src (a tile or a scalar) into the on-chip window dst where predicate (an unsigned integer tile) is non-zero. */
void tensor_copy_predicated(const nl::access& dst, const nl::operand& src, const nl::operand& predicate,
                            bool reverse_pred = false, std::source_location loc = std::source_location::current());

/** Options of isa::select_reduce and isa::range_select: the per-partition maximum of the result. */
struct select_reduce_options {
  std::optional<nl::access> reduce_res;  ///< where the [P, 1] maximum goes
  isa::reduce_cmd reduce_cmd = isa::reduce_cmd::idle;
  std::optional<nl::binary_fn> reduce_op;  ///< nl::maximum only
  bool reverse_pred = false;
  std::optional<DType> dtype;
};
/** predicate ? on_true : on_false (a scalar or a [P, 1] tile); with reduce_res and reset_reduce also the row max. */
nl::tile select_reduce(const nl::operand& predicate, const nl::operand& on_true, const nl::operand& on_false,
                       const select_reduce_options& o = {},
                       std::source_location loc = std::source_location::current());

/** Options of isa::range_select. */
struct range_select_options {
  std::optional<nl::access> reduce_res;  ///< where the [P, 1] maximum goes
  isa::reduce_cmd reduce_cmd = isa::reduce_cmd::reset_reduce;
  std::int64_t range_start = 0;
  double on_false_value = -3.4028234663852886e38;  ///< FP32_MIN, the only value the hardware takes
  std::optional<DType> dtype;
};
/**
 * on_true where comp_op0(range_start + f, bound0) and comp_op1(range_start + f, bound1) hold
 * (f the free index, compared in fp32; bounds [P, 1] fp32 tiles), on_false_value elsewhere.
 */
nl::tile range_select(const nl::operand& on_true, const nl::binary_fn& comp_op0, const nl::binary_fn& comp_op1,
                      const nl::operand& bound0, const nl::operand& bound1, const range_select_options& o = {},
                      std::source_location loc = std::source_location::current());

}  // namespace nki::isa
