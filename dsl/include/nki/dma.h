/**
 * \file DMA instructions and data-dependent moves: isa::dma_copy, dma_transpose, dma_compute,
 * nl::load_transpose2d, nl::gather_flattened, isa::nc_n_gather, isa::nc_stream_shuffle, and the
 * enums NKI configures them with (dge_mode, oob_mode). Included by nki/language.h.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>
#include <vector>

namespace nki::isa {

/** nisa.dge_mode: who generates a DMA's descriptors (unknown: let the compiler choose). */
enum class dge_mode : std::uint8_t { unknown, swdge, hwdge, none };
/** nisa.oob_mode: what an out-of-bounds data-dependent index does: a run-time error, or skip the element. */
enum class oob_mode : std::uint8_t { error, skip };

/** Keyword arguments of isa::dma_copy / dma_transpose (NKI's names). */
struct dma_options {
  std::optional<int> priority;  ///< QoS level 0-3, lower first (NeuronCore-v4); timing only
  isa::oob_mode oob_mode = isa::oob_mode::error;
  isa::dge_mode dge_mode = isa::dge_mode::unknown;
  isa::engine engine = isa::engine::unknown;  ///< hwdge: the sequencer that starts it (scalar; unknown: Sync)
};

/**
 * dst = src by a DMA: each of src and dst a window of an HBM or SBUF tensor (or src an SBUF
 * tile), of the same shape; a dtype change goes src -> fp32 -> dst, as the DMA engines convert.
 */
void dma_copy(const nl::access& dst, const nl::access& src, const dma_options& o = {},
              std::source_location loc = std::source_location::current());
void dma_copy(const nl::access& dst, const nl::tile& src, const dma_options& o = {},
              std::source_location loc = std::source_location::current());

/**
 * NKI's data.ap(pattern, vector_offset=index, indirect_dim=0): the window of an HBM tensor
 * whose row on dimension 0 is, for each partition p, the window's start there plus index[p, 0]
 * (an integer [P, 1] SBUF tile read when the DMA runs). A gather: dma_copy(dst, indirect(...)).
 */
struct indirect_access {
  nl::access window;
  nl::tile index;
  int dim = 0;
};
inline indirect_access indirect(const nl::access& window, const nl::tile& index, int indirect_dim = 0) {
  return {window, index, indirect_dim};
}
/**
 * dst = the rows src's index tile names (software DGE: GpSimd writes the descriptors). A row
 * outside the tensor is err_tensor_access_out_of_bound when the kernel runs (oob_mode::error),
 * or leaves dst's partition as it was (oob_mode::skip).
 */
void dma_copy(const nl::access& dst, const indirect_access& src, const dma_options& o = {},
              std::source_location loc = std::source_location::current());

/**
 * A scatter of rows: partition p of src (an HBM or SBUF window, or an SBUF tile, of the
 * window's shape) is written to the row dst's index tile names (software DGE). Several
 * partitions naming one row: the last partition's data stays (checked mode reports the
 * pair). A row outside the tensor is err_tensor_access_out_of_bound when the kernel runs
 * (oob_mode::error), or is not written (oob_mode::skip).
 */
void dma_copy(const indirect_access& dst, const nl::access& src, const dma_options& o = {},
              std::source_location loc = std::source_location::current());
void dma_copy(const indirect_access& dst, const nl::tile& src, const dma_options& o = {},
              std::source_location loc = std::source_location::current());

/**
 * dst = src transposed by a DMA: src a window of HBM or SBUF, dst an SBUF window of the
 * permuted shape and the same dtype. axes (default: the rank's only one): (1, 0), (2, 1, 0)
 * or (3, 1, 2, 0); result axis i is source axis axes[i].
 */
void dma_transpose(const nl::access& dst, const nl::access& src, const std::vector<int>& axes = {},
                   const dma_options& o = {}, std::source_location loc = std::source_location::current());

/** Keyword arguments of isa::dma_compute. */
struct dma_compute_options {
  std::vector<double> scales;  ///< one per source; NKI takes only 1.0 (empty: all 1.0)
  bool unique_indices = true;
  isa::oob_mode oob_mode = isa::oob_mode::error;
};
/**
 * dst = reduce_op(srcs[0] * scales[0], srcs[1] * scales[1], ...) computed by the DMA engines
 * in fp32, left to right, rounded once to dst's dtype. reduce_op is nl::add (NKI's only one);
 * 1 to 16 sources, each of dst's shape, in HBM or SBUF.
 */
void dma_compute(const nl::access& dst, const std::vector<nl::access>& srcs, const nl::binary_fn& reduce_op,
                 const dma_compute_options& o = {}, std::source_location loc = std::source_location::current());

/**
 * Per partition p: result[p, f...] = data[p, g] with g = indices[p, f...] an element of p's
 * free dimensions flattened row-major. data and indices (uint32) SBUF tiles of equal
 * partitions; the result has indices' shape and data's dtype. GpSimd. An index outside
 * [0, elements per partition) is err_tensor_access_out_of_bound when the kernel runs.
 */
nl::tile nc_n_gather(const nl::operand& data, const nl::operand& indices,
                     std::source_location loc = std::source_location::current());

/**
 * Cross-partition moves within each quadrant of 32 partitions: dst partition 32q + i takes src
 * partition 32q + shuffle_mask[i], or keeps its value where shuffle_mask[i] is 255. src and
 * dst (SBUF or PSUM) have the same dtype and elements per partition. Vector engine.
 */
void nc_stream_shuffle(const nl::access& dst, const nl::operand& src, const std::vector<std::int64_t>& shuffle_mask,
                       std::source_location loc = std::source_location::current());

}  // namespace nki::isa

namespace nki::language {

/** Keyword arguments of nl::atomic_rmw. */
struct atomic_rmw_options {
  predicate mask;
};
/**
 * NKI's original nl.atomic_rmw(dst, value, op, mask=): dst = op(dst, value) on HBM, atomic.
 * dst is an indirect window (isa::indirect(t[...], index), as a scatter's); op is nl::add,
 * NKI's only one. Every update of an element lands, duplicates within the index tile and
 * updates by other instances and cores alike; they sum exactly (fp32 addends) and dst holds
 * the sum rounded to its dtype, so the result does not depend on the order they land in.
 */
void atomic_rmw(const isa::indirect_access& dst, const operand& value, const binary_fn& op,
                const atomic_rmw_options& o = {}, source_location loc = source_location::current());

/** nl.load_transpose2d: the 2-D HBM window [A, B] loaded as its transpose [B, A] (a DMA transpose), converted to dtype if given. */
tile load_transpose2d(const access& src, std::optional<DType> dtype = std::nullopt,
                      source_location loc = source_location::current());

/**
 * nl.gather_flattened: per partition, result[p, f...] = data[p, indices[p, f...]] with data's
 * free dimensions flattened (as isa::nc_n_gather; indices of any integer type; axis 0 only),
 * converted to dtype if given. An out-of-range index is err_tensor_access_out_of_bound.
 */
tile gather_flattened(const operand& data, const operand& indices, int axis = 0,
                      std::optional<DType> dtype = std::nullopt, source_location loc = source_location::current());

}  // namespace nki::language
