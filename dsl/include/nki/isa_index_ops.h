/**
 * \file GpSimd instructions that turn values into positions: isa.nonzero_with_count,
 * isa.sequence_bounds and isa.topk (dsl/src/isa_index_ops.cpp). Included by nki/language.h.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>

#include "nki/language.h"

namespace nki::isa {

namespace nl = nki::language;

/**
 * isa.nonzero_with_count on the GpSimd engine. For each partition 0, 16, 32, ... of src (a
 * [P, T] fp32 or int32 SBUF tile), row p of dst (an int32 SBUF window [P, T + 1]) receives the
 * positions of the row's non-zero elements in order, plus index_offset, then padding_val up to
 * T elements, then the count of non-zero elements. The other partitions of dst are not written.
 */
void nonzero_with_count(const nl::access& dst, const nl::operand& src, std::int32_t index_offset = 0,
                        std::int32_t padding_val = -1, std::source_location loc = std::source_location::current());

/**
 * isa.sequence_bounds on the GpSimd engine: for a [1, n] tile of segment ids (fp32 or int32),
 * a [1, 2, n] tile whose [0, 0, i] is the first position of the run of equal ids holding i and
 * [0, 1, i] one past its last position; an id of 0 is padding: start n, end -1. The result has
 * the dtype of segment_ids (or o.dtype, fp32 or int32).
 */
nl::tile sequence_bounds(const nl::operand& segment_ids, const nl::op_options& o = {},
                         std::source_location loc = std::source_location::current());

}  // namespace nki::isa

namespace nki::isa {

/** The two results of isa::topk. */
struct topk_result {
  nl::tile values;   ///< [P, k] bf16, ascending
  nl::tile indices;  ///< [P, k] uint32: the snake positions of the values
};

/**
 * isa.topk on the GpSimd engine. Each group of 16 partitions of src (a [P, X] bf16 SBUF tile, P a
 * multiple of 16) holds one "snake" of n values: value e sits on partition e % 16 of the group,
 * column e / 16 (so X >= ceil(n / 16)). Every partition of the group receives the k largest of
 * its group's n values in ascending order, and their positions e. Equal values are taken from
 * the smallest position first (the one taken first is the larger in the ascending order).
 * 8 <= n < 65536, 1 <= k <= n, k < 32768.
 */
topk_result topk(const nl::operand& src, std::int64_t n, std::int64_t k,
                 std::source_location loc = std::source_location::current());

}  // namespace nki::isa
