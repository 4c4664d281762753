/**
 * \file ISA instructions traced as the IR ops they are made of: max8, nc_find_index8,
 * nc_match_replace8, tensor_scalar_cumulative, tensor_partition_reduce, bn_stats, bn_aggr,
 * tensor_copy_predicated, select_reduce, range_select.
 *
 * NKI runs each as one instruction. One op of a composite (its first copy, its scan, its
 * select, its reduction) stands for the instruction on the docstring's engine; the element-wise,
 * reduce and copy ops around it are marked fused, so the cost model charges the instruction
 * once. (Iota, select and transpose ops have no fused flag in the IR: the others a composite
 * traces are charged as the instructions they are.)
 */
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "nki/language.h"
#include "nki/trace.h"

namespace nki::isa {

namespace {


const Shape& shape_of(Trace& t, int tile) { return tile_info(t, tile).shape; }
DType dtype_of(Trace& t, int tile) { return tile_info(t, tile).dtype; }

/** Puts the op that just made `r` on `e`; fused: it is part of the instruction an earlier op started. */
nl::tile part(Trace& t, const nl::tile& r, ir::Engine e, bool fused = true) {
  if (t.ir().body.empty() || ir::tile_defined(t.ir().body.back()) != r.id()) return r;
  std::visit(
      [&](auto& o) {
        if constexpr (requires { o.engine; }) o.engine = e;
        if constexpr (requires { o.fused; }) o.fused = fused;
      },
      t.ir().body.back());
  return r;
}

/** The [P, F] tile an operand names; scalars and other ranks are refused in NKI's words. */
int tile_2d(Trace& t, const nl::operand& x, const char* op, const char* role, const SourceLoc& loc) {
  if (x.is_scalar()) t.fail("err_scalar_only_operation", loc, fmt::format("{}: {} is a scalar; it must be a tile", op, role));
  const Shape& s = shape_of(t, x.tile_id);
  if (s.size() != 2) {
    t.fail("err_unsupported_tile_rank", loc,
           fmt::format("{}: {} must be a 2-D tile [P, F], got shape {}", op, role, shape_str(s)));
  }
  return x.tile_id;
}

/** The searched tile of max8 / nc_find_index8 / nc_match_replace8: 8 to 16384 elements per partition. */
int searched_tile(Trace& t, const nl::operand& x, const char* op, const char* role, const SourceLoc& loc) {
  const int id = tile_2d(t, x, op, role, loc);
  const std::int64_t f = shape_of(t, id)[1];
  if (f < 8 || f > 16384) {
    t.fail("err_size_of_dimension_exceed_arch_limit", loc,
           fmt::format("{}: {} has {} elements per partition; the instruction reads 8 to 16384", op, role, f));
  }
  return id;
}

/** vals of nc_find_index8 / nc_match_replace8: [P, 8] with the data's partitions. */
int vals_tile(Trace& t, const nl::operand& v, std::int64_t partitions, const char* op, const SourceLoc& loc) {
  const int id = tile_2d(t, v, op, "vals", loc);
  const Shape& s = shape_of(t, id);
  if (s[0] != partitions) {
    t.fail("err_num_partition_mismatch", loc,
           fmt::format("{}: vals {} has {} partitions; the data has {}", op, shape_str(s), s[0], partitions));
  }
  if (s[1] != 8) {
    t.fail("err_free_dim_mismatch", loc,
           fmt::format("{}: vals must hold exactly 8 values per partition ([{}, 8]), got {}", op, partitions,
                       shape_str(s)));
  }
  return id;
}

/** The free position f of each element of a [P, F] tile, in fp32 (exact up to 2^24). */
nl::tile positions(std::int64_t p, std::int64_t f, const std::source_location& sl) {
  const nl::mgrid_pair g = nl::mgrid(p, f, sl);
  return iota(g.x + 0 * g.p, DType::fp32, {}, sl);
}

constexpr double kInf = std::numeric_limits<double>::infinity();

/**
 * The rounds of the 8-value instructions, in fused fp32 arithmetic on 0/1 flags (no selects):
 * the first position of a row holding a value and not yet taken (a value >= F where none
 * does), and the flags of positions taken.
 */
struct search {
  Trace& t;
  std::source_location sl;
  nl::tile pos;
  std::int64_t f;

  nl::tile v(const nl::tile& r) const { return part(t, r, ir::Engine::vector); }
  nl::op_options fp32() const { return {.dtype = DType::fp32}; }

  nl::tile first_of(const nl::tile& x, const nl::operand& value, const std::optional<nl::tile>& taken) const {
    nl::tile hit = v(nl::equal(x, value, fp32(), sl));
    if (taken) hit = v(nl::subtract(hit, *taken, fp32(), sl));  // 1 only where a free position matches
    // key = pos where hit, pos + F * (1 - hit) >= F elsewhere: the row minimum is the first hit.
    const nl::tile miss = v(nl::subtract(1.0, hit, fp32(), sl));
    const nl::tile key = v(nl::add(v(nl::multiply(miss, static_cast<double>(f), fp32(), sl)), pos, fp32(), sl));
    return v(nl::min(key, 1, {.dtype = DType::fp32, .keepdims = true}, sl));
  }
  nl::tile at(const nl::tile& first) const { return v(nl::equal(pos, first, fp32(), sl)); }
  nl::tile taken_after(const std::optional<nl::tile>& taken, const nl::tile& first) const {
    return taken ? v(nl::maximum(*taken, at(first), fp32(), sl)) : at(first);
  }
  /** x with the element at `first` lowered to -inf: min(x, (0.5 - at) * inf), +inf elsewhere. */
  nl::tile without(const nl::tile& x, const nl::tile& first) const {
    const nl::tile lim = v(nl::multiply(v(nl::subtract(0.5, at(first), fp32(), sl)), kInf, fp32(), sl));
    return v(nl::minimum(x, lim, fp32(), sl));
  }
};

/**
 * Descending [P, 1] columns m_0 >= m_1 >= ... side by side: column j is min over k <= j of m_k,
 * i.e. min over k of max(m_k, (k - 0.5 - j) * inf), all fused arithmetic.
 */
nl::tile descending_columns(const search& r, const std::vector<nl::tile>& cols, DType dtype) {
  const std::int64_t p = shape_of(r.t, cols[0].id())[0];
  const auto n = static_cast<std::int64_t>(cols.size());
  const nl::tile col = positions(p, n, r.sl);
  nl::tile out = cols[0].broadcast_to({p, n}, r.sl);
  for (std::int64_t k = 1; k < n; ++k) {
    const nl::tile lim = r.v(nl::multiply(r.v(nl::subtract(static_cast<double>(k) - 0.5, col, r.fp32(), r.sl)), kInf,
                                          r.fp32(), r.sl));
    const nl::tile keep = r.v(nl::maximum(cols[static_cast<std::size_t>(k)], lim, r.fp32(), r.sl));
    out = r.v(nl::minimum(out, keep, {.dtype = k + 1 == n ? dtype : DType::fp32}, r.sl));
  }
  return out;
}

/** [P, 1] columns side by side (a select per column into the broadcast first one). */
nl::tile columns(Trace& t, const std::vector<nl::tile>& cols, DType dtype, const std::source_location& sl) {
  const std::int64_t p = shape_of(t, cols[0].id())[0];
  const auto n = static_cast<std::int64_t>(cols.size());
  const nl::tile col = positions(p, n, sl);
  nl::tile out = cols[0].broadcast_to({p, n}, sl);
  for (std::int64_t k = 1; k < n; ++k) {
    const nl::tile at = part(t, nl::equal(col, static_cast<double>(k), {.dtype = DType::fp32}, sl), ir::Engine::vector);
    out = nl::where(at, cols[static_cast<std::size_t>(k)], out, {.dtype = k + 1 == n ? dtype : DType::fp32}, sl);
  }
  return out;
}

/**
 * Eight finite [P, 1] positions (>= F: not found) as [P, 8] indices: sum of position_k * (col == k),
 * plus 2^33 where not found, which the conversion saturates to all ones (fused arithmetic).
 */
nl::tile index_columns(const search& r, const std::vector<nl::tile>& firsts, DType dtype) {
  const std::int64_t p = shape_of(r.t, firsts[0].id())[0];
  const nl::tile col = positions(p, 8, r.sl);
  std::optional<nl::tile> out;
  for (std::int64_t k = 0; k < 8; ++k) {
    const nl::tile one = r.v(nl::equal(col, static_cast<double>(k), r.fp32(), r.sl));
    const nl::tile term = r.v(nl::multiply(one, firsts[static_cast<std::size_t>(k)], r.fp32(), r.sl));
    out = out ? r.v(nl::add(*out, term, r.fp32(), r.sl)) : term;
  }
  const nl::tile absent = r.v(nl::greater_equal(*out, static_cast<double>(r.f), r.fp32(), r.sl));
  const nl::tile all_ones = r.v(nl::multiply(absent, 8589934592.0, r.fp32(), r.sl));
  return r.v(nl::add(*out, all_ones, {.dtype = dtype}, r.sl));
}

}  // namespace

nl::tile max8(const nl::operand& src, const nl::op_options& o, std::source_location sl) {
  Trace& t = Trace::current("max8", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  const int s = searched_tile(t, src, "isa::max8", "src", loc);
  if (!o.mask.empty()) {
    t.fail("err_unsupported_expression_in_mask", loc, "isa::max8 takes no mask: it reads every element of src");
  }
  const auto [p, f] = std::pair{shape_of(t, s)[0], shape_of(t, s)[1]};
  nl::tile x = part(t, nl::copy(nl::tile(s), {.dtype = DType::fp32}, sl), ir::Engine::vector, false);
  const search r{t, sl, positions(p, f, sl), f};
  std::vector<nl::tile> top;
  for (int k = 0; k < 8; ++k) {
    const nl::tile m = r.v(nl::max(x, 1, {.dtype = DType::fp32, .keepdims = true}, sl));
    top.push_back(m);
    // Only one occurrence leaves per round, so a repeated value is reported as often as it occurs.
    if (k < 7) x = r.without(x, r.first_of(x, m, std::nullopt));
  }
  return descending_columns(r, top, o.dtype.value_or(dtype_of(t, s)));
}

nl::tile nc_find_index8(const nl::operand& data, const nl::operand& vals, const nl::op_options& o,
                        std::source_location sl) {
  Trace& t = Trace::current("nc_find_index8", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* name = "isa::nc_find_index8";
  const int d = searched_tile(t, data, name, "data", loc);
  const auto [p, f] = std::pair{shape_of(t, d)[0], shape_of(t, d)[1]};
  const int v = vals_tile(t, vals, p, name, loc);
  const DType out = o.dtype.value_or(DType::uint32);
  if (out != DType::uint32 && out != DType::uint16) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("{}: the indices are uint32 or uint16, got dtype {}", name, dtype_name(out)));
  }
  const nl::tile x = part(t, nl::copy(nl::tile(d), {.dtype = DType::fp32}, sl), ir::Engine::vector, false);
  const search r{t, sl, positions(p, f, sl), f};
  // The mask applies to data only: a masked-off position starts out taken, so it never matches.
  std::optional<nl::tile> taken;
  if (!o.mask.empty()) {
    const nl::tile none = r.v(nl::multiply(r.pos, 0.0, r.fp32(), sl));
    taken = affine_select(o.mask, none, 1.0, {.dtype = DType::fp32}, sl);
  }
  const nl::tile vt(v);
  std::vector<nl::tile> firsts;
  for (std::int64_t j = 0; j < 8; ++j) {
    firsts.push_back(r.first_of(x, vt[nl::_, nl::ds(j, 1)], taken));
    // A found position is used up: a later equal value takes the next occurrence (ascending).
    if (j < 7) taken = r.taken_after(taken, firsts.back());
  }
  return index_columns(r, firsts, out);
}

nl::tile nc_match_replace8(const nl::operand& data, const nl::operand& vals, double imm,
                           const match_replace8_options& o, std::source_location sl) {
  Trace& t = Trace::current("nc_match_replace8", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* name = "isa::nc_match_replace8";
  const int d = searched_tile(t, data, name, "data", loc);
  const auto [p, f] = std::pair{shape_of(t, d)[0], shape_of(t, d)[1]};
  const int v = vals_tile(t, vals, p, name, loc);
  const DType out = o.dtype.value_or(dtype_of(t, d));
  const nl::tile x = part(t, nl::copy(nl::tile(d), {.dtype = DType::fp32}, sl), ir::Engine::vector, false);
  const search r{t, sl, positions(p, f, sl), f};
  const nl::tile vt(v);
  std::vector<nl::tile> firsts(8, nl::tile(-1));
  std::optional<nl::tile> taken;
  // vals are taken from the last to the first, so duplicates pair with positions in descending columns.
  for (std::int64_t j = 7; j >= 0; --j) {
    const nl::tile first = r.first_of(x, vt[nl::_, nl::ds(j, 1)], taken);
    firsts[static_cast<std::size_t>(j)] = first;
    taken = r.taken_after(taken, first);
  }
  if (o.dst_idx) {
    const ir::TensorDecl& decl = t.ir().tensors.at(static_cast<std::size_t>(o.dst_idx->tensor()));
    if (decl.dtype != DType::uint32 && decl.dtype != DType::uint16) {
      t.fail("err_unsupported_dtype", loc,
             fmt::format("{}: dst_idx {} is {}; the indices are uint32 or uint16", name, decl.name,
                         dtype_name(decl.dtype)));
    }
    nl::access dst = *o.dst_idx;
    dst = index_columns(r, firsts, decl.dtype);
  }
  // (imm replaces, it does not combine: a select, the one step that is not fused arithmetic.)
  return nl::where(*taken, imm, nl::tile(d), {.dtype = out}, sl);
}

namespace {

/** op1 of tensor_scalar_cumulative: its register's reset value, or nothing if op1 does not accumulate. */
std::optional<double> reset_value(ir::BinaryKind k) {
  switch (k) {
    case ir::BinaryKind::add:
    case ir::BinaryKind::subtract: return 0.0;
    case ir::BinaryKind::multiply: return 1.0;
    case ir::BinaryKind::maximum: return -std::numeric_limits<double>::infinity();
    case ir::BinaryKind::minimum: return std::numeric_limits<double>::infinity();
    default: return std::nullopt;
  }
}

bool is_32bit_integer(DType d) { return d == DType::int32 || d == DType::uint32; }

}  // namespace

nl::tile tensor_scalar_cumulative(const nl::operand& src, const nl::binary_fn& op0, const nl::binary_fn& op1,
                                  const nl::operand& imm0, const nl::operand& imm1, const cumulative_options& o,
                                  std::source_location sl) {
  Trace& t = Trace::current("tensor_scalar_cumulative", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* name = "isa::tensor_scalar_cumulative";
  const int s = tile_2d(t, src, name, "src", loc);
  const DType out = o.dtype.value_or(dtype_of(t, s));
  for (const DType d : {dtype_of(t, s), out}) {
    if (is_32bit_integer(d)) {
      t.fail("err_unsupported_dtype", loc,
             fmt::format("{}: {} input or output is not supported (the Vector engine accumulates bf16, fp16, fp32, "
                         "fp8 and 8- or 16-bit integers)", name, dtype_name(d)));
    }
  }
  const std::optional<double> reset = reset_value(op1.kind);
  if (!reset) {
    t.fail("err_unsupported_reduction_op", loc,
           fmt::format("{}: op1 {} does not accumulate; it must be add, subtract, multiply, maximum or minimum", name,
                       ir::binary_name(op1.kind)));
  }
  nl::operand initial = *reset;
  if (o.reduce_cmd == reduce_cmd::load_reduce) {
    initial = imm1;
  } else if (o.reduce_cmd != reduce_cmd::reset_reduce) {
    t.fail("err_unsupported_reduce_cmd", loc,
           fmt::format("{} with reduce_cmd {}: the register starts at op1's identity (reset_reduce) or at imm1 "
                       "(load_reduce); state kept across instructions is not supported",
                       name, o.reduce_cmd == reduce_cmd::reduce ? "reduce" : "idle"));
  }
  const nl::tile data(s);
  const nl::tile y = o.reverse0 ? op0(imm0, data, {.dtype = DType::fp32}, sl) : op0(data, imm0, {.dtype = DType::fp32}, sl);
  part(t, y, ir::Engine::vector);  // the scan below is the instruction; op0 is applied as it reads src
  const Shape& shape = shape_of(t, y.id());
  // reg = op1(y[i], reg) is the scan's op0 with the carry; its op1 subtracts +0, which leaves every value (-0 too).
  const nl::mgrid_pair g = nl::mgrid(shape[0], shape[1], sl);
  const nl::tile zeros = iota(0 * g.x + 0 * g.p, DType::fp32, {}, sl);
  const nl::tile reg = tensor_tensor_scan(y, zeros, initial, op1, nl::subtract, {.dtype = DType::fp32}, sl);
  if (out == DType::fp32) return reg;
  return part(t, nl::copy(reg, {.dtype = out}, sl), ir::Engine::vector);
}

nl::tile tensor_partition_reduce(const nl::binary_fn& op, const nl::operand& data, const nl::op_options& o,
                                 std::source_location sl) {
  Trace& t = Trace::current("tensor_partition_reduce", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* name = "isa::tensor_partition_reduce";
  const int d = tile_2d(t, data, name, "data", loc);
  if (op.kind != ir::BinaryKind::add && op.kind != ir::BinaryKind::average && op.kind != ir::BinaryKind::maximum &&
      op.kind != ir::BinaryKind::minimum) {
    t.fail("err_unsupported_reduction_op", loc,
           fmt::format("{} with op {}; supported are add, average, maximum, minimum", name, ir::binary_name(op.kind)));
  }
  if (!o.mask.empty()) {
    t.fail("err_unsupported_expression_in_mask", loc,
           fmt::format("{} takes no mask: the reduction would read masked-off elements", name));
  }
  const ir::ReduceKind kind = op.kind == ir::BinaryKind::add       ? ir::ReduceKind::sum
                              : op.kind == ir::BinaryKind::average ? ir::ReduceKind::mean
                              : op.kind == ir::BinaryKind::maximum ? ir::ReduceKind::max
                                                                   : ir::ReduceKind::min;
  const auto [p, f] = std::pair{shape_of(t, d)[0], shape_of(t, d)[1]};
  const DType out = o.dtype.value_or(dtype_of(t, d));
  const nl::tile x = part(t, nl::copy(nl::tile(d), {.dtype = DType::fp32}, sl), ir::Engine::gpsimd);
  // Partitions become the free axis of a transpose (at most 128 columns at a time), reduce in
  // fp32 in partition order, and come back as one row.
  std::vector<nl::tile> rows;
  for (std::int64_t c = 0; c < f; c += 128) {
    const std::int64_t w = std::min<std::int64_t>(128, f - c);
    const nl::tile across = nl::transpose(x[nl::_, nl::ds(c, w)], {.dtype = DType::fp32}, sl);
    ir::ReduceOp r{-1, kind, across.id(), {1}, true, {}, loc, ir::Engine::gpsimd, false};
    r.result = t.add_tile({w, 1}, DType::fp32);
    const int reduced = r.result;
    t.emit(std::move(r));
    rows.push_back(nl::transpose(nl::tile(reduced), {.dtype = DType::fp32}, sl));
  }
  if (rows.size() == 1) return part(t, nl::copy(rows[0], {.dtype = out}, sl), ir::Engine::gpsimd);
  const nl::tensor row = nl::ndarray({1, f}, DType::fp32, nl::sbuf, "", sl);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto c = static_cast<std::int64_t>(i) * 128;
    row[nl::ds(0, 1), nl::ds(c, shape_of(t, rows[i].id())[1])] = rows[i];
  }
  return nl::copy(row, {.dtype = out}, sl);
}

nl::tile bn_stats(const nl::operand& data, const nl::op_options& o, std::source_location sl) {
  Trace& t = Trace::current("bn_stats", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* name = "isa::bn_stats";
  const int d = tile_2d(t, data, name, "data", loc);
  const auto [p, f] = std::pair{shape_of(t, d)[0], shape_of(t, d)[1]};
  if (f > nl::tile_size::bn_stats_fmax) {
    t.fail("err_size_of_dimension_exceed_arch_limit", loc,
           fmt::format("{}: data has {} elements per partition; at most {} (nl::tile_size::bn_stats_fmax): run one "
                       "bn_stats per chunk and combine them with bn_aggr", name, f, nl::tile_size::bn_stats_fmax));
  }
  if (!o.mask.empty()) {
    t.fail("err_unsupported_expression_in_mask", loc, fmt::format("{} takes no mask: it reads every element", name));
  }
  const nl::tile x = part(t, nl::copy(nl::tile(d), {.dtype = DType::fp32}, sl), ir::Engine::vector, false);
  const nl::tile pos = positions(p, f, sl);
  const nl::tile odd = part(t, nl::fmod(pos, 2.0, {.dtype = DType::fp32}, sl), ir::Engine::vector);
  std::vector<nl::tile> cols;
  // Even elements are f = 0, 2, ...; odd ones f = 1, 3, ...: two-pass mean and sum of squared deviations.
  for (const bool want_odd : {false, true}) {
    const std::int64_t count = want_odd ? f / 2 : (f + 1) / 2;
    const nl::tile in = part(t, nl::equal(odd, want_odd ? 1.0 : 0.0, {.dtype = DType::fp32}, sl), ir::Engine::vector);
    if (count == 0) {  // one element: no odd ones; count, mean and variance * count are 0
      const nl::tile zero = iota(0 * nl::mgrid(p, 1, sl).p, DType::fp32, {}, sl);
      cols.insert(cols.end(), {zero, zero, zero});
      continue;
    }
    const nl::tile picked = nl::where(in, x, 0.0, {.dtype = DType::fp32}, sl);
    const nl::tile sum = part(t, nl::sum(picked, 1, {.dtype = DType::fp32, .keepdims = true}, sl), ir::Engine::vector);
    const nl::tile mean = part(t, nl::divide(sum, static_cast<double>(count), {.dtype = DType::fp32}, sl), ir::Engine::vector);
    const nl::tile dev = part(t, nl::subtract(x, mean, {.dtype = DType::fp32}, sl), ir::Engine::vector);
    const nl::tile sq = part(t, nl::multiply(dev, dev, {.dtype = DType::fp32}, sl), ir::Engine::vector);
    const nl::tile m2 = part(t, nl::sum(nl::where(in, sq, 0.0, {.dtype = DType::fp32}, sl), 1,
                                        {.dtype = DType::fp32, .keepdims = true}, sl),
                             ir::Engine::vector);
    const nl::tile cnt = iota(0 * nl::mgrid(p, 1, sl).p + count, DType::fp32, {}, sl);
    cols.insert(cols.end(), {cnt, mean, m2});
  }
  return columns(t, cols, o.dtype.value_or(dtype_of(t, d)), sl);
}

nl::tile bn_aggr(const nl::operand& data, const nl::op_options& o, std::source_location sl) {
  Trace& t = Trace::current("bn_aggr", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* name = "isa::bn_aggr";
  const int d = tile_2d(t, data, name, "data", loc);
  const auto [p, f] = std::pair{shape_of(t, d)[0], shape_of(t, d)[1]};
  if (f % 3 != 0) {
    t.fail("err_free_dim_mismatch", loc,
           fmt::format("{}: data has {} elements per partition; bn_stats results are (count, mean, variance * count) "
                       "triples, so it must be a multiple of 3", name, f));
  }
  if (!o.mask.empty()) {
    t.fail("err_unsupported_expression_in_mask", loc, fmt::format("{} takes no mask: it reads every element", name));
  }
  const nl::tile x = part(t, nl::copy(nl::tile(d), {.dtype = DType::fp32}, sl), ir::Engine::vector, false);
  const auto col = [&](std::int64_t c) { return x[nl::_, nl::ds(c, 1)]; };
  const auto fp32 = nl::op_options{.dtype = DType::fp32};
  const auto v = [&](const nl::tile& r) { return part(t, r, ir::Engine::vector); };
  // Chan's combination: n = sum n_i, mean = sum n_i mean_i / n, M2 = sum M2_i + n_i (mean_i - mean)^2.
  nl::tile n = col(0), weighted = v(nl::multiply(col(0), col(1), fp32, sl));
  for (std::int64_t i = 3; i < f; i += 3) {
    n = v(nl::add(n, col(i), fp32, sl));
    weighted = v(nl::add(weighted, v(nl::multiply(col(i), col(i + 1), fp32, sl)), fp32, sl));
  }
  const nl::tile mean = v(nl::divide(weighted, n, fp32, sl));
  std::optional<nl::tile> m2;
  for (std::int64_t i = 0; i < f; i += 3) {
    const nl::tile dm = v(nl::subtract(col(i + 1), mean, fp32, sl));
    const nl::tile term = v(nl::add(col(i + 2), v(nl::multiply(col(i), v(nl::multiply(dm, dm, fp32, sl)), fp32, sl)), fp32, sl));
    m2 = i == 0 ? term : v(nl::add(*m2, term, fp32, sl));
  }
  const nl::tile var = v(nl::divide(*m2, n, fp32, sl));
  return columns(t, {mean, var}, o.dtype.value_or(dtype_of(t, d)), sl);
}

namespace {

/** a and b hold the same number of partitions and of elements per partition. */
void same_extent(Trace& t, int a, const char* a_role, int b, const char* b_role, const char* op, const SourceLoc& loc) {
  const Shape& sa = shape_of(t, a);
  const Shape& sb = shape_of(t, b);
  if (sa[0] != sb[0]) {
    t.fail("err_num_partition_mismatch", loc,
           fmt::format("{}: {} {} has {} partitions; {} {} has {}", op, a_role, shape_str(sa), sa[0], b_role,
                       shape_str(sb), sb[0]));
  }
  if (shape_elements(sa) != shape_elements(sb)) {
    t.fail("err_free_dim_mismatch", loc,
           fmt::format("{}: {} {} and {} {} have different numbers of elements per partition", op, a_role,
                       shape_str(sa), b_role, shape_str(sb)));
  }
}

bool is_unsigned(DType d) { return d == DType::uint8 || d == DType::uint16 || d == DType::uint32; }

/** The row maximum of an fp32 select into reduce_res (reset_reduce only: no register state across instructions). */
void max_into(Trace& t, const nl::tile& fp32, const std::optional<nl::access>& res, isa::reduce_cmd cmd,
              const char* op, const SourceLoc& loc, const std::source_location& sl) {
  if (!res) {
    if (cmd != reduce_cmd::idle && cmd != reduce_cmd::reset_reduce) {
      t.fail("err_invalid_reduce_res", loc,
             fmt::format("{}: a reduce_cmd that accumulates without reduce_res: the maximum would never be read", op));
    }
    return;
  }
  if (cmd != reduce_cmd::reset_reduce) {
    t.fail("err_unsupported_reduce_cmd", loc,
           fmt::format("{} with reduce_res: only reduce_cmd reset_reduce (registers reset, this instruction's maximum "
                       "written out) is supported; state kept across instructions is not",
                       op));
  }
  const ir::TensorDecl& decl = t.ir().tensors.at(static_cast<std::size_t>(res->tensor()));
  if (ir::is_hbm(decl.memory)) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("{}: reduce_res is tensor {} in {}; it must be an SBUF or PSUM tile", op, decl.name,
                       ir::memory_name(decl.memory)));
  }
  nl::access w = *res;
  w = part(t, nl::max(fp32, 1, {.dtype = DType::fp32, .keepdims = true}, sl), ir::Engine::vector);
}

}  // namespace

void tensor_copy_predicated(const nl::access& dst, const nl::operand& src, const nl::operand& predicate,
                            bool reverse_pred, std::source_location sl) {
  Trace& t = Trace::current("tensor_copy_predicated", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* name = "isa::tensor_copy_predicated";
  const ir::TensorDecl& decl = t.ir().tensors.at(static_cast<std::size_t>(dst.tensor()));
  if (ir::is_hbm(decl.memory)) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("{}: dst is tensor {} in {}; it must be an SBUF or PSUM window", name, decl.name,
                       ir::memory_name(decl.memory)));
  }
  if (predicate.is_scalar()) {
    t.fail("err_scalar_only_operation", loc, fmt::format("{}: predicate is a scalar; it must be a tile", name));
  }
  // What dst holds now: kept where the predicate is false.
  const nl::tile current(nl::operand(dst, dst.loc()).tile_id);
  same_extent(t, predicate.tile_id, "predicate", current.id(), "dst", name, loc);
  const DType pd = dtype_of(t, predicate.tile_id);
  if (!is_unsigned(pd)) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("{}: predicate is {}; it must be uint8, uint16 or uint32", name, dtype_name(pd)));
  }
  if (!src.is_scalar()) {
    same_extent(t, src.tile_id, "src", current.id(), "dst", name, loc);
    if (dtype_of(t, src.tile_id) != decl.dtype) {
      t.fail("err_unsupported_dtype", loc,
             fmt::format("{}: src is {} and dst {}; they must have the same dtype", name,
                         dtype_name(dtype_of(t, src.tile_id)), dtype_name(decl.dtype)));
    }
    if (tile_info(t, src.tile_id).memory == ir::Memory::psum &&
        tile_info(t, predicate.tile_id).memory == ir::Memory::psum) {
      t.fail("err_unsupported_memory", loc,
             fmt::format("{}: src and predicate are both in PSUM; at most one of them may be", name));
    }
  }
  const nl::tile pred(predicate.tile_id);
  const nl::tile chosen = reverse_pred ? nl::where(pred, current, src, {.dtype = decl.dtype}, sl)
                                       : nl::where(pred, src, current, {.dtype = decl.dtype}, sl);
  nl::access w = dst;
  w = chosen;
}

nl::tile select_reduce(const nl::operand& predicate, const nl::operand& on_true, const nl::operand& on_false,
                       const select_reduce_options& o, std::source_location sl) {
  Trace& t = Trace::current("select_reduce", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* name = "isa::select_reduce";
  for (const auto& [x, role] : {std::pair{&predicate, "predicate"}, std::pair{&on_true, "on_true"}}) {
    if (x->is_scalar()) t.fail("err_scalar_only_operation", loc, fmt::format("{}: {} is a scalar; it must be a tile", name, role));
  }
  same_extent(t, predicate.tile_id, "predicate", on_true.tile_id, "on_true", name, loc);
  const DType pd = dtype_of(t, predicate.tile_id);
  if (pd != DType::int8 && pd != DType::uint8 && pd != DType::int16 && pd != DType::uint16) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("{}: predicate is {}; it must be int8, uint8, int16 or uint16", name, dtype_name(pd)));
  }
  const DType td = dtype_of(t, on_true.tile_id);
  if (is_32bit_integer(td)) {
    t.fail("err_unsupported_dtype", loc, fmt::format("{}: on_true is {}; int32 and uint32 are not supported", name, dtype_name(td)));
  }
  if (!on_false.is_scalar()) {
    const Shape& fs = shape_of(t, on_false.tile_id);
    const std::int64_t p = shape_of(t, on_true.tile_id)[0];
    if (fs[0] != p || shape_elements(fs) != p) {
      t.fail("err_free_dim_mismatch", loc,
             fmt::format("{}: on_false is a scalar or a [{}, 1] tile, got {}", name, p, shape_str(fs)));
    }
  }
  if (o.reduce_op && o.reduce_op->kind != ir::BinaryKind::maximum) {
    t.fail("err_unsupported_reduction_op", loc,
           fmt::format("{} reduces with nl::maximum only; got reduce_op {}", name, ir::binary_name(o.reduce_op->kind)));
  }
  const nl::tile pred(predicate.tile_id);
  const nl::tile fp = o.reverse_pred ? nl::where(pred, on_false, on_true, {.dtype = DType::fp32}, sl)
                                     : nl::where(pred, on_true, on_false, {.dtype = DType::fp32}, sl);
  max_into(t, fp, o.reduce_res, o.reduce_cmd, name, loc, sl);
  const DType out = o.dtype.value_or(td);
  if (out == DType::fp32) return fp;
  return part(t, nl::copy(fp, {.dtype = out}, sl), ir::Engine::vector);
}

nl::tile range_select(const nl::operand& on_true, const nl::binary_fn& comp_op0, const nl::binary_fn& comp_op1,
                      const nl::operand& bound0, const nl::operand& bound1, const range_select_options& o,
                      std::source_location sl) {
  Trace& t = Trace::current("range_select", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* name = "isa::range_select";
  const int x = tile_2d(t, on_true, name, "on_true", loc);
  const auto [p, f] = std::pair{shape_of(t, x)[0], shape_of(t, x)[1]};
  if (!is_float(dtype_of(t, x))) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("{}: on_true is {}; it must be a floating-point tile", name, dtype_name(dtype_of(t, x))));
  }
  for (const nl::binary_fn* c : {&comp_op0, &comp_op1}) {
    using K = ir::BinaryKind;
    if (c->kind != K::equal && c->kind != K::less && c->kind != K::less_equal && c->kind != K::greater &&
        c->kind != K::greater_equal) {
      t.fail("err_unsupported_comparison_op", loc,
             fmt::format("{}: comparison {}; it must be equal, less, less_equal, greater or greater_equal", name,
                         ir::binary_name(c->kind)));
    }
  }
  for (const auto& [b, role] : {std::pair{&bound0, "bound0"}, std::pair{&bound1, "bound1"}}) {
    if (b->is_scalar()) t.fail("err_scalar_only_operation", loc, fmt::format("{}: {} is a scalar; it must be a [{}, 1] fp32 tile", name, role, p));
    const Shape& bs = shape_of(t, b->tile_id);
    if (bs[0] != p || shape_elements(bs) != p) {
      t.fail("err_free_dim_mismatch", loc,
             fmt::format("{}: {} must be a [{}, 1] tile (one element per partition), got {}", name, role, p, shape_str(bs)));
    }
    if (dtype_of(t, b->tile_id) != DType::fp32) {
      t.fail("err_unsupported_dtype", loc,
             fmt::format("{}: {} is {}; the bounds are fp32", name, role, dtype_name(dtype_of(t, b->tile_id))));
    }
  }
  // The free index plus range_start, compared in fp32 (exact below 2^24).
  const nl::mgrid_pair g = nl::mgrid(p, f, sl);
  const nl::tile index = iota(g.x + 0 * g.p + o.range_start, DType::fp32, {}, sl);
  const nl::tile in0 = part(t, comp_op0(index, bound0, {.dtype = DType::fp32}, sl), ir::Engine::vector);
  const nl::tile in1 = part(t, comp_op1(index, bound1, {.dtype = DType::fp32}, sl), ir::Engine::vector);
  const nl::tile in = part(t, nl::multiply(in0, in1, {.dtype = DType::fp32}, sl), ir::Engine::vector);
  const nl::tile fp = nl::where(in, nl::tile(x), o.on_false_value, {.dtype = DType::fp32}, sl);
  max_into(t, fp, o.reduce_res, o.reduce_cmd, name, loc, sl);
  const DType out = o.dtype.value_or(dtype_of(t, x));
  if (out == DType::fp32) return fp;
  return part(t, nl::copy(fp, {.dtype = out}, sl), ir::Engine::vector);
}

}  // namespace nki::isa
