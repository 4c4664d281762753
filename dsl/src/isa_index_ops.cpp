/**
 * \file isa::nonzero_with_count, isa::sequence_bounds and isa::topk traced as the IR ops they
 * are made of.
 *
 * The first two find, for each output slot, the position that satisfies a condition: the slots go on
 * partitions (128 at a time), the positions along the free axis, and a row minimum over keys
 * (the position where the condition holds, a larger value elsewhere) picks it; a transpose
 * brings the slots back to one row. topk takes k rounds of a maximum over a 16-partition group
 * and its first position. Counts and positions are fp32, exact below 2^24. The first GpSimd op
 * stands for the instruction; the element-wise ops around it are marked fused.
 */
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "nki/isa_index_ops.h"
#include "nki/language.h"
#include "nki/trace.h"

namespace nki::isa {

namespace {

constexpr nl::op_options kFp32{.dtype = DType::fp32};

/** Puts the op that just made `r` on the GpSimd engine; fused: part of the instruction an earlier op started. */
nl::tile gp(Trace& t, const nl::tile& r, bool fused = true) {
  if (t.ir().body.empty() || ir::tile_defined(t.ir().body.back()) != r.id()) return r;
  std::visit(
      [&](auto& o) {
        if constexpr (requires { o.engine; }) o.engine = ir::Engine::gpsimd;
        if constexpr (requires { o.fused; }) o.fused = fused;
      },
      t.ir().body.back());
  return r;
}

ir::TileInfo info(Trace& t, int tile) { return t.ir().tiles.at(static_cast<std::size_t>(tile)); }

/** The position f of each element of a [p, f] tile, in fp32. */
nl::tile positions(std::int64_t p, std::int64_t f, const std::source_location& sl) {
  const nl::mgrid_pair g = nl::mgrid(p, f, sl);
  return iota(g.x + 0 * g.p, DType::fp32, {}, sl);
}

/**
 * A [1, slots] row whose element s is the row minimum of row s - c of `pick(J, c)`, a [J, n]
 * fp32 tile built for the slots c ... c + J - 1 (J <= 128: slots on partitions), transposed back.
 */
template <class Pick>
nl::tile slot_minimum(Trace& t, std::int64_t slots, Pick pick, const std::source_location& sl) {
  std::vector<nl::tile> cols;
  for (std::int64_t c = 0; c < slots; c += 128) {
    const std::int64_t j = std::min<std::int64_t>(128, slots - c);
    const nl::tile m = gp(t, nl::min(pick(j, c), 1, {.dtype = DType::fp32, .keepdims = true}, sl));
    cols.push_back(nl::transpose(m, kFp32, sl));  // [1, j]
  }
  if (cols.size() == 1) return cols[0];
  const nl::tensor row = nl::ndarray({1, slots}, DType::fp32, nl::sbuf, "", sl);
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const auto c = static_cast<std::int64_t>(i) * 128;
    row[nl::ds(0, 1), nl::ds(c, info(t, cols[i].id()).shape[1])] = cols[i];
  }
  return nl::tile(nl::operand(row, sl).tile_id);
}

std::int32_t wrap32(std::int64_t x) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(x)); }

}  // namespace

void nonzero_with_count(const nl::access& dst, const nl::operand& src, std::int32_t index_offset,
                        std::int32_t padding_val, std::source_location sl) {
  Trace& t = Trace::current("nonzero_with_count", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* name = "isa::nonzero_with_count";
  if (src.is_scalar()) t.fail("err_scalar_only_operation", loc, fmt::format("{}: src is a scalar; it must be a tile", name));
  const ir::TileInfo s = info(t, src.tile_id);
  if (s.shape.size() != 2) {
    t.fail("err_unsupported_tile_rank", loc, fmt::format("{}: src must be a 2-D tile [P, T], got shape {}", name, shape_str(s.shape)));
  }
  if (s.memory != ir::Memory::sbuf) {
    t.fail("err_unsupported_memory", loc, fmt::format("{}: src is in {}; it must be in SBUF", name, ir::memory_name(s.memory)));
  }
  if (s.dtype != DType::fp32 && s.dtype != DType::int32) {
    t.fail("err_unsupported_dtype", loc, fmt::format("{}: src is {}; it must be fp32 or int32", name, dtype_name(s.dtype)));
  }
  const ir::TensorDecl decl = t.ir().tensors.at(static_cast<std::size_t>(dst.tensor()));
  if (decl.memory != ir::Memory::sbuf) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("{}: dst is tensor {} in {}; it must be in SBUF", name, decl.name, ir::memory_name(decl.memory)));
  }
  if (decl.dtype != DType::int32) {
    t.fail("err_unsupported_dtype", loc, fmt::format("{}: dst {} is {}; it must be int32", name, decl.name, dtype_name(decl.dtype)));
  }
  const std::int64_t p = s.shape[0], n = s.shape[1];
  if (dst.subscripts().empty()) {  // a window's shape is checked where it is written
    const Shape& ds = decl.shape;
    if (ds.size() != 2 || ds[0] != p) {
      t.fail("err_num_partition_mismatch", loc,
             fmt::format("{}: dst {} has shape {}; src has {} partitions", name, decl.name, shape_str(ds), p));
    }
    if (ds[1] != n + 1) {
      t.fail("err_free_dim_mismatch", loc,
             fmt::format("{}: dst {} must hold one element more than src per partition ({}), got {}", name, decl.name,
                         n + 1, ds[1]));
    }
  }
  if (n + 2 * 128 > (std::int64_t{1} << 24)) {
    t.fail("err_size_of_dimension_exceed_arch_limit", loc,
           fmt::format("{}: src has {} elements per partition; positions are counted exactly below 2^24", name, n));
  }
  // i + index_offset exactly in int32: offset = hi + low with hi a multiple of b = 2^(k+1) >= 2n,
  // so low + i < 2b is exact in fp32, and hi | (low + i) (or (hi + b) | (low + i - b)) adds exactly.
  std::int64_t b = 2;
  while (b < 2 * n) b *= 2;
  const std::int64_t low = ((index_offset % b) + b) % b;
  const std::int64_t hi = static_cast<std::int64_t>(index_offset) - low;
  const nl::tile x(src.tile_id);
  for (std::int64_t p0 = 0; p0 < p; p0 += 16) {  // each GpSimd core reads and writes its first partition
    const nl::tile row = x[nl::ds(p0, 1), nl::_];
    const nl::tile nz = gp(t, nl::not_equal(row, 0.0, kFp32, sl), p0 > 0);
    const nl::mgrid_pair r = nl::mgrid(1, n, sl);
    const nl::tile zeros = iota(0 * r.x + 0 * r.p, DType::fp32, {}, sl);
    const nl::tile inclusive = tensor_tensor_scan(nz, zeros, 0.0, nl::add, nl::add, {.dtype = DType::fp32}, sl);
    const nl::tile rank = gp(t, nl::subtract(inclusive, nz, kFp32, sl));  // non-zeros before each position
    const nl::tile count = gp(t, nl::sum(nz, 1, {.dtype = DType::fp32, .keepdims = true}, sl));
    // Slot j holds the position whose rank is j among the non-zeros: key = pos where it is, pos + n elsewhere.
    const nl::tile first = slot_minimum(t, n, [&](std::int64_t j, std::int64_t c) {
      const nl::mgrid_pair m = nl::mgrid(j, n, sl);
      const nl::tile slot = iota(m.p + c + 0 * m.x, DType::fp32, {}, sl);
      const nl::tile at = gp(t, nl::equal(rank.broadcast_to({j, n}, sl), slot, kFp32, sl));
      const nl::tile hit = gp(t, nl::multiply(at, nz.broadcast_to({j, n}, sl), kFp32, sl));
      const nl::tile miss = gp(t, nl::subtract(1.0, hit, kFp32, sl));
      return gp(t, nl::add(gp(t, nl::multiply(miss, static_cast<double>(n), kFp32, sl)), positions(j, n, sl), kFp32, sl));
    }, sl);
    const nl::tile found = gp(t, nl::less(first, static_cast<double>(n), kFp32, sl));
    const nl::tile sum = gp(t, nl::add(first, static_cast<double>(low), kFp32, sl));
    const nl::tile carry = gp(t, nl::greater_equal(sum, static_cast<double>(b), kFp32, sl));
    const nl::op_options i32{.dtype = DType::int32};
    const nl::tile lo_bits = gp(t, nl::copy(sum, i32, sl));
    const nl::tile hi_bits = gp(t, nl::copy(gp(t, nl::subtract(sum, static_cast<double>(b), kFp32, sl)), i32, sl));
    const nl::tile plain = gp(t, nl::bitwise_or(lo_bits, nl::operand(std::int64_t{wrap32(hi)}), i32, sl));
    const nl::tile carried = gp(t, nl::bitwise_or(hi_bits, nl::operand(std::int64_t{wrap32(hi + b)}), i32, sl));
    const nl::tile index = nl::where(carry, carried, plain, i32, sl);
    const nl::tensor out = nl::ndarray({1, n + 1}, DType::int32, nl::sbuf, "", sl);
    out[nl::ds(0, 1), nl::ds(0, n)] = nl::where(found, index, static_cast<int>(padding_val), i32, sl);
    out[nl::ds(0, 1), nl::ds(n, 1)] = gp(t, nl::copy(count, i32, sl));
    // Only partition p0 of dst is written: a copy masked to it, which the window write keeps.
    const nl::tile full = nl::tile(nl::operand(out, sl).tile_id).broadcast_to({p, n + 1}, sl);
    const nl::mgrid_pair d = nl::mgrid(p, n + 1, sl);
    nl::access w = dst;
    w = gp(t, nl::copy(full, {.dtype = DType::int32, .mask = d.p == nl::index(p0)}, sl));
  }
}

nl::tile sequence_bounds(const nl::operand& segment_ids, const nl::op_options& o, std::source_location sl) {
  Trace& t = Trace::current("sequence_bounds", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* name = "isa::sequence_bounds";
  if (segment_ids.is_scalar()) {
    t.fail("err_scalar_only_operation", loc, fmt::format("{}: segment_ids is a scalar; it must be a tile", name));
  }
  const ir::TileInfo s = info(t, segment_ids.tile_id);
  if (s.shape.size() != 2 || s.shape[0] != 1) {
    t.fail("err_invalid_shape", loc,
           fmt::format("{}: segment_ids must be a [1, n] tile (one partition), got shape {}", name, shape_str(s.shape)));
  }
  const DType out = o.dtype.value_or(s.dtype);
  for (const auto& [d, role] : {std::pair{s.dtype, "segment_ids"}, std::pair{out, "the result"}}) {
    if (d != DType::fp32 && d != DType::int32) {
      t.fail("err_unsupported_dtype", loc, fmt::format("{}: {} is {}; it must be fp32 or int32", name, role, dtype_name(d)));
    }
  }
  if (!o.mask.empty()) {
    t.fail("err_unsupported_expression_in_mask", loc, fmt::format("{} takes no mask: every position bounds a segment", name));
  }
  const std::int64_t n = s.shape[1];
  if (n >= (std::int64_t{1} << 24)) {
    t.fail("err_size_of_dimension_exceed_arch_limit", loc,
           fmt::format("{}: {} segment ids; positions are counted exactly below 2^24", name, n));
  }
  const nl::tile ids(segment_ids.tile_id);
  // begins[i]: a run of equal ids starts at i (int32 ids are compared by their bits, exactly).
  const nl::tensor begins_t = nl::ndarray({1, n}, DType::fp32, nl::sbuf, "", sl);
  const nl::mgrid_pair one = nl::mgrid(1, 1, sl);
  const nl::tile flag = iota(0 * one.x + 0 * one.p + 1, DType::fp32, {}, sl);  // the [1, 1] flag 1
  begins_t[nl::ds(0, 1), nl::ds(0, 1)] = flag;
  if (n > 1) {
    const nl::tile cur = ids[nl::_, nl::ds(1, n - 1)], prev = ids[nl::_, nl::ds(0, n - 1)];
    const nl::tile differ =
        s.dtype == DType::int32
            ? gp(t, nl::not_equal(gp(t, nl::bitwise_xor(cur, prev, {.dtype = DType::int32}, sl), false), 0.0, kFp32, sl), true)
            : gp(t, nl::not_equal(cur, prev, kFp32, sl), false);
    begins_t[nl::ds(0, 1), nl::ds(1, n - 1)] = differ;
  }
  const nl::tile begins(nl::operand(begins_t, sl).tile_id);
  const nl::tile pos = positions(1, n, sl);
  // start: the running maximum of the positions where runs begin.
  const nl::tile start_key = gp(t, nl::multiply(pos, begins, kFp32, sl));
  const nl::mgrid_pair r = nl::mgrid(1, n, sl);
  const nl::tile zeros = iota(0 * r.x + 0 * r.p, DType::fp32, {}, sl);
  const nl::tile start = tensor_tensor_scan(start_key, zeros, 0.0, nl::maximum, nl::add, {.dtype = DType::fp32}, sl);
  // end: the smallest i + 1 at or after the position where a run ends (the last position, or before a begin).
  const nl::tensor ends_t = nl::ndarray({1, n}, DType::fp32, nl::sbuf, "", sl);
  ends_t[nl::ds(0, 1), nl::ds(n - 1, 1)] = flag;
  if (n > 1) ends_t[nl::ds(0, 1), nl::ds(0, n - 1)] = begins[nl::_, nl::ds(1, n - 1)];
  const nl::tile ends(nl::operand(ends_t, sl).tile_id);
  const nl::tile end_key = nl::where(ends, gp(t, nl::add(pos, 1.0, kFp32, sl)), static_cast<double>(n), kFp32, sl);
  const nl::tile end = slot_minimum(t, n, [&](std::int64_t j, std::int64_t c) {
    const nl::mgrid_pair m = nl::mgrid(j, n, sl);
    return affine_select(m.x >= m.p + c, end_key.broadcast_to({j, n}, sl), static_cast<double>(n), kFp32, sl);
  }, sl);
  // Padding (id 0): start n, end -1.
  const nl::tile pad = gp(t, nl::equal(ids, 0.0, kFp32, sl));
  const nl::tensor res = nl::ndarray({1, 2, n}, out, nl::sbuf, "", sl);
  res[nl::ds(0, 1), nl::ds(0, 1), nl::_] = nl::expand_dims(nl::where(pad, static_cast<double>(n), start, {.dtype = out}, sl), 1, sl);
  res[nl::ds(0, 1), nl::ds(1, 1), nl::_] = nl::expand_dims(nl::where(pad, -1.0, end, {.dtype = out}, sl), 1, sl);
  return nl::tile(nl::operand(res, sl).tile_id);
}

}  // namespace nki::isa

namespace nki::isa {

topk_result topk(const nl::operand& src, std::int64_t n, std::int64_t k, std::source_location sl) {
  Trace& t = Trace::current("topk", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* name = "isa::topk";
  if (src.is_scalar()) t.fail("err_scalar_only_operation", loc, fmt::format("{}: src is a scalar; it must be a tile", name));
  const ir::TileInfo s = info(t, src.tile_id);
  if (s.shape.size() != 2) {
    t.fail("err_unsupported_tile_rank", loc, fmt::format("{}: src must be a 2-D tile [P, X], got shape {}", name, shape_str(s.shape)));
  }
  if (s.dtype != DType::bf16) {
    t.fail("err_unsupported_dtype", loc, fmt::format("{}: src is {}; it must be bf16", name, dtype_name(s.dtype)));
  }
  if (s.memory != ir::Memory::sbuf) {
    t.fail("err_unsupported_memory", loc, fmt::format("{}: src is in {}; it must be in SBUF", name, ir::memory_name(s.memory)));
  }
  const std::int64_t p = s.shape[0], x = s.shape[1];
  if (p % 16 != 0) {
    t.fail("err_num_partition_mismatch", loc,
           fmt::format("{}: src has {} partitions; it must be a multiple of 16 (one snake per 16 partitions)", name, p));
  }
  if (n < 8 || n >= 65536) {
    t.fail("err_size_of_dimension_exceed_arch_limit", loc, fmt::format("{}: n is {}; it must be at least 8 and below 65536", name, n));
  }
  if (k < 1 || k >= 32768 || k > n) {
    t.fail("err_size_of_dimension_exceed_arch_limit", loc,
           fmt::format("{}: k is {}; it must be at least 1, below 32768 and at most n ({})", name, k, n));
  }
  const std::int64_t cols = (n + 15) / 16;
  if (x < cols) {
    t.fail("err_free_dim_mismatch", loc,
           fmt::format("{}: src has {} columns; a snake of n = {} values needs ceil(n / 16) = {}", name, x, n, cols));
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const nl::tile srct(src.tile_id);
  const nl::tensor vals_out = nl::ndarray({p, k}, DType::bf16, nl::sbuf, "", sl);
  const nl::tensor idx_out = nl::ndarray({p, k}, DType::uint32, nl::sbuf, "", sl);
  for (std::int64_t g0 = 0; g0 < p; g0 += 16) {
    const nl::tile xb = gp(t, nl::copy(srct[nl::ds(g0, 16), nl::ds(0, cols)], kFp32, sl), g0 > 0);  // the instruction
    const nl::mgrid_pair m = nl::mgrid(16, cols, sl);
    const nl::tile pos = iota(16 * m.x + m.p, DType::fp32, {}, sl);  // the snake position e
    // avail: 1 where a value of the snake is not taken yet (positions >= n are not in it).
    nl::tile avail = affine_select(16 * m.x + m.p < nl::index(n), gp(t, nl::multiply(pos, 0.0, kFp32, sl)), -1.0, kFp32, sl);
    avail = gp(t, nl::add(avail, 1.0, kFp32, sl));
    const nl::tensor round_vals = nl::ndarray({1, k}, DType::fp32, nl::sbuf, "", sl);
    const nl::tensor round_idx = nl::ndarray({1, k}, DType::fp32, nl::sbuf, "", sl);
    for (std::int64_t r = 0; r < k; ++r) {
      // The largest available value: per partition, then over the group's 16 partitions.
      const nl::tile lim = gp(t, nl::multiply(gp(t, nl::subtract(avail, 0.5, kFp32, sl)), kInf, kFp32, sl));
      const nl::tile xm = gp(t, nl::minimum(xb, lim, kFp32, sl));
      const nl::tile row_max = gp(t, nl::max(xm, 1, {.dtype = DType::fp32, .keepdims = true}, sl));
      const nl::tile top = gp(t, nl::max(nl::transpose(row_max, kFp32, sl), 1, {.dtype = DType::fp32, .keepdims = true}, sl));
      // Its first available position: key = e where it is, e + 65536 elsewhere.
      const nl::tile hit = gp(t, nl::multiply(gp(t, nl::equal(xm, top.broadcast_to({16, cols}, sl), kFp32, sl)), avail, kFp32, sl));
      const nl::tile key = gp(t, nl::add(pos, gp(t, nl::multiply(gp(t, nl::subtract(1.0, hit, kFp32, sl)), 65536.0, kFp32, sl)), kFp32, sl));
      const nl::tile row_first = gp(t, nl::min(key, 1, {.dtype = DType::fp32, .keepdims = true}, sl));
      const nl::tile first = gp(t, nl::min(nl::transpose(row_first, kFp32, sl), 1, {.dtype = DType::fp32, .keepdims = true}, sl));
      if (r + 1 < k) avail = gp(t, nl::subtract(avail, gp(t, nl::equal(pos, first.broadcast_to({16, cols}, sl), kFp32, sl)), kFp32, sl));
      // Ascending order: the r-th largest goes to column k - 1 - r.
      round_vals[nl::ds(0, 1), nl::ds(k - 1 - r, 1)] = top;
      round_idx[nl::ds(0, 1), nl::ds(k - 1 - r, 1)] = first;
    }
    const nl::tile v(nl::operand(round_vals, sl).tile_id), i(nl::operand(round_idx, sl).tile_id);
    vals_out[nl::ds(g0, 16), nl::_] = gp(t, nl::copy(v.broadcast_to({16, k}, sl), {.dtype = DType::bf16}, sl));
    idx_out[nl::ds(g0, 16), nl::_] = gp(t, nl::copy(i.broadcast_to({16, k}, sl), {.dtype = DType::uint32}, sl));
  }
  return {nl::tile(nl::operand(vals_out, sl).tile_id), nl::tile(nl::operand(idx_out, sl).tile_id)};
}

}  // namespace nki::isa
