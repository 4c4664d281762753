/**
 * \file DMA instructions and data-dependent moves (nki/dma.h).
 *
 * A DMA instruction is traced as the read of its source (a load, or a view of an on-chip
 * array) and a store into its destination; the store carries ir::DmaInfo, so the cost model
 * prices the pair as one transfer on a DMA queue whatever memories it joins, with the
 * descriptor generation dge_mode names. Gathers and the stream shuffle are ir::GatherOp.
 */
#include <fmt/format.h>

#include <algorithm>

#include "nki/language.h"
#include "nki/trace.h"

namespace nki::isa {

namespace {

const ir::TensorDecl& decl_of(Trace& t, int tensor) { return t.ir().tensors.at(static_cast<std::size_t>(tensor)); }
const char* memory_label(ir::Memory m) { return ir::memory_name(m); }

ir::Engine to_ir(isa::engine e) {
  switch (e) {
    case isa::engine::unknown: return ir::Engine::unknown;
    case isa::engine::tensor: return ir::Engine::tensor;
    case isa::engine::vector: return ir::Engine::vector;
    case isa::engine::scalar: return ir::Engine::scalar;
    case isa::engine::gpsimd: return ir::Engine::gpsimd;
  }
  return ir::Engine::unknown;
}

/** The options' checks NKI makes before any data moves, and their IR form. */
ir::DmaInfo dma_info(Trace& t, const dma_options& o, const char* op, const SourceLoc& loc) {
  if (o.priority && (*o.priority < 0 || *o.priority > 3)) {
    t.fail("err_invalid_dma_priority", loc, fmt::format("{}: priority {} is not a QoS level 0-3", op, *o.priority));
  }
  if (o.engine != isa::engine::unknown && o.dge_mode != isa::dge_mode::hwdge) {
    t.fail("err_unsupported_engine", loc,
           fmt::format("{}: engine= picks the sequencer of a hardware DGE; it needs dge_mode=hwdge", op));
  }
  if (o.engine != isa::engine::unknown && o.engine != isa::engine::scalar) {
    t.fail("err_unsupported_engine", loc,
           fmt::format("{}: a hardware DGE is started by the Scalar or the Sync engine (unknown), not {}", op,
                       ir::engine_name(to_ir(o.engine))));
  }
  ir::DmaInfo d;
  d.issued = true;
  d.dge = static_cast<ir::DgeMode>(o.dge_mode);
  d.trigger = to_ir(o.engine);
  d.priority = o.priority.value_or(-1);
  return d;
}

/** A DMA endpoint: HBM or SBUF (PSUM is not reachable by DMA). */
void check_dma_memory(Trace& t, const ir::TensorDecl& d, const char* op, const char* role, const SourceLoc& loc) {
  if (d.memory == ir::Memory::psum) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("{}: {} tensor {} is in PSUM; DMA moves HBM and SBUF only", op, role, d.name));
  }
}

/** Reads src (HBM by a load, an on-chip window by a view) as a tile; the read is part of the DMA. */
int read_source(Trace& t, const nl::access& src, const std::source_location& sl) {
  const ir::TensorDecl& d = decl_of(t, src.tensor());
  const std::size_t before = t.ir().body.size();
  const int tile = ir::is_hbm(d.memory) ? nl::load(src, {}, sl).id() : nl::operand(src, sl).tile_id;
  for (std::size_t i = before; i < t.ir().body.size(); ++i)
    if (auto* l = std::get_if<ir::LoadOp>(&t.ir().body[i])) l->dma.part = true;
  return tile;
}

/** Writes `value` into dst as the DMA's transfer (the store carries `d`). */
void write_dest(Trace& t, const nl::access& dst, int value, const ir::DmaInfo& d, const std::source_location& sl) {
  const ir::TensorDecl& decl = decl_of(t, dst.tensor());
  if (ir::is_hbm(decl.memory)) {
    nl::store(dst, nl::tile(value), {}, sl);
  } else {
    nl::access w = dst;
    w = nl::tile(value);
  }
  ir::Op& last = t.ir().body.back();
  if (auto* s = std::get_if<ir::StoreOp>(&last)) s->dma = d;
}

/** Converts a source tile for a DMA into dst_dtype through fp32, as the DMA engines do. */
int convert_through_fp32(Trace& t, int tile, DType dst_dtype, const std::source_location& sl) {
  const DType from = tile_info(t, tile).dtype;
  if (from == dst_dtype) return tile;
  // src -> fp32 (the engines' arithmetic type); the store rounds fp32 -> dst. Part of the DMA.
  nl::tile f = nl::copy(nl::tile(tile), {.dtype = DType::fp32}, sl);
  std::visit([](auto& o) {
    if constexpr (requires { o.fused; }) o.fused = true;
  }, t.ir().body.back());
  return f.id();
}

void dma_copy_tile(Trace& t, const nl::access& dst, int src_tile, const ir::DmaInfo& d, const char* op,
                   const SourceLoc& loc, const std::source_location& sl) {
  const ir::TensorDecl& dd = decl_of(t, dst.tensor());
  check_dma_memory(t, dd, op, "the destination", loc);
  if (dd.memory == ir::Memory::constant_hbm) {
    t.fail("err_unsupported_memory", loc, fmt::format("{}: tensor {} is a shared constant: read-only", op, dd.name));
  }
  const int v = convert_through_fp32(t, src_tile, dd.dtype, sl);
  write_dest(t, dst, v, d, sl);
}

}  // namespace

void dma_copy(const nl::access& dst, const nl::access& src, const dma_options& o, std::source_location sl) {
  Trace& t = Trace::current("isa.dma_copy", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  const ir::DmaInfo d = dma_info(t, o, "isa::dma_copy", loc);
  check_dma_memory(t, decl_of(t, src.tensor()), "isa::dma_copy", "the source", loc);
  check_dma_memory(t, decl_of(t, dst.tensor()), "isa::dma_copy", "the destination", loc);
  const int v = read_source(t, src, sl);
  dma_copy_tile(t, dst, v, d, "isa::dma_copy", loc, sl);
}

void dma_copy(const nl::access& dst, const nl::tile& src, const dma_options& o, std::source_location sl) {
  Trace& t = Trace::current("isa.dma_copy", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  const ir::DmaInfo d = dma_info(t, o, "isa::dma_copy", loc);
  if (tile_info(t, src.id()).memory == ir::Memory::psum) {
    t.fail("err_unsupported_memory", loc, "isa::dma_copy: the source tile is in PSUM; DMA moves HBM and SBUF only");
  }
  dma_copy_tile(t, dst, src.id(), d, "isa::dma_copy", loc, sl);
}

void dma_copy(const nl::access& dst, const indirect_access& src, const dma_options& o, std::source_location sl) {
  Trace& t = Trace::current("isa.dma_copy", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* op = "isa::dma_copy";
  ir::DmaInfo d = dma_info(t, o, op, loc);
  // Dynamic rows need descriptors written as the kernel runs: software DGE (NKI's only mode for vector_offset).
  if (d.dge == ir::DgeMode::unknown) d.dge = ir::DgeMode::swdge;
  if (d.dge != ir::DgeMode::swdge) {
    t.fail("err_unsupported_dge_mode", loc,
           fmt::format("{}: an indirect source needs dge_mode swdge (or unknown); got {}", op, ir::dge_mode_name(d.dge)));
  }
  const ir::TensorDecl& sd = decl_of(t, src.window.tensor());
  if (!ir::is_hbm(sd.memory)) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("{}: the indirectly indexed tensor {} is in {}; it must be in HBM", op, sd.name, memory_label(sd.memory)));
  }
  if (src.dim != 0) {
    t.fail("err_unsupported_indirect_dim", loc,
           fmt::format("{}: indirect_dim {}; a vector offset indexes dimension 0, one row per partition", op, src.dim));
  }
  const ir::TileInfo ii = tile_info(t, src.index.id());
  if (!is_integer(ii.dtype) || ii.dtype == DType::boolean) {
    t.fail("err_unsupported_dtype", loc, fmt::format("{}: the index tile is {}; it must hold integers", op, dtype_name(ii.dtype)));
  }
  if (ii.memory != ir::Memory::sbuf) {
    t.fail("err_unsupported_memory", loc, fmt::format("{}: the index tile is in {}; it must be in SBUF", op, memory_label(ii.memory)));
  }
  check_dma_memory(t, decl_of(t, dst.tensor()), op, "the destination", loc);
  const int loaded = read_source(t, src.window, sl);
  auto* l = std::get_if<ir::LoadOp>(&t.ir().body.back());
  if (l == nullptr || l->result != loaded) throw InternalError("indirect dma_copy: the source read is not one load");
  const Shape shape = l->src.shape;
  if (ii.shape.size() != 2 || ii.shape[1] != 1 || ii.shape[0] != shape[0]) {
    t.fail("err_invalid_shape", loc,
           fmt::format("{}: the index tile is {}; a vector offset is one row index per partition, [{}, 1]", op,
                       shape_str(ii.shape), shape[0]));
  }
  // The window's own index on the row dimension keeps its start (program ids, loops,
  // constants); its walk along the tile's axes is replaced by the index tile's value.
  ir::IndexExpr& row = l->src.indices[0];
  std::erase_if(row.terms, [](const ir::Term& term) { return term.sym.kind == ir::Sym::Kind::axis; });
  row.shape.clear();
  const std::int64_t start = row.constant;
  l->index_tile = src.index.id();
  l->index_dim = 0;
  l->oob_error = o.oob_mode == isa::oob_mode::error;
  l->dma.transpose = false;
  int value = loaded;
  if (o.oob_mode == isa::oob_mode::skip) {
    // A skipped row leaves dst's partition as it was: select the old contents there. All part
    // of the one DMA (fused). The row test is exact for indices below 2^24 and monotone past it.
    const std::int64_t rows = sd.shape[0];
    auto fuse = [&] {
      std::visit([](auto& x) {
        if constexpr (requires { x.fused; }) x.fused = true;
      }, t.ir().body.back());
    };
    nl::tile lo = nl::greater_equal(src.index, static_cast<double>(-start), {.dtype = DType::uint8}, sl);
    fuse();
    nl::tile hi = nl::less(src.index, static_cast<double>(rows - start), {.dtype = DType::uint8}, sl);
    fuse();
    nl::tile ok = nl::logical_and(lo, hi, {.dtype = DType::uint8}, sl);
    fuse();
    const ir::TensorDecl& dd = decl_of(t, dst.tensor());
    const int old = ir::is_hbm(dd.memory) ? read_source(t, dst, sl) : nl::operand(dst, sl).tile_id;
    nl::tile kept = nl::where(ok, nl::tile(loaded), nl::tile(old), {.dtype = tile_info(t, loaded).dtype}, sl);
    fuse();
    value = kept.id();
  }
  dma_copy_tile(t, dst, value, d, op, loc, sl);
}

namespace {

/** The checks of an indirect destination: a window of an HBM tensor NKI may write, rows by an integer SBUF tile. */
void check_indirect_dst(Trace& t, const indirect_access& dst, const char* op, const SourceLoc& loc) {
  const ir::TensorDecl& dd = decl_of(t, dst.window.tensor());
  if (!ir::is_hbm(dd.memory)) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("{}: the indirectly indexed tensor {} is in {}; it must be in HBM", op, dd.name, memory_label(dd.memory)));
  }
  if (dd.memory == ir::Memory::constant_hbm) {
    t.fail("err_unsupported_memory", loc, fmt::format("{}: tensor {} is a shared constant: read-only", op, dd.name));
  }
  if (dst.dim != 0) {
    t.fail("err_unsupported_indirect_dim", loc,
           fmt::format("{}: indirect_dim {}; a vector offset indexes dimension 0, one row per partition", op, dst.dim));
  }
  const ir::TileInfo ii = tile_info(t, dst.index.id());
  if (!is_integer(ii.dtype) || ii.dtype == DType::boolean) {
    t.fail("err_unsupported_dtype", loc, fmt::format("{}: the index tile is {}; it must hold integers", op, dtype_name(ii.dtype)));
  }
  if (ii.memory != ir::Memory::sbuf) {
    t.fail("err_unsupported_memory", loc, fmt::format("{}: the index tile is in {}; it must be in SBUF", op, memory_label(ii.memory)));
  }
}

/**
 * Stores tile `value` into the indirect window dst: an ordinary store whose row index keeps
 * the window's start and takes each partition's offset from the index tile as it runs.
 */
void store_indirect(Trace& t, const indirect_access& dst, int value, const nl::predicate& mask, const ir::DmaInfo& d,
                    bool oob_error, bool atomic, const char* op, const SourceLoc& loc, const std::source_location& sl) {
  nl::store(dst.window, nl::tile(value), {.mask = mask}, sl);
  auto* s = std::get_if<ir::StoreOp>(&t.ir().body.back());
  if (s == nullptr || s->value != value) throw InternalError("indirect store: the write is not one store");
  const Shape shape = s->dst.shape;
  const ir::TileInfo ii = tile_info(t, dst.index.id());
  if (ii.shape.size() != 2 || ii.shape[1] != 1 || ii.shape[0] != shape[0]) {
    t.fail("err_invalid_shape", loc,
           fmt::format("{}: the index tile is {}; a vector offset is one row index per partition, [{}, 1]", op,
                       shape_str(ii.shape), shape[0]));
  }
  ir::IndexExpr& row = s->dst.indices[0];
  std::erase_if(row.terms, [](const ir::Term& term) { return term.sym.kind == ir::Sym::Kind::axis; });
  row.shape.clear();
  s->index_tile = dst.index.id();
  s->oob_error = oob_error;
  s->atomic = atomic;
  s->dma = d;
}

/** The scatter form of isa::dma_copy, once the source is a tile. */
void scatter_tile(Trace& t, const indirect_access& dst, int src_tile, const dma_options& o, const SourceLoc& loc,
                  const std::source_location& sl) {
  constexpr const char* op = "isa::dma_copy";
  ir::DmaInfo d = dma_info(t, o, op, loc);
  if (d.dge == ir::DgeMode::unknown) d.dge = ir::DgeMode::swdge;
  if (d.dge != ir::DgeMode::swdge) {
    t.fail("err_unsupported_dge_mode", loc,
           fmt::format("{}: an indirect destination needs dge_mode swdge (or unknown); got {}", op, ir::dge_mode_name(d.dge)));
  }
  check_indirect_dst(t, dst, op, loc);
  const int v = convert_through_fp32(t, src_tile, decl_of(t, dst.window.tensor()).dtype, sl);
  store_indirect(t, dst, v, {}, d, o.oob_mode == isa::oob_mode::error, false, op, loc, sl);
}

}  // namespace

void dma_copy(const indirect_access& dst, const nl::access& src, const dma_options& o, std::source_location sl) {
  Trace& t = Trace::current("isa.dma_copy", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  check_dma_memory(t, decl_of(t, src.tensor()), "isa::dma_copy", "the source", loc);
  scatter_tile(t, dst, read_source(t, src, sl), o, loc, sl);
}

void dma_copy(const indirect_access& dst, const nl::tile& src, const dma_options& o, std::source_location sl) {
  Trace& t = Trace::current("isa.dma_copy", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  if (tile_info(t, src.id()).memory == ir::Memory::psum) {
    t.fail("err_unsupported_memory", loc, "isa::dma_copy: the source tile is in PSUM; DMA moves HBM and SBUF only");
  }
  scatter_tile(t, dst, src.id(), o, loc, sl);
}

namespace {
/** nl.atomic_rmw: an indirect store that adds (NKI's original API had only np.add). */
void atomic_rmw_store(const indirect_access& dst, const nl::operand& value, const nl::binary_fn& rmw,
                      const nl::predicate& mask, std::source_location sl) {
  Trace& t = Trace::current("nl.atomic_rmw", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* op = "nl::atomic_rmw";
  if (rmw.kind != ir::BinaryKind::add) {
    t.fail("err_unsupported_atomic_rmw_op", loc,
           fmt::format("{}: op {} is not supported; the DMA engines update atomically with nl::add only", op,
                       ir::binary_name(rmw.kind)));
  }
  if (value.is_scalar()) {
    t.fail("err_scalar_only_operation", loc, fmt::format("{}: value is a scalar; it must be an SBUF tile", op));
  }
  if (tile_info(t, value.tile_id).memory != ir::Memory::sbuf) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("{}: value is in {}; it must be an SBUF tile", op, memory_label(tile_info(t, value.tile_id).memory)));
  }
  check_indirect_dst(t, dst, op, loc);
  ir::DmaInfo d;  // a read and a write of dst by the DMA, descriptors from GpSimd
  d.issued = true;
  d.dge = ir::DgeMode::swdge;
  store_indirect(t, dst, value.tile_id, mask, d, true, true, op, loc, sl);
}
}  // namespace

namespace {

/** Renames the axis symbols of `e`: axis k of the source tile is axis `to[k]` of the permuted one. */
ir::IndexExpr permute_axes(const ir::IndexExpr& e, const std::vector<int>& to, const Shape& permuted) {
  ir::IndexExpr out;
  out.constant = e.constant;
  for (const ir::Term& term : e.terms) {
    ir::Term n = term;
    if (n.sym.kind == ir::Sym::Kind::axis) n.sym.index = to[static_cast<std::size_t>(n.sym.index)];
    out.terms.push_back(n);
  }
  std::sort(out.terms.begin(), out.terms.end(), [](const ir::Term& a, const ir::Term& b) { return a.sym < b.sym; });
  if (!e.shape.empty()) {
    out.shape.assign(permuted.size(), 1);
    for (std::size_t k = 0; k < e.shape.size() && k < to.size(); ++k)
      out.shape[static_cast<std::size_t>(to[k])] = e.shape[k];
  }
  return out;
}

/**
 * Permutes the tile the last LoadOp made (result axis i is its axis axes[i]) by rewriting the
 * load's access: a DMA transpose is an access pattern, no compute. Returns the tile.
 */
int permute_loaded(Trace& t, int tile, const std::vector<int>& axes) {
  auto* l = std::get_if<ir::LoadOp>(&t.ir().body.back());
  if (l == nullptr || l->result != tile) throw InternalError("permute_loaded: the tile is not the last load's");
  const Shape from = l->src.shape;
  std::vector<int> to(axes.size());
  Shape shape(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) {
    to[static_cast<std::size_t>(axes[i])] = static_cast<int>(i);
    shape[i] = from[static_cast<std::size_t>(axes[i])];
  }
  for (ir::IndexExpr& e : l->src.indices) e = permute_axes(e, to, shape);
  l->src.shape = shape;
  l->dma.transpose = true;
  t.ir().tiles.at(static_cast<std::size_t>(tile)).shape = shape;
  return tile;
}

/** The permutation a DMA transpose of a rank-`rank` tile performs (NKI supports one per rank). */
std::vector<int> transpose_axes(Trace& t, std::size_t rank, const std::vector<int>& given, const char* op,
                                const SourceLoc& loc) {
  std::vector<int> only;
  if (rank == 2) only = {1, 0};
  if (rank == 3) only = {2, 1, 0};
  if (rank == 4) only = {3, 1, 2, 0};
  if (only.empty()) {
    t.fail("err_unsupported_tile_rank", loc, fmt::format("{}: the source has {} dimensions; a DMA transpose takes 2, 3 or 4",
                                                        op, rank));
  }
  if (!given.empty() && given != only) {
    t.fail("err_unsupported_transpose_axes", loc,
           fmt::format("{}: axes ({}) are not supported for a {}-D source; the supported axes are ({})", op,
                       fmt::join(given, ", "), rank, fmt::join(only, ", ")));
  }
  return only;
}

}  // namespace

void dma_transpose(const nl::access& dst, const nl::access& src, const std::vector<int>& axes, const dma_options& o,
                   std::source_location sl) {
  Trace& t = Trace::current("isa.dma_transpose", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* op = "isa::dma_transpose";
  const ir::TensorDecl& sd = decl_of(t, src.tensor());
  const ir::TensorDecl& dd = decl_of(t, dst.tensor());
  if (o.dge_mode == isa::dge_mode::swdge || o.dge_mode == isa::dge_mode::none) {
    t.fail("err_unsupported_dge_mode", loc,
           fmt::format("{}: dge_mode {} is not supported for a direct transpose; use unknown or hwdge", op,
                       ir::dge_mode_name(static_cast<ir::DgeMode>(o.dge_mode))));
  }
  if (o.oob_mode == isa::oob_mode::skip) {
    t.fail("err_unsupported_oob_mode", loc, fmt::format("{}: oob_mode.skip needs an indirect source; this one is affine", op));
  }
  ir::DmaInfo d = dma_info(t, o, op, loc);
  d.transpose = true;
  check_dma_memory(t, sd, op, "the source", loc);
  if (dd.memory != ir::Memory::sbuf) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("{}: the destination tensor {} is in {}; a DMA transpose writes SBUF", op, dd.name, memory_label(dd.memory)));
  }
  if (sd.dtype != dd.dtype) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("{}: source dtype {} and destination dtype {} differ; a DMA transpose does not convert", op,
                       dtype_name(sd.dtype), dtype_name(dd.dtype)));
  }
  // Read the source, then permute the read's access pattern.
  const std::size_t before = t.ir().body.size();
  const int raw = read_source(t, src, sl);
  if (t.ir().body.size() != before + 1) throw InternalError("dma_transpose: the source read is not one load");
  const Shape& from = tile_info(t, raw).shape;
  const std::vector<int> perm = transpose_axes(t, from.size(), axes, op, loc);
  if (o.dge_mode == isa::dge_mode::hwdge) {
    if (dtype_bytes(sd.dtype) != 2) {
      t.fail("err_unsupported_dtype", loc,
             fmt::format("{}: a hardware DGE transpose moves 2-byte elements; the source is {}", op, dtype_name(sd.dtype)));
    }
    const bool first_ok = from.size() == 2 ? from[0] == 16
                                           : (from[0] == 1 || from[0] == 2 || from[0] == 4 || from[0] == 8 || from[0] == 16) &&
                                                 (from[0] * from[from.size() - 2]) % 16 == 0;
    if (!first_ok || from.back() > 128) {
      t.fail("err_invalid_shape", loc,
             fmt::format("{}: a hardware DGE transpose of source shape {} needs {} and a last dimension of at most 128",
                         op, shape_str(from),
                         from.size() == 2 ? "16 rows" : "a first dimension in {1, 2, 4, 8, 16} with first x second-to-last a multiple of 16"));
    }
  }
  const int v = permute_loaded(t, raw, perm);
  if (tile_info(t, v).shape[0] > tile_limits::pmax) {
    t.fail("err_num_partition_exceed_arch_limit", loc,
           fmt::format("{}: the transposed tile {} has {} partitions; at most {}", op, shape_str(tile_info(t, v).shape),
                       tile_info(t, v).shape[0], tile_limits::pmax));
  }
  write_dest(t, dst, v, d, sl);
}

void dma_compute(const nl::access& dst, const std::vector<nl::access>& srcs, const nl::binary_fn& reduce_op,
                 const dma_compute_options& o, std::source_location sl) {
  Trace& t = Trace::current("isa.dma_compute", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* op = "isa::dma_compute";
  if (reduce_op.kind != ir::BinaryKind::add) {
    t.fail("err_unsupported_reduction_op", loc,
           fmt::format("{}: reduce_op {} is not supported; the DMA engines reduce with nl::add only", op,
                       ir::binary_name(reduce_op.kind)));
  }
  if (srcs.empty() || srcs.size() > 16) {
    t.fail("err_invalid_shape", loc, fmt::format("{}: {} source tensors; it takes 1 to 16", op, srcs.size()));
  }
  if (!o.scales.empty() && o.scales.size() != srcs.size()) {
    t.fail("err_invalid_shape", loc, fmt::format("{}: {} scales for {} sources; give one per source", op, o.scales.size(), srcs.size()));
  }
  for (double s : o.scales) {
    if (s != 1.0) t.fail("err_unsupported_scale", loc, fmt::format("{}: scale {} is not supported; every scale must be 1.0", op, s));
  }
  if (!o.unique_indices) {
    t.fail("err_unsupported_unique_indices", loc, fmt::format("{}: unique_indices=False is not supported", op));
  }
  const ir::TensorDecl& dd = decl_of(t, dst.tensor());
  check_dma_memory(t, dd, op, "the destination", loc);
  ir::DmaInfo d;
  d.issued = true;
  d.dge = ir::DgeMode::none;  // static descriptors: the only mode without an indirect source
  d.sources = static_cast<int>(srcs.size());
  int acc = -1;
  Shape shape;
  for (std::size_t i = 0; i < srcs.size(); ++i) {
    check_dma_memory(t, decl_of(t, srcs[i].tensor()), op, "a source", loc);
    const int v = read_source(t, srcs[i], sl);
    if (i == 0) {
      shape = tile_info(t, v).shape;
    } else if (tile_info(t, v).shape != shape) {
      t.fail("err_store_shape_mismatch", loc,
             fmt::format("{}: source {} has shape {}; source 0 has {}", op, i, shape_str(tile_info(t, v).shape), shape_str(shape)));
    }
    // fp32 throughout; the scale (1.0) is exact. Each step is part of the one DMA instruction.
    const double scale = o.scales.empty() ? 1.0 : o.scales[i];
    nl::tile term = scale == 1.0 ? nl::copy(nl::tile(v), {.dtype = DType::fp32}, sl)
                                 : nl::multiply(nl::tile(v), scale, {.dtype = DType::fp32}, sl);
    std::visit([](auto& x) {
      if constexpr (requires { x.fused; }) x.fused = true;
    }, t.ir().body.back());
    if (acc < 0) {
      acc = term.id();
      continue;
    }
    acc = nl::add(nl::tile(acc), term, {.dtype = DType::fp32}, sl).id();
    std::visit([](auto& x) {
      if constexpr (requires { x.fused; }) x.fused = true;
    }, t.ir().body.back());
  }
  write_dest(t, dst, acc, d, sl);
}

namespace {

/** The tile of an operand, refused when a scalar or not in `allowed` memory. */
int gather_tile(Trace& t, const nl::operand& x, const char* op, const char* role, bool psum_ok, const SourceLoc& loc) {
  if (x.is_scalar()) t.fail("err_scalar_only_operation", loc, fmt::format("{}: {} is a scalar; it must be a tile", op, role));
  const ir::TileInfo& ti = tile_info(t, x.tile_id);
  if (!psum_ok && ti.memory == ir::Memory::psum) {
    t.fail("err_unsupported_memory", loc, fmt::format("{}: {} is in PSUM; GpSimd reads SBUF only", op, role));
  }
  return x.tile_id;
}

/** The free-dimension gather both nc_n_gather and gather_flattened are. */
nl::tile free_gather(Trace& t, int data, int indices, const char* op, const SourceLoc& loc) {
  const ir::TileInfo& di = tile_info(t, data);
  const ir::TileInfo& ii = tile_info(t, indices);
  if (di.shape[0] != ii.shape[0]) {
    t.fail("err_num_partition_mismatch", loc,
           fmt::format("{}: data has {} partitions and indices {}; they must be equal", op, di.shape[0], ii.shape[0]));
  }
  if (di.shape[0] > tile_limits::pmax) {
    t.fail("err_num_partition_exceed_arch_limit", loc,
           fmt::format("{}: {} partitions exceed the architecture's {}", op, di.shape[0], tile_limits::pmax));
  }
  const DType dt = di.dtype;
  const Shape shape = ii.shape;
  const int result = t.add_tile(shape, dt);
  ir::GatherOp g;
  g.result = result;
  g.data = data;
  g.indices = indices;
  g.fallback = {-1, 0.0, true};
  g.oob_error = true;
  g.loc = loc;
  g.label = op;
  t.emit(std::move(g));
  return nl::tile(result);
}

}  // namespace

nl::tile nc_n_gather(const nl::operand& data, const nl::operand& indices, std::source_location sl) {
  Trace& t = Trace::current("isa.nc_n_gather", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* op = "isa::nc_n_gather";
  const int d = gather_tile(t, data, op, "data", false, loc);
  const int i = gather_tile(t, indices, op, "indices", false, loc);
  if (tile_info(t, i).dtype != DType::uint32) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("{}: indices are {}; the instruction takes uint32 indices", op, dtype_name(tile_info(t, i).dtype)));
  }
  return free_gather(t, d, i, op, loc);
}

void nc_stream_shuffle(const nl::access& dst, const nl::operand& src, const std::vector<std::int64_t>& shuffle_mask,
                       std::source_location sl) {
  Trace& t = Trace::current("isa.nc_stream_shuffle", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* op = "isa::nc_stream_shuffle";
  const int s = gather_tile(t, src, op, "src", true, loc);
  const ir::TensorDecl& dd = decl_of(t, dst.tensor());
  if (ir::is_hbm(dd.memory)) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("{}: the destination tensor {} is in {}; the shuffle writes SBUF or PSUM", op, dd.name, memory_label(dd.memory)));
  }
  if (shuffle_mask.size() != 32) {
    t.fail("err_invalid_shape", loc, fmt::format("{}: shuffle_mask has {} entries; it has one per partition of a quadrant, 32", op,
                                                 shuffle_mask.size()));
  }
  for (std::size_t i = 0; i < shuffle_mask.size(); ++i) {
    const std::int64_t m = shuffle_mask[i];
    if ((m < 0 || m >= 32) && m != 255) {
      t.fail("err_invalid_shuffle_mask", loc,
             fmt::format("{}: shuffle_mask[{}] is {}; an entry is a partition 0-31 of the quadrant, or 255 to keep", op, i, m));
    }
  }
  const ir::TileInfo si = tile_info(t, s);  // a copy: reading dst below adds a tile
  if (si.dtype != dd.dtype) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("{}: src is {} and dst {}; the shuffle does not convert", op, dtype_name(si.dtype), dtype_name(dd.dtype)));
  }
  // The destination's previous values: kept where the mask says 255 (read as part of the shuffle).
  const int old = nl::operand(dst, sl).tile_id;
  const Shape shape = tile_info(t, old).shape;
  const Shape free_src(si.shape.begin() + 1, si.shape.end()), free_dst(shape.begin() + 1, shape.end());
  if (shape_elements(free_src) != shape_elements(free_dst) || free_src != free_dst) {
    t.fail("err_free_dim_mismatch", loc,
           fmt::format("{}: src {} and dst {} differ in elements per partition", op, shape_str(si.shape), shape_str(shape)));
  }
  const std::int64_t active = (std::max(si.shape[0], shape[0]) + 31) / 32 * 32;
  std::vector<std::int64_t> table(static_cast<std::size_t>(shape[0]));
  for (std::int64_t p = 0; p < shape[0]; ++p) {
    const std::int64_t m = shuffle_mask[static_cast<std::size_t>(p % 32)];
    const std::int64_t from = m == 255 ? -1 : p / 32 * 32 + m;
    if (from >= si.shape[0]) {
      t.fail("err_tensor_access_out_of_bound", loc,
             fmt::format("{}: dst partition {} takes src partition {} (shuffle_mask[{}] = {}), but src has {} partitions", op, p,
                         from, p % 32, m, si.shape[0]));
    }
    table[static_cast<std::size_t>(p)] = from;
  }
  (void)active;
  const int result = t.add_tile(shape, dd.dtype, dd.memory);
  ir::GatherOp g;
  g.result = result;
  g.data = s;
  g.table = std::move(table);
  g.fallback = {old, 0.0, true};
  g.oob_error = false;
  g.loc = loc;
  g.label = op;
  t.emit(std::move(g));
  nl::access w = dst;
  w = nl::tile(result);
}

}  // namespace nki::isa

namespace nki::language {

void atomic_rmw(const isa::indirect_access& dst, const operand& value, const binary_fn& op, const atomic_rmw_options& o,
                source_location sl) {
  isa::atomic_rmw_store(dst, value, op, o.mask, sl);
}

tile load_transpose2d(const access& src, std::optional<DType> dtype, source_location sl) {
  Trace& t = Trace::current("load_transpose2d", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  const ir::TensorDecl& d = t.ir().tensors.at(static_cast<std::size_t>(src.tensor()));
  if (!ir::is_hbm(d.memory)) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("nl::load_transpose2d reads HBM; tensor {} is in {}", d.name, ir::memory_name(d.memory)));
  }
  tile raw = load(src, {}, sl);
  const Shape from = raw.shape();
  if (from.size() != 2) {
    t.fail("err_unsupported_tile_rank", loc,
           fmt::format("nl::load_transpose2d: the source window has shape {}; it must be 2-D", shape_str(from)));
  }
  if (from[1] > tile_limits::pmax) {
    t.fail("err_num_partition_exceed_arch_limit", loc,
           fmt::format("nl::load_transpose2d: the transpose of {} has {} partitions; at most {}", shape_str(from), from[1],
                       tile_limits::pmax));
  }
  auto* l = std::get_if<ir::LoadOp>(&t.ir().body.back());
  const Shape shape{from[1], from[0]};
  for (ir::IndexExpr& e : l->src.indices) {
    ir::IndexExpr out;
    out.constant = e.constant;
    for (ir::Term term : e.terms) {
      if (term.sym.kind == ir::Sym::Kind::axis) term.sym.index = 1 - term.sym.index;
      out.terms.push_back(term);
    }
    std::sort(out.terms.begin(), out.terms.end(), [](const ir::Term& a, const ir::Term& b) { return a.sym < b.sym; });
    if (!e.shape.empty()) out.shape = {e.shape[1], e.shape[0]};
    e = std::move(out);
  }
  l->src.shape = shape;
  l->dma.transpose = true;
  t.ir().tiles.at(static_cast<std::size_t>(raw.id())).shape = shape;
  if (dtype && *dtype != d.dtype) return copy(raw, {.dtype = dtype}, sl);
  return raw;
}

tile gather_flattened(const operand& data, const operand& indices, int axis, std::optional<DType> dtype,
                      source_location sl) {
  Trace& t = Trace::current("gather_flattened", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* op = "nl::gather_flattened";
  if (axis != 0) {
    t.fail("err_unsupported_gather_axis", loc,
           fmt::format("{}: axis {} is not supported; the gather runs along the flattened free dimensions of each "
                       "partition (axis 0)",
                       op, axis));
  }
  const int d = isa::gather_tile(t, data, op, "data", false, loc);
  const int i = isa::gather_tile(t, indices, op, "indices", false, loc);
  const DType it = t.ir().tiles.at(static_cast<std::size_t>(i)).dtype;
  if (!is_integer(it) || it == DType::boolean) {
    t.fail("err_unsupported_dtype", loc, fmt::format("{}: indices are {}; they must be integers", op, dtype_name(it)));
  }
  tile r = isa::free_gather(t, d, i, op, loc);
  if (dtype && *dtype != r.dtype()) return copy(r, {.dtype = dtype}, sl);
  return r;
}

}  // namespace nki::language
