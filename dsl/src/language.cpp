/** \file The tile language: each call checks its operands and appends IR to the current trace. */
#include "nki/language.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "compiler_alloc.h"
#include "nki/trace.h"

namespace nki::language {

namespace {


/** A misuse of an index, reported with the kernel being traced and where the index came from. */
[[noreturn]] void index_error(const char* name, const SourceLoc& where, std::string detail) {
  Trace* t = Trace::active();
  throw UserError(name, t ? t->ir().name : "", where, std::move(detail));
}

index checked_add(const index& a, const index& b, const char* op) {
  const SourceLoc& where = a.where().file.empty() ? b.where() : a.where();
  try {
    return index(ir::add(a.expr(), b.expr()), where);
  } catch (const std::invalid_argument& e) {
    index_error("err_index_shape_mismatch", where, fmt::format("index {}: {}", op, e.what()));
  }
}

}  // namespace

// ---- index expressions ----

index index::expand(std::initializer_list<bool> is_slice) const {
  if (!e_.unexpanded_arange) {
    index_error("err_index_expand", where_,
                fmt::format("only a 1-D arange can be expanded with [_, newaxis]; this index has shape {}",
                            shape_str(e_.shape)));
  }
  int slices = 0;
  for (bool s : is_slice) slices += s ? 1 : 0;
  if (slices != 1) {
    index_error("err_index_expand", where_,
                fmt::format("a 1-D arange expands with exactly one `_` (got {} in {} subscripts)", slices,
                            is_slice.size()));
  }
  ir::IndexExpr out = e_;
  const std::int64_t n = *e_.unexpanded_arange;
  out.unexpanded_arange.reset();
  out.shape.clear();
  int dim = 0;
  int k = 0;
  for (bool s : is_slice) {
    out.shape.push_back(s ? n : 1);
    if (s) dim = k;
    ++k;
  }
  // The 1-D arange runs along axis 0 of its own shape; move it to the chosen dimension.
  // arange(1) is the constant 0 and broadcasts: it keeps no axis term, so it cannot merge
  // with another arange along the same dimension.
  std::erase_if(out.terms, [&](const ir::Term& t) { return n == 1 && t.sym.kind == ir::Sym::Kind::axis; });
  for (ir::Term& t : out.terms)
    if (t.sym.kind == ir::Sym::Kind::axis) t.sym.index = dim;
  return index(std::move(out), where_);
}

index operator+(const index& a, const index& b) { return checked_add(a, b, "+"); }
index operator-(const index& a, const index& b) { return checked_add(a, index(ir::scale(b.expr(), -1), b.where()), "-"); }
index operator-(const index& a) { return index(ir::scale(a.expr(), -1), a.where()); }
index operator*(const index& a, std::int64_t k) { return index(ir::scale(a.expr(), k), a.where()); }
index operator*(std::int64_t k, const index& a) { return index(ir::scale(a.expr(), k), a.where()); }

// ---- predicates: every comparison becomes `e >= 0` (or `e != 0`) over integers ----

namespace {
predicate compare(const index& a, const index& b, std::int64_t shift, bool flip, bool not_equal = false) {
  // a < b  <=>  b - a - 1 >= 0;  a <= b  <=>  b - a >= 0;  a > b  <=>  a - b - 1 >= 0; ...
  const index diff = flip ? b - a : a - b;
  ir::IndexExpr e = diff.expr();
  e.constant -= shift;
  if (e.unexpanded_arange) {
    index_error("err_1d_arange_not_supported", diff.where(),
                fmt::format("a mask uses a 1-D arange({}); expand it with [_, newaxis] or [newaxis, _]",
                            *e.unexpanded_arange));
  }
  ir::Predicate p;
  p.all.push_back({std::move(e), not_equal});
  return predicate(std::move(p), diff.where());
}
}  // namespace

predicate operator<(const index& a, const index& b) { return compare(a, b, 1, true); }
predicate operator<=(const index& a, const index& b) { return compare(a, b, 0, true); }
predicate operator>(const index& a, const index& b) { return compare(a, b, 1, false); }
predicate operator>=(const index& a, const index& b) { return compare(a, b, 0, false); }
predicate operator==(const index& a, const index& b) {
  return compare(a, b, 0, false) & compare(a, b, 0, true);
}
predicate operator!=(const index& a, const index& b) { return compare(a, b, 0, false, true); }

predicate operator&(const predicate& a, const predicate& b) {
  ir::Predicate p = a.ir();
  p.all.insert(p.all.end(), b.ir().all.begin(), b.ir().all.end());
  return predicate(std::move(p), a.where().file.empty() ? b.where() : a.where());
}

// ---- program ids ----

index program_id(int axis, source_location loc) {
  Trace& t = Trace::current("program_id", loc);
  if (axis < 0 || axis >= static_cast<int>(t.grid().size())) {
    t.fail("err_program_id_axis_out_of_range", SourceLoc::from(loc),
           fmt::format("program_id({}) on a launch grid of rank {}; valid axes are [0, {})", axis, t.grid().size(),
                       t.grid().size()));
  }
  return index(ir::IndexExpr::symbol({ir::Sym::Kind::program_id, axis}), SourceLoc::from(loc));
}

std::int64_t num_programs(int axis, source_location loc) {
  Trace& t = Trace::current("num_programs", loc);
  if (axis < 0 || axis >= static_cast<int>(t.grid().size())) {
    t.fail("err_program_id_axis_out_of_range", SourceLoc::from(loc),
           fmt::format("num_programs({}) on a launch grid of rank {}; valid axes are [0, {})", axis,
                       t.grid().size(), t.grid().size()));
  }
  return t.grid()[static_cast<std::size_t>(axis)];
}

std::int64_t num_programs(source_location loc) {
  Trace& t = Trace::current("num_programs", loc);
  std::int64_t n = 1;
  for (std::int64_t g : t.grid()) n *= g;
  return n;
}

int program_ndim(source_location loc) { return static_cast<int>(Trace::current("program_ndim", loc).grid().size()); }

index arange(std::int64_t n, source_location loc) {
  Trace& t = Trace::current("arange", loc);
  if (n <= 0) t.fail("err_invalid_arange", SourceLoc::from(loc), fmt::format("arange({}): the size must be positive", n));
  ir::IndexExpr e = ir::IndexExpr::symbol({ir::Sym::Kind::axis, 0});
  e.shape = {n};
  e.unexpanded_arange = n;
  return index(std::move(e), SourceLoc::from(loc));
}

index arange(std::int64_t start, std::int64_t stop, source_location loc) {
  Trace& t = Trace::current("arange", loc);
  if (stop <= start) {
    t.fail("err_invalid_arange", SourceLoc::from(loc),
           fmt::format("arange({}, {}): stop must be greater than start", start, stop));
  }
  return arange(stop - start, loc) + index(start);
}

mgrid_pair mgrid_t::operator()(std::int64_t partitions, std::int64_t free, source_location loc) const {
  return {arange(partitions, loc)[_, newaxis], arange(free, loc)[newaxis, _]};
}

// ---- tensors and tiles ----

Shape tensor::shape() const { return Trace::current("tensor.shape", source_location::current()).ir().tensors.at(id_).shape; }
DType tensor::dtype() const { return Trace::current("tensor.dtype", source_location::current()).ir().tensors.at(id_).dtype; }
ir::Memory tensor::memory() const {
  return Trace::current("tensor.memory", source_location::current()).ir().tensors.at(id_).memory;
}
Shape tile::shape() const { return Trace::current("tile.shape", source_location::current()).ir().tiles.at(id_).shape; }
DType tile::dtype() const { return Trace::current("tile.dtype", source_location::current()).ir().tiles.at(id_).dtype; }

namespace {

/** Where a tensor lives, in the words users know (kernel arguments are in HBM). */
const char* memory_label(ir::Memory m) {
  return m == ir::Memory::hbm_input ? "HBM (a kernel argument)" : ir::memory_name(m);
}

const char* buffer_name(buffer b) {
  switch (b) {
    case buffer::shared_hbm: return "shared_hbm";
    case buffer::private_hbm: return "private_hbm";
    case buffer::sbuf: return "sbuf";
    case buffer::psum: return "psum";
  }
  return "?";
}

ir::Memory memory_of(buffer b) {
  switch (b) {
    case buffer::shared_hbm: return ir::Memory::shared_hbm;
    case buffer::private_hbm: return ir::Memory::private_hbm;
    case buffer::sbuf: return ir::Memory::sbuf;
    case buffer::psum: return ir::Memory::psum;
  }
  return ir::Memory::sbuf;
}

/** A tile used where it is visible: not after the loop it was created in. */
void check_tile_scope(Trace& t, int tile, const SourceLoc& loc) {
  const int scope = t.tile_scope(tile);
  if (!t.in_scope(scope)) {
    const ir::LoopInfo& l = t.ir().loops.at(static_cast<std::size_t>(scope));
    t.fail("err_local_variable_used_out_of_scope", loc,
           fmt::format("tile %t{} was created inside the loop at {}:{} and is used after that loop ended; "
                       "allocate a buffer outside the loop and write the tile into it",
                       tile, l.loc.file, l.loc.line));
  }
}

void check_tensor_scope(Trace& t, int tensor, const SourceLoc& loc) {
  const int scope = t.tensor_scope(tensor);
  if (!t.in_scope(scope)) {
    const ir::LoopInfo& l = t.ir().loops.at(static_cast<std::size_t>(scope));
    t.fail("err_local_variable_used_out_of_scope", loc,
           fmt::format("tensor {} was allocated inside the loop at {}:{} and is used after that loop ended",
                       t.ir().tensors.at(tensor).name, l.loc.file, l.loc.line));
  }
}

tensor allocate(const shape_spec& spec, DType dtype, buffer buf, const std::string& name, std::optional<double> fill,
                const char* op, source_location sl, const compiler::allocation* placed = nullptr) {
  Trace& t = Trace::current(op, sl);
  const SourceLoc loc = SourceLoc::from(sl);
  Shape shape;
  int par = -1;
  for (std::size_t d = 0; d < spec.dims.size(); ++d) {
    const dim& x = spec.dims[d];
    if (x.size <= 0) {
      std::vector<std::int64_t> sizes;
      for (const dim& y : spec.dims) sizes.push_back(y.size);
      t.fail("err_invalid_shape", loc,
             fmt::format("nl::{} shape {} has a dimension of size {}; sizes must be positive", op, shape_str(sizes),
                         x.size));
    }
    if (x.partition) {
      if (par >= 0) {
        t.fail("err_invalid_shape", loc,
               fmt::format("nl::{} shape marks dimensions {} and {} with par_dim; an array has one partition dimension",
                           op, par, d));
      }
      par = static_cast<int>(d);
    }
    shape.push_back(x.size);
  }
  if (shape.empty()) t.fail("err_invalid_shape", loc, fmt::format("nl::{} needs a shape of at least one dimension", op));
  const ir::Memory mem = memory_of(buf);
  // HBM has no partitions: NKI accepts par_dim in an HBM shape and it changes nothing there.
  if (par < 0 || ir::is_hbm(mem)) par = 0;
  if (mem == ir::Memory::shared_hbm && t.innermost_loop() >= 0) {
    t.fail("err_shared_hbm_must_in_kernel_level", loc,
           fmt::format("nl::{}(..., buffer=shared_hbm) inside a loop; shared_hbm tensors are allocated at the top "
                       "level of the kernel",
                       op));
  }
  ir::Placement placement;
  if (!ir::is_hbm(mem)) {
    if (shape[static_cast<std::size_t>(par)] > tile_limits::pmax) {
      t.fail("err_num_partition_exceed_arch_limit", loc,
             fmt::format("number of partitions {} exceeds architecture limitation of {} (nl::{} in {})",
                         shape[static_cast<std::size_t>(par)], tile_limits::pmax, op, buffer_name(buf)));
    }
    if (placed != nullptr) placement = compiler::detail::place(t, *placed, shape, par, dtype, op, loc);
    // A placed array needs its physical blocks only: blocks that share memory count once.
    const Shape& storage = placement.placed ? placement.storage : shape;
    std::int64_t per_partition = dtype_bytes(dtype);
    for (std::size_t d = 0; d < storage.size(); ++d)
      if (static_cast<int>(d) != par) per_partition *= storage[d];
    const std::int64_t limit = mem == ir::Memory::psum ? tile_limits::psum_partition_bytes : tile_limits::sbuf_partition_bytes;
    if (per_partition > limit) {
      t.fail("err_size_of_dimension_exceed_arch_limit", loc,
             fmt::format("nl::{} of {} {} in {} needs {} bytes per partition; {} has {} bytes per partition", op,
                         dtype_name(dtype), shape_str(shape), buffer_name(buf), per_partition, buffer_name(buf), limit));
    }
  }
  const int id = t.add_tensor(name, shape, dtype, mem, loc);
  ir::TensorDecl& decl = t.ir().tensors[static_cast<std::size_t>(id)];
  decl.par_dim = par;
  decl.fill = fill;
  decl.placement = std::move(placement);
  if (placed != nullptr) compiler::detail::check_placement(t, id);
  if (mem == ir::Memory::shared_hbm) t.ir().outputs.push_back(id);
  if (ir::is_per_instance(mem)) t.emit(ir::AllocOp{id, loc});
  return tensor(id);
}

struct like_info {
  Shape shape;
  DType dtype;
};
like_info like_of(const like_source& like, const char* op, source_location sl) {
  Trace& t = Trace::current(op, sl);
  if (like.tensor_id >= 0) {
    const ir::TensorDecl& d = t.ir().tensors.at(static_cast<std::size_t>(like.tensor_id));
    return {d.shape, d.dtype};
  }
  check_tile_scope(t, like.tile_id, SourceLoc::from(sl));
  const ir::TileInfo& ti = t.ir().tiles.at(static_cast<std::size_t>(like.tile_id));
  return {ti.shape, ti.dtype};
}

}  // namespace

tensor ndarray(const shape_spec& shape, DType dtype, buffer buf, const std::string& name, source_location loc) {
  return allocate(shape, dtype, buf, name, std::nullopt, "ndarray", loc);
}
tensor ndarray(const shape_spec& shape, DType dtype, const compiler::allocation& buf, const std::string& name,
               source_location loc) {
  return allocate(shape, dtype, buf.memory, name, std::nullopt, "ndarray", loc, &buf);
}
tensor zeros(const shape_spec& shape, DType dtype, const compiler::allocation& buf, const std::string& name,
             source_location loc) {
  return allocate(shape, dtype, buf.memory, name, 0.0, "zeros", loc, &buf);
}
tensor zeros(const shape_spec& shape, DType dtype, buffer buf, const std::string& name, source_location loc) {
  return allocate(shape, dtype, buf, name, 0.0, "zeros", loc);
}
tensor ones(const shape_spec& shape, DType dtype, buffer buf, const std::string& name, source_location loc) {
  return allocate(shape, dtype, buf, name, 1.0, "ones", loc);
}
tensor full(const shape_spec& shape, double value, DType dtype, buffer buf, const std::string& name,
            source_location loc) {
  return allocate(shape, dtype, buf, name, value, "full", loc);
}
tensor ndarray_like(const like_source& like, buffer buf, source_location loc) {
  const like_info l = like_of(like, "ndarray_like", loc);
  return allocate(l.shape, l.dtype, buf, "", std::nullopt, "ndarray_like", loc);
}
tensor zeros_like(const like_source& like, buffer buf, source_location loc) {
  const like_info l = like_of(like, "zeros_like", loc);
  return allocate(l.shape, l.dtype, buf, "", 0.0, "zeros_like", loc);
}
tensor ones_like(const like_source& like, buffer buf, source_location loc) {
  const like_info l = like_of(like, "ones_like", loc);
  return allocate(l.shape, l.dtype, buf, "", 1.0, "ones_like", loc);
}
tensor empty_like(const like_source& like, buffer buf, source_location loc) {
  const like_info l = like_of(like, "empty_like", loc);
  return allocate(l.shape, l.dtype, buf, "", std::nullopt, "empty_like", loc);
}
tensor full_like(const like_source& like, double value, buffer buf, source_location loc) {
  const like_info l = like_of(like, "full_like", loc);
  return allocate(l.shape, l.dtype, buf, "", value, "full_like", loc);
}

tensor shared_constant(const Shape& shape, const std::vector<double>& values, DType dtype, source_location sl) {
  Trace& t = Trace::current("shared_constant", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  for (std::int64_t n : shape) {
    if (n <= 0) {
      t.fail("err_invalid_shape", loc,
             fmt::format("nl::shared_constant shape {} has a dimension of size {}; sizes must be positive",
                         shape_str(shape), n));
    }
  }
  if (shape.empty()) t.fail("err_invalid_shape", loc, "nl::shared_constant needs a shape of at least one dimension");
  if (static_cast<std::int64_t>(values.size()) != shape_elements(shape)) {
    t.fail("err_invalid_shape", loc,
           fmt::format("nl::shared_constant of shape {} needs {} values, got {}", shape_str(shape),
                       shape_elements(shape), values.size()));
  }
  if (t.innermost_loop() >= 0) {
    t.fail("err_shared_hbm_must_in_kernel_level", loc,
           "nl::shared_constant inside a loop; constants live in shared HBM and are created at the top level of the "
           "kernel");
  }
  const int id = t.add_tensor("", shape, dtype, ir::Memory::constant_hbm, loc);
  std::vector<double>& v = t.ir().tensors[static_cast<std::size_t>(id)].values;
  v.reserve(values.size());
  for (double x : values) v.push_back(round_to_dtype(x, dtype));  // as a .npy input converts
  return tensor(id);
}

// ---- loops ----

std::int64_t range_trip_count(const char* op, std::int64_t start, std::int64_t stop, std::int64_t step,
                              source_location loc) {
  if (step == 0) {
    Trace::current(op, loc).fail("err_invalid_loop_range", SourceLoc::from(loc),
                                 fmt::format("nl::{}({}, {}, {}): the step must not be 0", op, start, stop, step));
  }
  // Python's len(range(start, stop, step)), without overflow for any int64 operands.
  const auto span = step > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
  const auto mag = step > 0 ? static_cast<__int128>(step) : -static_cast<__int128>(step);
  return span <= 0 ? 0 : static_cast<std::int64_t>((span + mag - 1) / mag);
}

loop_range::loop_range(ir::LoopKind kind, std::int64_t start, std::int64_t stop, std::int64_t step,
                       source_location loc)
    : var_(0) {
  const char* op = ir::loop_kind_name(kind);
  Trace& t = Trace::current(op, loc);
  const std::int64_t trip = range_trip_count(op, start, stop, step, loc);
  if (trip <= 0) {
    t.fail("err_invalid_loop_range", SourceLoc::from(loc),
           start == 0 && step == 1
               ? fmt::format("nl::{}({}): the trip count must be positive", op, stop)
               : fmt::format("nl::{}({}, {}, {}): the range is empty; a traced loop needs at least one iteration", op,
                             start, stop, step));
  }
  loop_ = t.open_loop(kind, trip, SourceLoc::from(loc));
  t.await_range_for(loop_);
  const index i(ir::IndexExpr::symbol({ir::Sym::Kind::loop, loop_}), SourceLoc::from(loc));
  var_ = start == 0 && step == 1 ? i : index(((i * step) + index(start)).expr(), SourceLoc::from(loc));
  trace_ = &t;
}

loop_range::iterator loop_range::begin() const {
  static_cast<Trace*>(trace_)->range_for_begins(loop_);
  return {this, false};
}

loop_range::iterator& loop_range::iterator::operator++() {
  static_cast<Trace*>(r->trace_)->range_for_ends(r->loop_);
  done = true;
  return *this;
}

loop_range::~loop_range() {
  // While an error unwinds, the trace is being abandoned: leave it as it is.
  if (trace_ != nullptr && Trace::active() == trace_ && std::uncaught_exceptions() == 0)
    static_cast<Trace*>(trace_)->close_loop(loop_);
}

// ---- accesses ----

namespace {

const char* subscript_kind(const index_arg& s) {
  switch (s.k) {
    case index_arg::kind::value: return s.expr.shape.empty() ? "an integer" : "an index array";
    case index_arg::kind::slice: return "a slice";
    case index_arg::kind::all: return "a _";
    case index_arg::kind::omitted: return "an omitted trailing dimension (a whole `_`)";
  }
  return "?";
}

/** The coordinate along axis `k` of a tile of `shape` (0 everywhere when that axis has extent 1). */
ir::IndexExpr tile_axis(std::size_t k, const Shape& shape) {
  ir::IndexExpr ax = ir::IndexExpr::symbol({ir::Sym::Kind::axis, static_cast<int>(k)});
  ax.shape = Shape(shape.size(), 1);
  ax.shape[k] = shape[k];
  if (shape[k] == 1) ax.terms.clear();
  return ax;
}

struct resolved {
  std::vector<ir::IndexExpr> indices;
  Shape shape;
};

/**
 * Resolves subscripts of something of shape `dims` (`what`: "tensor a" or "tile %t3", for
 * messages) into one index per dimension, broadcast to a tile shape.
 */
resolved resolve_subscripts(Trace& t, const std::string& what, const Shape& dims, std::vector<index_arg> subs,
                            const source_location& where) {
  const SourceLoc loc = SourceLoc::from(where);
  struct {
    const std::string& name;
    const Shape& shape;
  } decl{what, dims};
  if (subs.size() > decl.shape.size()) {
    t.fail("err_index_rank_mismatch", loc,
           fmt::format("{} of shape {} has {} dimensions but was indexed with {}", decl.name,
                       shape_str(decl.shape), decl.shape.size(), subs.size()));
  }
  while (subs.size() < decl.shape.size()) subs.emplace_back(index_arg::kind::omitted, where);  // trailing dims: whole
  int slices = 0, arrays = 0;
  const index_arg* first_slice = nullptr;
  const index_arg* first_array = nullptr;
  for (const index_arg& s : subs) {
    if (s.k == index_arg::kind::value && s.expr.unexpanded_arange) {
      t.fail("err_1d_arange_not_supported", loc,
             fmt::format("{} is indexed with a 1-D arange({}); expand it with [_, newaxis] or [newaxis, _]",
                         decl.name, *s.expr.unexpanded_arange));
    }
    if (s.k != index_arg::kind::value) {
      ++slices;
      if (!first_slice) first_slice = &s;
    } else if (!s.expr.shape.empty()) {
      ++arrays;
      if (!first_array) first_array = &s;
    }
  }
  if (slices > 0 && arrays > 0) {
    t.fail("err_unsupported_mixing_basic_advanced_tensor_indexing", loc,
           fmt::format("{} is indexed with both {} and an index array of shape {}; use only slices "
                       "(nl::ds, _) or only index arrays (arange, mgrid) in one access",
                       decl.name, subscript_kind(*first_slice), shape_str(first_array->expr.shape)));
  }
  resolved out;
  Shape shape;
  if (slices > 0) {
    // Basic indexing: each slice becomes the next tile dimension; integers select.
    std::vector<int> axis_of(subs.size(), -1);
    for (std::size_t d = 0; d < subs.size(); ++d) {
      if (subs[d].k == index_arg::kind::value) continue;
      axis_of[d] = static_cast<int>(shape.size());
      const std::int64_t size = subs[d].k == index_arg::kind::slice ? subs[d].size : decl.shape[d];
      if (size <= 0) {
        t.fail("err_invalid_slice", loc,
               fmt::format("slice of dimension {} of {} has size {}; sizes must be positive", d, decl.name,
                           size));
      }
      shape.push_back(size);
    }
    for (std::size_t d = 0; d < subs.size(); ++d) {
      ir::IndexExpr e = subs[d].k == index_arg::kind::slice || subs[d].k == index_arg::kind::value ? subs[d].expr
                                                                                                  : ir::IndexExpr{};
      if (!e.shape.empty()) {
        t.fail("err_unsupported_mixing_basic_advanced_tensor_indexing", loc,
               fmt::format("the start of a slice of {} is an index array of shape {}; a slice starts at a "
                           "scalar index",
                           decl.name, shape_str(e.shape)));
      }
      if (axis_of[d] >= 0) {
        e = ir::add(e, tile_axis(static_cast<std::size_t>(axis_of[d]), shape));
      }
      out.indices.push_back(std::move(e));
    }
  } else {
    for (const index_arg& s : subs) {
      auto b = ir::broadcast_shapes(shape, s.expr.shape);
      if (!b) {
        t.fail("err_index_shape_mismatch", loc,
               fmt::format("indices of {} have shapes that do not broadcast: {} and {}", decl.name,
                           shape_str(shape), shape_str(s.expr.shape)));
      }
      shape = *b;
      out.indices.push_back(s.expr);
    }
  }
  if (shape.empty()) shape = {1};
  out.shape = shape;
  return out;
}

/**
 * Tile shapes broadcast partition-first: dimension 0 is the partition dimension of every
 * tile, so a tile of lower rank is padded with trailing 1s (a [P] tile is [P, 1]); then each
 * dimension either matches or is 1.
 */
std::optional<Shape> broadcast_tiles(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    const std::int64_t x = d < a.size() ? a[d] : 1, y = d < b.size() ? b[d] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[d] = x == 1 ? y : x;
  }
  return out;
}

/** Whether `value` broadcasts to `into` without growing it (ranks compared partition-first, as broadcast_tiles). */
bool fits_tile(const Shape& into, const Shape& value) {
  auto b = broadcast_tiles(into, value);
  if (!b) return false;
  for (std::size_t d = 0; d < b->size(); ++d)
    if ((*b)[d] != (d < into.size() ? into[d] : 1)) return false;
  return true;
}

/** Resolves tensor[subscripts] into an IR access: one index per dimension, broadcast to a tile shape. */
ir::Access make_access(Trace& t, const access& a) {
  const ir::TensorDecl& decl = t.ir().tensors.at(static_cast<std::size_t>(a.tensor()));
  const SourceLoc loc = SourceLoc::from(a.loc());
  check_tensor_scope(t, a.tensor(), loc);
  resolved r = resolve_subscripts(t, "tensor " + decl.name, decl.shape, a.subscripts(), a.loc());
  return ir::Access{a.tensor(), std::move(r.indices), std::move(r.shape), loc};
}

ir::Predicate checked_mask(Trace& t, const predicate& m, const Shape& shape, const char* op, const SourceLoc& loc) {
  for (const ir::Condition& c : m.ir().all) {
    if (!c.expr.shape.empty() && !fits_tile(shape, c.expr.shape)) {
      t.fail("err_mask_shape_mismatch", loc,
             fmt::format("the mask of {} has shape {}; the tile has shape {}", op, shape_str(c.expr.shape),
                         shape_str(shape)));
    }
  }
  return m.ir();
}

ir::Operand to_ir(Trace& t, const operand& o, const SourceLoc& loc) {
  if (!o.is_scalar()) check_tile_scope(t, o.tile_id, loc);
  return {o.tile_id, o.scalar, o.scalar_is_float};
}

/** The tile read from an on-chip window, where it is used. */
int read_window(Trace& t, const access& a, const SourceLoc& loc) {
  const ir::TensorDecl& decl = t.ir().tensors.at(static_cast<std::size_t>(a.tensor()));
  if (ir::is_hbm(decl.memory)) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("tensor {} is in {}: compute ops read SBUF or PSUM; bring it on chip with nl::load first",
                       decl.name, memory_label(decl.memory)));
  }
  ir::Access acc = make_access(t, a);
  const int result = t.add_tile(acc.shape, decl.dtype, decl.memory);
  t.emit(ir::LoadOp{result, std::move(acc), {}, loc});
  return result;
}

/**
 * The shape ops broadcast to (broadcast_tiles). With `partitions`, as NKI's nl ops, a tile of
 * one partition also broadcasts across the partitions; otherwise (isa ops) partitions are equal.
 */
Shape broadcast_operands(Trace& t, std::initializer_list<const operand*> ops, const char* op, const SourceLoc& loc,
                         bool partitions = false) {
  Shape shape;
  const operand* first = nullptr;
  for (const operand* o : ops) {
    if (o->is_scalar()) continue;
    const ir::TileInfo& ti = tile_info(t, o->tile_id);
    if (first) {
      if (shape[0] != ti.shape[0] && !(partitions && (shape[0] == 1 || ti.shape[0] == 1))) {
        t.fail("err_num_partition_mismatch", loc,
               partitions ? fmt::format("{} operands have {} and {} partitions; partitions broadcast only from a "
                                        "tile of 1 partition",
                                        op, shape[0], ti.shape[0])
                          : fmt::format("{} operands have {} and {} partitions; both tiles need the same partition "
                                        "count",
                                        op, shape[0], ti.shape[0]));
      }
      auto s = broadcast_tiles(shape, ti.shape);
      if (!s) {
        t.fail("err_free_dim_mismatch", loc,
               fmt::format("{} operand shapes {} and {} do not broadcast", op, shape_str(shape),
                           shape_str(ti.shape)));
      }
      shape = *s;
    } else {
      first = o;
      shape = ti.shape;
    }
  }
  if (!first) {
    t.fail("err_scalar_only_operation", loc, fmt::format("{} needs at least one tile operand, got only scalars", op));
  }
  return shape;
}

/** The promoted dtype of tile and scalar operands. */
DType promoted(Trace& t, std::initializer_list<const operand*> ops) {
  std::optional<DType> d;
  for (const operand* o : ops)
    if (!o->is_scalar()) d = d ? promote(*d, tile_info(t, o->tile_id).dtype) : tile_info(t, o->tile_id).dtype;
  for (const operand* o : ops)
    if (o->is_scalar()) d = promote_scalar(*d, o->scalar_is_float);
  return *d;
}

void check_partition_limit(Trace& t, const Shape& shape, const SourceLoc& loc) {
  if (!shape.empty() && shape[0] > tile_limits::pmax) {
    t.fail("err_num_partition_exceed_arch_limit", loc,
           fmt::format("number of partitions {} exceeds architecture limitation of {}", shape[0], tile_limits::pmax));
  }
}

/** A dtype bitwise ops work on: the fixed-width integers (not bool, not floats). */
bool is_bit_pattern_type(DType d) { return is_integer(d) && d != DType::boolean; }

/**
 * Bitwise ops take integer operands only and compute in an integer result type (NKI: the
 * Vector engine treats the elements as bit patterns; inputs must be integer typed).
 */
void check_bitwise_dtypes(Trace& t, const char* name, const operand& a, const operand& b, DType result,
                          const SourceLoc& loc) {
  const char* role[] = {"x", "y"};
  int q = 0;
  for (const operand* o : {&a, &b}) {
    const char* r = role[q++];
    if (o->is_scalar()) {
      if (o->scalar_is_float) {
        t.fail("err_unsupported_dtype", loc,
               fmt::format("nl::{}: operand {} is the float scalar {}; bitwise ops take integers", name, r, o->scalar));
      }
      continue;
    }
    const DType d = tile_info(t, o->tile_id).dtype;
    if (!is_bit_pattern_type(d)) {
      t.fail("err_unsupported_dtype", loc,
             fmt::format("nl::{}: operand {} is a {} tile; bitwise ops take integer tiles (int8, int16, int32, uint8, "
                         "uint16, uint32)",
                         name, r, dtype_name(d)));
    }
  }
  if (!is_bit_pattern_type(result)) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("nl::{}: the result dtype is {}; bitwise ops compute in an integer type (int8, int16, int32, "
                       "uint8, uint16, uint32)",
                       name, dtype_name(result)));
  }
}

/**
 * An operand of one partition used by an op over `partitions` partitions: first copied to every
 * partition (an explicit op, so the cost model sees the cross-partition move the engines cannot
 * do in place). Other operands are returned as they are.
 */
ir::Operand across_partitions(Trace& t, const operand& o, std::int64_t partitions, const SourceLoc& loc) {
  ir::Operand r = to_ir(t, o, loc);
  if (o.is_scalar() || partitions == 1) return r;
  const ir::TileInfo ti = tile_info(t, o.tile_id);
  if (ti.shape[0] != 1) return r;
  Shape wide = ti.shape;
  wide[0] = partitions;
  check_partition_limit(t, wide, loc);
  const int id = t.add_tile(wide, ti.dtype);
  t.emit(ir::ActivationOp{id, ir::ActKind::copy, r, {-1, 1.0, true}, {-1, 0.0, true}, {}, loc});
  return {id, 0.0, true};
}

/**
 * `name`: the op the user called, for messages (default: the kind's name). `partition_broadcast`:
 * nl's elementwise ops broadcast a tile of one partition; isa::tensor_tensor / tensor_scalar do not.
 * `engine`: the engine the author chose (isa ops' engine=), unknown for the default.
 */
tile binary(ir::BinaryKind kind, const operand& a, const operand& b, const op_options& o, source_location sl,
            const char* name = nullptr, bool partition_broadcast = true, ir::Engine engine = ir::Engine::unknown) {
  if (!name) name = ir::binary_name(kind);
  Trace& t = Trace::current(name, sl);
  const SourceLoc loc = SourceLoc::from(sl);
  const std::string what = partition_broadcast ? fmt::format("nl::{}", name) : "isa::tensor_tensor";
  const Shape shape = broadcast_operands(t, {&a, &b}, what.c_str(), loc, partition_broadcast);
  const DType dtype = o.dtype.value_or(promoted(t, {&a, &b}));
  if (ir::is_bitwise(kind)) check_bitwise_dtypes(t, name, a, b, dtype, loc);
  ir::BinaryOp op{-1, kind, across_partitions(t, a, shape[0], loc), across_partitions(t, b, shape[0], loc),
                  checked_mask(t, o.mask, shape, fmt::format("nl::{}", name).c_str(), loc), loc, engine};
  op.result = t.add_tile(shape, dtype);
  t.emit(std::move(op));
  return tile(op.result);
}

tile activation_op(ir::ActKind kind, const operand& data, const operand& bias, const operand& scale,
                   const op_options& o, const std::string& name, source_location sl,
                   ir::Engine engine = ir::Engine::unknown) {
  Trace& t = Trace::current(name.c_str(), sl);
  const SourceLoc loc = SourceLoc::from(sl);
  if (data.is_scalar()) {
    t.fail("err_scalar_only_operation", loc, fmt::format("{} needs a tile operand, got a scalar", name));
  }
  const Shape& shape = tile_info(t, data.tile_id).shape;
  for (const operand* s : {&bias, &scale}) {
    if (s->is_scalar()) continue;
    const Shape& ss = tile_info(t, s->tile_id).shape;
    if (ss[0] != shape[0]) {
      t.fail("err_num_partition_mismatch", loc,
             fmt::format("{}: bias and scale tiles need {} partitions like the data, got {}", name, shape[0], ss[0]));
    }
    for (std::size_t d = 1; d < ss.size(); ++d) {
      if (ss[d] != 1) {
        t.fail("err_free_dim_mismatch", loc,
               fmt::format("{}: bias and scale are a scalar or a [P, 1] tile, got {}", name, shape_str(ss)));
      }
    }
  }
  const DType dtype = o.dtype.value_or(tile_info(t, data.tile_id).dtype);
  ir::ActivationOp op{-1, kind, to_ir(t, data, loc), to_ir(t, scale, loc), to_ir(t, bias, loc),
                      checked_mask(t, o.mask, shape, name.c_str(), loc), loc, engine};
  op.result = t.add_tile(shape, dtype);
  t.emit(std::move(op));
  return tile(op.result);
}

tile reduce(ir::ReduceKind kind, const operand& x, const axes& a, std::optional<DType> dtype, const predicate& mask,
            bool keepdims, source_location sl) {
  const char* name = ir::reduce_name(kind);
  Trace& t = Trace::current(name, sl);
  const SourceLoc loc = SourceLoc::from(sl);
  if (x.is_scalar()) t.fail("err_scalar_only_operation", loc, fmt::format("nl::{} needs a tile, got a scalar", name));
  const ir::TileInfo& ti = tile_info(t, x.tile_id);
  check_tile_scope(t, x.tile_id, loc);
  std::vector<int> list = a.list;
  std::sort(list.begin(), list.end());
  list.erase(std::unique(list.begin(), list.end()), list.end());
  for (int ax : list) {
    if (ax == 0) {
      t.fail("err_unsupported_reduction_axis", loc,
             fmt::format("nl::{} over axis 0 of a tile of shape {}: axis 0 is the partition dimension; reductions "
                         "run over free axes (1..{})",
                         name, shape_str(ti.shape), ti.shape.size() - 1));
    }
    if (ax < 0 || ax >= static_cast<int>(ti.shape.size())) {
      t.fail("err_unsupported_reduction_axis", loc,
             fmt::format("nl::{} over axis {} of a tile of shape {}; valid free axes are 1..{}", name, ax,
                         shape_str(ti.shape), ti.shape.size() - 1));
    }
  }
  Shape shape;
  for (std::size_t d = 0; d < ti.shape.size(); ++d) {
    const bool reduced = std::find(list.begin(), list.end(), static_cast<int>(d)) != list.end();
    if (!reduced) shape.push_back(ti.shape[d]);
    else if (keepdims) shape.push_back(1);
  }
  ir::ReduceOp op{-1, kind, x.tile_id, list, keepdims, checked_mask(t, mask, shape, fmt::format("nl::{}", name).c_str(), loc), loc};
  op.result = t.add_tile(shape, dtype.value_or(ti.dtype));
  t.emit(std::move(op));
  return tile(op.result);
}

/** A tile in SBUF (the Tensor engine reads its operands there). */
int sbuf_tile(Trace& t, const operand& o, const char* op, const char* role, const SourceLoc& loc) {
  if (o.is_scalar()) t.fail("err_scalar_only_operation", loc, fmt::format("{}: the {} is a scalar; it must be a tile", op, role));
  check_tile_scope(t, o.tile_id, loc);
  const ir::TileInfo& ti = tile_info(t, o.tile_id);
  if (ti.memory != ir::Memory::sbuf) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("{} reads its {} from SBUF; tile %t{} is in {}: copy it to SBUF with nl::copy first", op, role,
                       o.tile_id, memory_label(ti.memory)));
  }
  if (ti.shape.size() != 2) {
    t.fail("err_unsupported_tile_rank", loc,
           fmt::format("{}: the {} must be a 2-D tile [P, F], got shape {}", op, role, shape_str(ti.shape)));
  }
  return o.tile_id;
}

int transpose_op(Trace& t, int x, ir::Memory into, DType dtype, const char* op, const SourceLoc& loc,
                 ir::Engine engine = ir::Engine::unknown) {
  const Shape& s = tile_info(t, x).shape;
  if (s[1] > tile_limits::pmax) {
    t.fail("err_size_of_dimension_exceed_arch_limit", loc,
           fmt::format("{} of a tile of shape {}: the free size {} becomes the partition count, at most {}", op,
                       shape_str(s), s[1], tile_limits::pmax));
  }
  const int result = t.add_tile({s[1], s[0]}, dtype, into);
  t.emit(ir::TransposeOp{result, x, loc, engine});
  return result;
}

/** stationary2 / moving2: the second row pair of a double_row matmul (-1: none). */
tile matmul_op(Trace& t, int stationary, int moving, const predicate& mask, const char* op, const SourceLoc& loc,
               int stationary2 = -1, int moving2 = -1) {
  const Shape& st = tile_info(t, stationary).shape;
  const Shape& mv = tile_info(t, moving).shape;
  if (st[0] != mv[0]) {
    t.fail("err_num_partition_mismatch", loc,
           fmt::format("{}: the contraction (partition) sizes differ: stationary {} has K={}, moving {} has K={}", op,
                       shape_str(st), st[0], shape_str(mv), mv[0]));
  }
  if (st[1] > tile_limits::gemm_stationary_fmax) {
    t.fail("err_size_of_dimension_exceed_arch_limit", loc,
           fmt::format("{}: stationary free size {} exceeds gemm_stationary_fmax {} (stationary shape {})", op, st[1],
                       tile_limits::gemm_stationary_fmax, shape_str(st)));
  }
  if (mv[1] > tile_limits::gemm_moving_fmax) {
    t.fail("err_size_of_dimension_exceed_arch_limit", loc,
           fmt::format("{}: moving free size {} exceeds gemm_moving_fmax {} (moving shape {})", op, mv[1],
                       tile_limits::gemm_moving_fmax, shape_str(mv)));
  }
  const Shape shape{st[1], mv[1]};
  ir::MatmulOp m{-1, stationary, moving, checked_mask(t, mask, shape, op, loc), loc, stationary2, moving2};
  m.result = t.add_tile(shape, DType::fp32, ir::Memory::psum);
  t.emit(std::move(m));
  return tile(m.result);
}

}  // namespace

namespace detail {
/** make_access for the other files of the language (dynamic_control.cpp). */
ir::Access resolve_access(Trace& t, const access& a) { return make_access(t, a); }
}  // namespace detail

operand::operand(const access& a, source_location l) : scalar(0), scalar_is_float(true), loc(l) {
  Trace& t = Trace::current("read", l);
  tile_id = read_window(t, a, SourceLoc::from(l));
}

operand::operand(const tensor& x, source_location l) : operand(x.all(l), l) {}

// ---- tile subscripts and broadcasts ----

namespace {

/** Smallest and largest value of `e` over its tile axes, every loop's iterations and the launch grid. */
std::pair<std::int64_t, std::int64_t> index_range(Trace& t, const ir::IndexExpr& e) {
  std::int64_t lo = e.constant, hi = e.constant;
  for (const ir::Term& term : e.terms) {
    const auto i = static_cast<std::size_t>(term.sym.index);
    std::int64_t extent = 1;
    switch (term.sym.kind) {
      case ir::Sym::Kind::axis: extent = e.shape.at(i); break;
      case ir::Sym::Kind::loop: extent = t.ir().loops.at(i).trip; break;
      case ir::Sym::Kind::program_id: extent = t.grid().at(i); break;
      case ir::Sym::Kind::rank: extent = t.world_size(); break;
    }
    const std::int64_t last = term.coeff * (extent - 1);
    lo += std::min<std::int64_t>(0, last);
    hi += std::max<std::int64_t>(0, last);
  }
  return {lo, hi};
}

/** result[c] = data[indices(c)], after checking every index stays inside the tile. */
int view_op(Trace& t, int data, std::vector<ir::IndexExpr> indices, const Shape& shape, const SourceLoc& loc) {
  const ir::TileInfo from = tile_info(t, data);
  for (std::size_t d = 0; d < indices.size(); ++d) {
    const auto [lo, hi] = index_range(t, indices[d]);
    if (lo < 0 || hi >= from.shape[d]) {
      t.fail("err_tensor_access_out_of_bound", loc,
             fmt::format("tile %t{} {}: index {} of dimension {} ranges over [{}, {}]; the valid range is [0, {}]",
                         data, shape_str(from.shape), ir::to_string(indices[d]), d, lo, hi, from.shape[d] - 1));
    }
  }
  // The partitions of the result are the tile's own: its axis 0 may only walk dimension 0.
  for (std::size_t d = 1; d < indices.size() && shape[0] > 1; ++d) {
    if (indices[d].coeff_of({ir::Sym::Kind::axis, 0}) != 0 && indices[d].shape.at(0) > 1) {
      t.fail("err_num_partition_mismatch", loc,
             fmt::format("tile %t{} {}: the subscript takes the {} partitions of the result from free dimension {}; "
                         "a tile subscript keeps the partition dimension first (select one partition with "
                         "nl::ds(p, 1))",
                         data, shape_str(from.shape), shape[0], d));
    }
  }
  check_partition_limit(t, shape, loc);
  const int result = t.add_tile(shape, from.dtype, from.memory);
  t.emit(ir::ViewOp{result, data, std::move(indices), loc});
  return result;
}

}  // namespace

tile tile::subscript(std::vector<index_arg> subs) const {
  const source_location sl = subs.front().loc;
  Trace& t = Trace::current("tile[]", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  check_tile_scope(t, id_, loc);
  const Shape dims = tile_info(t, id_).shape;
  resolved r = resolve_subscripts(t, fmt::format("tile %t{}", id_), dims, std::move(subs), sl);
  return tile(view_op(t, id_, std::move(r.indices), r.shape, loc));
}

tile tile::broadcast_to(const Shape& shape, source_location loc) const {
  return nki::language::broadcast_to(*this, shape, {}, loc);
}

tile broadcast_to(const operand& x, const Shape& shape, const op_options& o, source_location sl) {
  Trace& t = Trace::current("broadcast_to", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  if (x.is_scalar()) t.fail("err_scalar_only_operation", loc, "nl::broadcast_to needs a tile, got a scalar");
  check_tile_scope(t, x.tile_id, loc);
  const Shape from = tile_info(t, x.tile_id).shape;
  if (shape.size() != from.size()) {
    t.fail("err_invalid_shape", loc,
           fmt::format("nl::broadcast_to of a tile of shape {} to {}: the target shape has the tile's rank ({})",
                       shape_str(from), shape_str(shape), from.size()));
  }
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == from[d] || (from[d] == 1 && shape[d] > 0)) continue;
    t.fail(d == 0 ? "err_num_partition_mismatch" : "err_free_dim_mismatch", loc,
           fmt::format("nl::broadcast_to of a tile of shape {} to {}: dimension {} of size {} is neither {} nor 1",
                       shape_str(from), shape_str(shape), d, from[d], shape[d]));
  }
  int result = x.tile_id;
  if (shape != from) {
    std::vector<ir::IndexExpr> indices;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (from[d] == 1) {  // every coordinate reads element 0
        indices.push_back(ir::IndexExpr::constant_of(0));
        continue;
      }
      indices.push_back(tile_axis(d, shape));
    }
    result = view_op(t, x.tile_id, std::move(indices), shape, loc);
  }
  if ((o.dtype && *o.dtype != tile_info(t, result).dtype) || !o.mask.empty())
    return copy(tile(result), {.dtype = o.dtype, .mask = o.mask}, sl);
  return tile(result);
}

tile expand_dims(const operand& x, int axis, source_location sl) {
  Trace& t = Trace::current("expand_dims", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  if (x.is_scalar()) t.fail("err_scalar_only_operation", loc, "nl::expand_dims needs a tile, got a scalar");
  check_tile_scope(t, x.tile_id, loc);
  const Shape from = tile_info(t, x.tile_id).shape;
  if (axis < 1 || static_cast<std::size_t>(axis) > from.size()) {
    t.fail("err_invalid_shape", loc,
           fmt::format("nl::expand_dims of a tile of shape {} at axis {}: the axis must be in 1..{} (dimension 0 "
                       "is the partition dimension)",
                       shape_str(from), axis, from.size()));
  }
  Shape shape = from;
  shape.insert(shape.begin() + axis, 1);
  std::vector<ir::IndexExpr> indices;  // data dimension d is read at result axis d, or d + 1 past the new one
  for (std::size_t d = 0; d < from.size(); ++d)
    indices.push_back(tile_axis(d < static_cast<std::size_t>(axis) ? d : d + 1, shape));
  return tile(view_op(t, x.tile_id, std::move(indices), shape, loc));
}

namespace {
void write_window(const access& dst, const operand& value, bool accumulate) {
  // Assignment operators take no source_location: the window's subscript is on the user's line.
  const source_location sl = dst.loc();
  Trace& t = Trace::current(accumulate ? "+=" : "=", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  const ir::TensorDecl& decl = t.ir().tensors.at(static_cast<std::size_t>(dst.tensor()));
  if (ir::is_hbm(decl.memory)) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("tensor {} is in {}: write HBM with nl::store; `=` and `+=` write on-chip arrays", decl.name,
                       memory_label(decl.memory)));
  }
  ir::Access acc = make_access(t, dst);
  int v = value.tile_id;
  if (value.is_scalar()) {  // a scalar fills the window
    v = t.add_tile(acc.shape, decl.dtype);
    t.emit(ir::ActivationOp{v, ir::ActKind::copy, {-1, value.scalar, value.scalar_is_float}, {-1, 1.0, true},
                            {-1, 0.0, true}, {}, loc});
  } else {
    check_tile_scope(t, v, loc);
  }
  const Shape& vs = tile_info(t, v).shape;
  if (vs[0] != acc.shape[0]) {
    t.fail("err_num_partition_mismatch", loc,
           fmt::format("writing a tile of {} partitions into a window of {} partitions of tensor {}", vs[0],
                       acc.shape[0], decl.name));
  }
  if (!fits_tile(acc.shape, vs)) {
    t.fail("err_store_shape_mismatch", loc,
           fmt::format("writing a tile of shape {} into a window of shape {} of tensor {}", shape_str(vs),
                       shape_str(acc.shape), decl.name));
  }
  // `buf[...] = op(..., mask=m)`: the op writes the window itself, so where its mask is off the
  // window keeps what it held (NKI), rather than receiving the op's undefined elements.
  ir::Predicate mask;
  if (!value.is_scalar() && !t.ir().body.empty() && ir::tile_defined(t.ir().body.back()) == v) {
    std::visit([&](const auto& o) {
      if constexpr (requires { o.mask; }) mask = o.mask;
    }, t.ir().body.back());
  }
  t.emit(ir::StoreOp{std::move(acc), v, std::move(mask), accumulate, loc});
}
}  // namespace

access& access::operator=(const operand& value) {
  write_window(*this, value, false);
  return *this;
}
access& access::operator=(const access& value) { return *this = operand(value, value.loc()); }
access& access::operator=(const tile& value) { return *this = operand(value, loc_); }
access& access::operator+=(const operand& value) {
  write_window(*this, value, true);
  return *this;
}

// ---- data movement ----

tile load(const access& src, const load_options& o, source_location sl) {
  Trace& t = Trace::current("load", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  const ir::TensorDecl& decl = t.ir().tensors.at(static_cast<std::size_t>(src.tensor()));
  if (!ir::is_hbm(decl.memory)) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("nl::load reads HBM; tensor {} is in {} (use it as an operand, or nl::copy it)", decl.name,
                       memory_label(decl.memory)));
  }
  ir::Access a = make_access(t, src);
  const Shape shape = a.shape;
  ir::LoadOp op{-1, std::move(a), checked_mask(t, o.mask, shape, "nl::load", loc), loc};
  op.result = t.add_tile(shape, decl.dtype);
  const int loaded = op.result;
  t.emit(std::move(op));
  // The conversion computes only what the load did: masked-off elements stay undefined, not read.
  if (o.dtype && *o.dtype != decl.dtype) return copy(tile(loaded), {.dtype = o.dtype, .mask = o.mask}, sl);
  return tile(loaded);
}

tile load(const tensor& src, const load_options& o, source_location loc) { return load(src.all(loc), o, loc); }

void store(const access& dst, const operand& value, const store_options& o, source_location sl) {
  Trace& t = Trace::current("store", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  const ir::TensorDecl& decl = t.ir().tensors.at(static_cast<std::size_t>(dst.tensor()));
  if (!ir::is_hbm(decl.memory)) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("nl::store writes HBM; tensor {} is in {} (write on-chip arrays with `=`)", decl.name,
                       memory_label(decl.memory)));
  }
  if (decl.memory == ir::Memory::constant_hbm) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("nl::store into tensor {}, a shared constant: constants are read-only", decl.name));
  }
  if (value.is_scalar()) {
    t.fail("err_scalar_only_operation", loc, "nl::store writes a tile; got a scalar (fill a tile first)");
  }
  check_tile_scope(t, value.tile_id, loc);
  ir::Access a = make_access(t, dst);
  const ir::TileInfo& v = tile_info(t, value.tile_id);
  if (v.shape[0] != a.shape[0]) {
    t.fail("err_num_partition_mismatch", loc,
           fmt::format("store of a tile with {} partitions into an access of {} partitions", v.shape[0], a.shape[0]));
  }
  if (!fits_tile(a.shape, v.shape)) {
    t.fail("err_store_shape_mismatch", loc,
           fmt::format("store of a tile of shape {} into an access of shape {}", shape_str(v.shape),
                       shape_str(a.shape)));
  }
  const Shape shape = a.shape;
  t.emit(ir::StoreOp{std::move(a), value.tile_id, checked_mask(t, o.mask, shape, "nl::store", loc), false, loc});
}

tile copy(const operand& x, const op_options& o, source_location loc) {
  return activation_op(ir::ActKind::copy, x, 0.0, 1.0, o, "nl::copy", loc);
}

// ---- elementwise ----

tile binary_fn::operator()(const operand& a, const operand& b, const op_options& o, source_location loc) const {
  return binary(kind, a, b, o, loc);
}
tile unary_fn::operator()(const operand& x, const op_options& o, source_location loc) const {
  return activation_op(kind, x, 0.0, 1.0, o, std::string("nl::") + ir::act_name(kind), loc);
}

tile operator+(const operand& a, const operand& b) { return binary(ir::BinaryKind::add, a, b, {}, a.loc); }
tile operator-(const operand& a, const operand& b) { return binary(ir::BinaryKind::subtract, a, b, {}, a.loc); }
tile operator*(const operand& a, const operand& b) { return binary(ir::BinaryKind::multiply, a, b, {}, a.loc); }
tile operator/(const operand& a, const operand& b) { return binary(ir::BinaryKind::divide, a, b, {}, a.loc); }

tile shared_identity_matrix(std::int64_t n, DType dtype, source_location loc) {
  Trace& t = Trace::current("shared_identity_matrix", loc);
  if (n <= 0 || n > tile_limits::pmax) {
    t.fail("err_num_partition_exceed_arch_limit", SourceLoc::from(loc),
           fmt::format("nl::shared_identity_matrix({}): n must be in 1..{} (the partitions of an SBUF tile)", n,
                       tile_limits::pmax));
  }
  const mgrid_pair g = mgrid(n, n, loc);
  return equal(isa::iota(g.p - g.x, DType::int32, {}, loc), 0, {.dtype = dtype}, loc);
}

tile invert(const operand& x, const op_options& o, source_location loc) {
  // XOR with all ones: -1 wraps to every bit set in the result's integer type.
  return binary(ir::BinaryKind::bitwise_xor, x, operand(-1, loc), o, loc, "invert");
}
tile logical_not(const operand& x, const op_options& o, source_location loc) {
  return binary(ir::BinaryKind::logical_xor, x, operand(1, loc), o, loc, "logical_not");
}
tile prelu(const operand& x, const operand& alpha, const op_options& o, source_location loc) {
  if (x.is_scalar()) {
    Trace::current("prelu", loc).fail("err_scalar_only_operation", SourceLoc::from(loc), "nl::prelu needs a tile x, got a scalar");
  }
  return binary(ir::BinaryKind::prelu, x, alpha, o, loc);
}

tile where(const operand& cond, const operand& x, const operand& y, const op_options& o, source_location sl) {
  Trace& t = Trace::current("where", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  if (cond.is_scalar()) t.fail("err_scalar_only_operation", loc, "nl::where needs a tile condition, got a scalar");
  const Shape shape = broadcast_operands(t, {&cond, &x, &y}, "nl::where", loc, true);
  DType dtype;
  if (x.is_scalar() && y.is_scalar()) dtype = promote_scalar(promote_scalar(DType::boolean, x.scalar_is_float), y.scalar_is_float);
  else dtype = promoted(t, {&x, &y});
  ir::SelectOp op{-1, across_partitions(t, cond, shape[0], loc), {}, across_partitions(t, x, shape[0], loc),
                  across_partitions(t, y, shape[0], loc), checked_mask(t, o.mask, shape, "nl::where", loc), loc};
  op.result = t.add_tile(shape, o.dtype.value_or(dtype));
  t.emit(std::move(op));
  return tile(op.result);
}

// ---- reductions ----

tile sum(const operand& x, const axes& a, const reduce_options& o, source_location loc) {
  return reduce(ir::ReduceKind::sum, x, a, o.dtype, o.mask, o.keepdims, loc);
}
tile max(const operand& x, const axes& a, const reduce_options& o, source_location loc) {
  return reduce(ir::ReduceKind::max, x, a, o.dtype, o.mask, o.keepdims, loc);
}
tile min(const operand& x, const axes& a, const reduce_options& o, source_location loc) {
  return reduce(ir::ReduceKind::min, x, a, o.dtype, o.mask, o.keepdims, loc);
}
tile mean(const operand& x, const axes& a, const reduce_options& o, source_location loc) {
  return reduce(ir::ReduceKind::mean, x, a, o.dtype, o.mask, o.keepdims, loc);
}

tile prod(const operand& x, const axes& a, const reduce_options& o, source_location loc) {
  return reduce(ir::ReduceKind::prod, x, a, o.dtype, o.mask, o.keepdims, loc);
}
tile var(const operand& x, const axes& a, const reduce_options& o, source_location loc) {
  // NKI ignores keepdims here: the result always keeps the reduced axes.
  return reduce(ir::ReduceKind::var, x, a, o.dtype, o.mask, true, loc);
}
tile all(const operand& x, const axes& a, const reduce_options& o, source_location loc) {
  return reduce(ir::ReduceKind::all, x, a, o.dtype, o.mask, o.keepdims, loc);
}

// ---- matmul and transpose ----

tile matmul(const operand& x, const operand& y, bool transpose_x, const op_options& o, source_location sl) {
  Trace& t = Trace::current("matmul", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  int stationary = sbuf_tile(t, x, "nl::matmul", "x operand", loc);
  const int moving = sbuf_tile(t, y, "nl::matmul", "y operand", loc);
  if (!transpose_x) {
    // x is [M, K]: the Tensor engine wants it as [K, M]; transpose through PSUM and copy back to SBUF.
    const Shape& xs = tile_info(t, stationary).shape;
    const Shape& ys = tile_info(t, moving).shape;
    if (xs[1] != ys[0]) {
      t.fail("err_num_partition_mismatch", loc,
             fmt::format("nl::matmul: x {} has K={} (its last dimension) and y {} has K={} (its first)", shape_str(xs),
                         xs[1], shape_str(ys), ys[0]));
    }
    if (xs[1] > tile_limits::pmax) {
      t.fail("err_size_of_dimension_exceed_arch_limit", loc,
             fmt::format("nl::matmul: x {} has K={}; the contraction size is at most {}", shape_str(xs), xs[1],
                         tile_limits::pmax));
    }
    const int tp = transpose_op(t, stationary, ir::Memory::psum, tile_info(t, stationary).dtype, "nl::matmul", loc);
    stationary = t.add_tile(tile_info(t, tp).shape, tile_info(t, tp).dtype);
    t.emit(ir::ActivationOp{stationary, ir::ActKind::copy, {tp, 0, true}, {-1, 1.0, true}, {-1, 0.0, true}, {}, loc});
  }
  return matmul_op(t, stationary, moving, o.mask, "nl::matmul", loc);
}

tile transpose(const operand& x, const op_options& o, source_location sl) {
  Trace& t = Trace::current("transpose", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  const int id = sbuf_tile(t, x, "nl::transpose", "operand", loc);
  return tile(transpose_op(t, id, ir::Memory::sbuf, o.dtype.value_or(tile_info(t, id).dtype), "nl::transpose", loc));
}

}  // namespace nki::language

namespace nki::isa {

namespace {
/** A double_row operand: an fp8 SBUF tile [K, 2, F] (the contraction split over K and the pair). */
int double_row_operand(Trace& t, const nl::operand& x, const char* role, const SourceLoc& loc) {
  constexpr const char* name = "isa::nc_matmul with perf_mode double_row";
  if (x.is_scalar()) t.fail("err_scalar_only_operation", loc, fmt::format("{}: the {} is a scalar; it must be a tile", name, role));
  const ir::TileInfo& ti = tile_info(t, x.tile_id);
  if (ti.memory != ir::Memory::sbuf) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("{} reads its {} from SBUF; tile %t{} is in {}", name, role, x.tile_id, nl::memory_label(ti.memory)));
  }
  if (ti.shape.size() != 3 || ti.shape[1] != 2) {
    t.fail("err_unsupported_tile_rank", loc,
           fmt::format("{}: the {} must be a [K, 2, F] tile (the contraction over K partitions and a pair), got shape {}",
                       name, role, shape_str(ti.shape)));
  }
  if (ti.dtype != DType::fp8_e4m3 && ti.dtype != DType::fp8_e5m2) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("{}: the {} is {}; double_row packs float8_e4m3 or float8_e5m2 pairs", name, role,
                       dtype_name(ti.dtype)));
  }
  return x.tile_id;
}
}  // namespace

namespace {
/** "{a, b}" of a tile_position / tile_size. */
std::string pair_str(const std::vector<std::int64_t>& v) { return fmt::format("{{{}}}", fmt::join(v, ", ")); }

/**
 * Tiling mode: which rows and columns of the 128x128 PE array the matmul just traced uses, as
 * nisa.nc_matmul's tile_position and tile_size say (both or neither; rows in 2x 64 or, from
 * NeuronCore-v3, 4x 32 tiles; columns whole). The stationary operand must fit the tile.
 */
void set_pe_tile(Trace& t, ir::MatmulOp& m, const nc_matmul_options& o, const SourceLoc& loc) {
  constexpr const char* name = "isa::nc_matmul";
  if (o.tile_position.empty() && o.tile_size.empty()) return;
  if (o.tile_position.empty() != o.tile_size.empty()) {
    t.fail("err_invalid_tile_position", loc,
           fmt::format("{} with tile_position {} and tile_size {}: tiling mode needs both set, or neither", name,
                       pair_str(o.tile_position), pair_str(o.tile_size)));
  }
  if (o.tile_position.size() != 2) {
    t.fail("err_invalid_tile_position", loc,
           fmt::format("{}: tile_position {} must be a pair (start_row, start_column)", name, pair_str(o.tile_position)));
  }
  if (o.tile_size.size() != 2) {
    t.fail("err_invalid_tile_size", loc,
           fmt::format("{}: tile_size {} must be a pair (row_size, column_size)", name, pair_str(o.tile_size)));
  }
  const std::int64_t row = o.tile_position[0], column = o.tile_position[1], rows = o.tile_size[0], columns = o.tile_size[1];
  const bool quarter = rows == 32 && t.nc_version() >= 3;  // 4x 32-row tiles from NeuronCore-v3
  if (rows != 128 && rows != 64 && !quarter) {
    t.fail("err_invalid_tile_size", loc,
           fmt::format("{}: tile_size {} has row_size {}; the PE rows tile as 128, 64 or (NeuronCore-v3 and newer) 32",
                       name, pair_str(o.tile_size), rows));
  }
  if (columns != 128) {
    t.fail("err_invalid_tile_size", loc,
           fmt::format("{}: tile_size {} has column_size {}; it must be 128", name, pair_str(o.tile_size), columns));
  }
  if (column != 0) {
    t.fail("err_invalid_tile_position", loc,
           fmt::format("{}: tile_position {} has start_column {}; it must be 0", name, pair_str(o.tile_position), column));
  }
  if (row < 0 || row % rows != 0 || row + rows > 128) {
    t.fail("err_invalid_tile_position", loc,
           fmt::format("{}: tile_position {} has start_row {}; it must be a multiple of row_size {} below 128", name,
                       pair_str(o.tile_position), row, rows));
  }
  const Shape& st = tile_info(t, m.stationary).shape;
  if (st[0] > rows || st[1] > columns) {
    t.fail("err_invalid_tile_size", loc,
           fmt::format("{}: the stationary operand {} does not fit tile_size {} (K <= row_size, M <= column_size)", name,
                       shape_str(st), pair_str(o.tile_size)));
  }
  m.tile_row = row, m.tile_column = column, m.tile_rows = rows, m.tile_columns = columns;
}
}  // namespace

nl::tile nc_matmul(const nl::operand& stationary, const nl::operand& moving, const nc_matmul_options& o,
                   std::source_location sl) {
  Trace& t = Trace::current("nc_matmul", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  // Transpose mode is data movement from NeuronCore-v3 (in the stationary dtype); on v2 only a label.
  const bool transpose = o.is_transpose && t.nc_version() >= 3;
  if (o.is_transpose && o.perf_mode != matmul_perf_mode::none) {
    t.fail("err_unsupported_perf_mode", loc, "isa::nc_matmul with is_transpose: transpose mode has no perf_mode double_row");
  }
  if (o.dtype && *o.dtype != DType::fp32 && !transpose) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("isa::nc_matmul with dtype={}: the result accumulates in PSUM as fp32", dtype_name(*o.dtype)));
  }
  if (o.perf_mode == matmul_perf_mode::none) {
    const int st = nl::sbuf_tile(t, stationary, "isa::nc_matmul", "stationary operand", loc);
    const int mv = nl::sbuf_tile(t, moving, "isa::nc_matmul", "moving operand", loc);
    const DType st_dtype = tile_info(t, st).dtype;
    if (transpose && o.dtype && *o.dtype != st_dtype) {
      t.fail("err_unsupported_dtype", loc,
             fmt::format("isa::nc_matmul with is_transpose and dtype={}: transpose mode moves the {} stationary "
                         "operand bit-accurately, so the result is {}",
                         dtype_name(*o.dtype), dtype_name(st_dtype), dtype_name(st_dtype)));
    }
    const nl::tile r = nl::matmul_op(t, st, mv, o.mask, "isa::nc_matmul", loc);
    auto& m = std::get<ir::MatmulOp>(t.ir().body.back());
    set_pe_tile(t, m, o, loc);
    m.transpose = transpose;
    m.stationary_onezero = o.is_stationary_onezero;
    m.moving_onezero = o.is_moving_onezero;
    if (transpose) t.ir().tiles[static_cast<std::size_t>(r.id())].dtype = st_dtype;
    return r;
  }
  if (const int gen = t.nc_version(); gen < 3) {
    t.fail("err_unsupported_perf_mode", loc,
           fmt::format("isa::nc_matmul with perf_mode double_row needs NeuronCore-v3 or newer (trn2, trn3); the target "
                       "is gen{}",
                       gen));
  }
  const nl::tile st(double_row_operand(t, stationary, "stationary operand", loc));
  const nl::tile mv(double_row_operand(t, moving, "moving operand", loc));
  // The two rows of each pair as [K, F] views, contracted together by one instruction.
  const nl::tile st0 = st[nl::_, 0, nl::_], st1 = st[nl::_, 1, nl::_];
  const nl::tile mv0 = mv[nl::_, 0, nl::_], mv1 = mv[nl::_, 1, nl::_];
  const nl::tile r = nl::matmul_op(t, st0.id(), mv0.id(), o.mask, "isa::nc_matmul", loc, st1.id(), mv1.id());
  auto& m = std::get<ir::MatmulOp>(t.ir().body.back());
  set_pe_tile(t, m, o, loc);
  m.stationary_onezero = o.is_stationary_onezero;
  m.moving_onezero = o.is_moving_onezero;
  return r;
}

namespace {

ir::Engine ir_engine(engine e) {
  switch (e) {
    case engine::unknown: return ir::Engine::unknown;
    case engine::tensor: return ir::Engine::tensor;
    case engine::vector: return ir::Engine::vector;
    case engine::scalar: return ir::Engine::scalar;
    case engine::gpsimd: return ir::Engine::gpsimd;
  }
  return ir::Engine::unknown;
}

const char* reduce_cmd_name(reduce_cmd c) {
  switch (c) {
    case reduce_cmd::idle: return "idle";
    case reduce_cmd::reset: return "reset";
    case reduce_cmd::reduce: return "reduce";
    case reduce_cmd::reset_reduce: return "reset_reduce";
    case reduce_cmd::load_reduce: return "load_reduce";
  }
  return "?";
}

/** An engine NKI does not offer for `op`: err_unsupported_engine, naming the ones it does. */
void check_engine(Trace& t, engine e, std::initializer_list<engine> allowed, const char* op, const char* names,
                  const SourceLoc& loc) {
  if (e == engine::unknown) return;
  for (engine a : allowed)
    if (a == e) return;
  t.fail("err_unsupported_engine", loc,
         fmt::format("{} cannot run on the {} engine; it runs on {}", op, ir::engine_name(ir_engine(e)), names));
}

/** GpSimd has no port to PSUM: an operand there needs the Vector or Scalar engine. */
void check_gpsimd_memory(Trace& t, engine e, std::initializer_list<const nl::operand*> ops, const char* op,
                         const SourceLoc& loc) {
  if (e != engine::gpsimd) return;
  for (const nl::operand* o : ops) {
    if (o->is_scalar() || tile_info(t, o->tile_id).memory != ir::Memory::psum) continue;
    t.fail("err_unsupported_memory", loc,
           fmt::format("{} on the GpSimd engine reads tile %t{} in PSUM; GpSimd cannot access PSUM, use the Vector or "
                       "Scalar engine",
                       op, o->tile_id));
  }
}

ir::ReduceKind reduce_kind_of(Trace& t, const nl::binary_fn& op, const char* name, const SourceLoc& loc) {
  switch (op.kind) {
    case ir::BinaryKind::add: return ir::ReduceKind::sum;
    case ir::BinaryKind::maximum: return ir::ReduceKind::max;
    case ir::BinaryKind::minimum: return ir::ReduceKind::min;
    default: break;
  }
  t.fail("err_unsupported_reduction_op", loc,
         fmt::format("{} with reduce op {}; supported are add, maximum, minimum", name, ir::binary_name(op.kind)));
}

/**
 * The accumulation an instruction does as it writes `values` (fp32): reduce `kind` over every
 * free axis, negated if asked, written into `res` ([P, 1] or [P]). Emitted as fused ops:
 * part of the instruction that made `values`.
 */
void write_reduce_res(Trace& t, int values, ir::ReduceKind kind, bool negate, const nl::access& res,
                      ir::Engine engine, const char* op, const SourceLoc& loc) {
  const Shape vs = tile_info(t, values).shape;
  const ir::TensorDecl& decl = t.ir().tensors.at(static_cast<std::size_t>(res.tensor()));
  if (ir::is_hbm(decl.memory)) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("{}: reduce_res is tensor {} in {}; it must be an SBUF or PSUM tile", op, decl.name,
                       ir::memory_name(decl.memory)));
  }
  const ir::Access window = nl::make_access(t, res);
  std::int64_t per_partition = 1;
  for (std::size_t d = 1; d < window.shape.size(); ++d) per_partition *= window.shape[d];
  if (window.shape[0] != vs[0]) {
    t.fail("err_num_partition_mismatch", loc,
           fmt::format("{}: reduce_res {} of tensor {} has {} partitions; the data has {}", op,
                       shape_str(window.shape), decl.name, window.shape[0], vs[0]));
  }
  if (per_partition != 1) {
    t.fail("err_free_dim_mismatch", loc,
           fmt::format("{}: reduce_res is a [{}, 1] tile (one element per partition), got {} of tensor {}", op, vs[0],
                       shape_str(window.shape), decl.name));
  }
  std::vector<int> axes;
  for (int d = 1; d < static_cast<int>(vs.size()); ++d) axes.push_back(d);
  // The result takes the window's rank: [P] for a [P] window, [P, 1, ...] otherwise.
  const bool keepdims = window.shape.size() == vs.size();
  if (!keepdims && window.shape.size() != 1) {
    t.fail("err_store_shape_mismatch", loc,
           fmt::format("{}: reduce_res {} of tensor {} is neither [P] nor of the data's rank {}", op,
                       shape_str(window.shape), decl.name, vs.size()));
  }
  Shape rs{vs[0]};
  if (keepdims) rs.resize(vs.size(), 1);
  ir::ReduceOp r{-1, kind, values, axes, keepdims, {}, loc, engine, true};
  r.result = t.add_tile(rs, DType::fp32);
  int result = r.result;
  if (axes.empty()) {  // a [P] tile: nothing to reduce, the value itself
    ir::ActivationOp c{-1, ir::ActKind::copy, {values, 0, true}, {-1, 1.0, true}, {-1, 0.0, true}, {}, loc, engine, true};
    c.result = result;
    t.emit(std::move(c));
  } else {
    t.emit(std::move(r));
  }
  if (negate) {
    const int neg = t.add_tile(rs, DType::fp32);
    t.emit(ir::ActivationOp{neg, ir::ActKind::negative, {result, 0, true}, {-1, 1.0, true}, {-1, 0.0, true}, {}, loc,
                            engine, true});
    result = neg;
  }
  nl::write_window(res, nl::operand(nl::tile(result), res.loc()), false);
}

/** The fp32 result of an accumulating instruction converted to the dtype it writes (same instruction). */
nl::tile cast_result(Trace& t, int fp32, DType dtype, ir::Engine engine, const SourceLoc& loc) {
  if (dtype == DType::fp32) return nl::tile(fp32);
  const int out = t.add_tile(tile_info(t, fp32).shape, dtype);
  t.emit(ir::ActivationOp{out, ir::ActKind::copy, {fp32, 0, true}, {-1, 1.0, true}, {-1, 0.0, true}, {}, loc, engine,
                          true});
  return nl::tile(out);
}

}  // namespace

nl::tile nc_transpose(const nl::operand& x, const engine_options& o, std::source_location sl) {
  Trace& t = Trace::current("nc_transpose", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  check_engine(t, o.engine, {engine::tensor, engine::vector}, "isa::nc_transpose", "the Tensor or Vector engine", loc);
  if (o.engine == engine::vector) {
    // The Vector engine transposes 32x32 blocks, SBUF or PSUM in, SBUF out.
    if (x.is_scalar()) t.fail("err_scalar_only_operation", loc, "isa::nc_transpose: the operand is a scalar; it must be a tile");
    nl::check_tile_scope(t, x.tile_id, loc);
    const ir::TileInfo& ti = tile_info(t, x.tile_id);
    if (ti.shape.size() != 2) {
      t.fail("err_unsupported_tile_rank", loc,
             fmt::format("isa::nc_transpose: the operand must be a 2-D tile [P, F], got shape {}", shape_str(ti.shape)));
    }
    if (ti.shape[0] > 32 || ti.shape[1] > 32) {
      t.fail("err_size_of_dimension_exceed_arch_limit", loc,
             fmt::format("isa::nc_transpose on the Vector engine of a tile of shape {}: the Vector engine transposes "
                         "at most [32, 32]; use the Tensor engine",
                         shape_str(ti.shape)));
    }
    return nl::tile(nl::transpose_op(t, x.tile_id, ir::Memory::sbuf, o.dtype.value_or(ti.dtype), "isa::nc_transpose",
                                     loc, ir::Engine::vector));
  }
  const int id = nl::sbuf_tile(t, x, "isa::nc_transpose", "operand", loc);
  return nl::tile(
      nl::transpose_op(t, id, ir::Memory::psum, o.dtype.value_or(tile_info(t, id).dtype), "isa::nc_transpose", loc));
}

nl::tile activation(const nl::unary_fn& op, const nl::operand& data, const nl::operand& bias, const nl::operand& scale,
                    const activation_options& o, std::source_location sl) {
  if (!o.reduce_op && !o.reduce_res) {
    return nl::activation_op(op.kind, data, bias, scale, {.dtype = o.dtype, .mask = o.mask}, "isa::activation", sl);
  }
  Trace& t = Trace::current("activation", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  if (!o.reduce_op || !o.reduce_res) {
    t.fail("err_invalid_reduce_res", loc,
           fmt::format("isa::activation: reduce_op and reduce_res go together; got {} without {}",
                       o.reduce_op ? "reduce_op" : "reduce_res", o.reduce_op ? "reduce_res" : "reduce_op"));
  }
  if (o.reduce_op->kind != ir::BinaryKind::add) {
    t.fail("err_unsupported_reduction_op", loc,
           fmt::format("isa::activation reduces with nl::add only; got reduce_op {}", ir::binary_name(o.reduce_op->kind)));
  }
  if (o.reduce_cmd != reduce_cmd::reset_reduce) {
    t.fail("err_unsupported_reduce_cmd", loc,
           fmt::format("isa::activation with reduce_res and reduce_cmd {}: only reset_reduce (registers reset, this "
                       "instruction's sum written out) is supported; state kept across instructions is not",
                       reduce_cmd_name(o.reduce_cmd)));
  }
  if (!o.mask.empty()) {
    t.fail("err_unsupported_expression_in_mask", loc,
           "isa::activation with reduce_res takes no mask: the reduction would read masked-off elements");
  }
  if (data.is_scalar()) t.fail("err_scalar_only_operation", loc, "isa::activation needs a tile operand, got a scalar");
  const DType out = o.dtype.value_or(tile_info(t, data.tile_id).dtype);
  // The engine reduces the fp32 activated values; the result is converted to `out` as it is written.
  const nl::tile f = nl::activation_op(op.kind, data, bias, scale, {.dtype = DType::fp32, .mask = {}},
                                       "isa::activation", sl, ir::Engine::scalar);
  write_reduce_res(t, f.id(), ir::ReduceKind::sum, false, *o.reduce_res, ir::Engine::scalar, "isa::activation", loc);
  return cast_result(t, f.id(), out, ir::Engine::scalar, loc);
}

nl::tile activation_reduce(const nl::unary_fn& op, const nl::operand& data, const nl::binary_fn& reduce_op,
                           const nl::access& reduce_res, const nl::operand& bias, const nl::operand& scale,
                           const nl::op_options& o, std::source_location sl) {
  return activation(op, data, bias, scale,
                    {.dtype = o.dtype, .mask = o.mask, .reduce_op = reduce_op, .reduce_res = reduce_res,
                     .reduce_cmd = reduce_cmd::reset_reduce},
                    sl);
}

nl::tile tensor_tensor(const nl::operand& data1, const nl::operand& data2, const nl::binary_fn& op,
                       const engine_options& o, std::source_location sl) {
  Trace& t = Trace::current("tensor_tensor", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  check_engine(t, o.engine, {engine::vector, engine::gpsimd}, "isa::tensor_tensor", "the Vector or GpSimd engine", loc);
  check_gpsimd_memory(t, o.engine, {&data1, &data2}, "isa::tensor_tensor", loc);
  return nl::binary(op.kind, data1, data2, {.dtype = o.dtype, .mask = o.mask}, sl, nullptr, false, ir_engine(o.engine));
}

namespace {
void check_scalar_operand(Trace& t, const nl::operand& data, const nl::operand& s, const char* op, const SourceLoc& loc) {
  if (s.is_scalar()) return;
  const Shape& ds = t.ir().tiles.at(static_cast<std::size_t>(data.tile_id)).shape;
  const Shape& ss = t.ir().tiles.at(static_cast<std::size_t>(s.tile_id)).shape;
  bool ok = ss[0] == ds[0];
  for (std::size_t d = 1; d < ss.size(); ++d) ok = ok && ss[d] == 1;
  if (!ok) {
    t.fail("err_free_dim_mismatch", loc,
           fmt::format("{}: an operand is a scalar or a [{}, 1] tile, got {}", op, ds[0], shape_str(ss)));
  }
}

/** The engines of tensor_scalar; the Scalar engine does multiply, add, and multiply then add (NeuronCore-v3). */
void check_tensor_scalar_engine(Trace& t, const nl::operand& data, const nl::binary_fn& op0,
                                const nl::binary_fn* op1, const engine_options& o, const SourceLoc& loc) {
  check_engine(t, o.engine, {engine::vector, engine::scalar, engine::gpsimd}, "isa::tensor_scalar",
               "the Vector, Scalar or GpSimd engine", loc);
  check_gpsimd_memory(t, o.engine, {&data}, "isa::tensor_scalar", loc);
  if (o.engine != engine::scalar) return;
  const auto is = [](const nl::binary_fn& f, ir::BinaryKind k) { return f.kind == k || f.kind == ir::BinaryKind::bypass; };
  const bool ok = op1 == nullptr ? is(op0, ir::BinaryKind::multiply) || is(op0, ir::BinaryKind::add)
                                 : is(op0, ir::BinaryKind::multiply) && is(*op1, ir::BinaryKind::add);
  if (!ok) {
    t.fail("err_unsupported_engine", loc,
           fmt::format("isa::tensor_scalar on the Scalar engine with op0 {}{}{}: the Scalar engine does multiply, add, "
                       "or multiply then add; use the Vector engine",
                       ir::binary_name(op0.kind), op1 ? " and op1 " : "", op1 ? ir::binary_name(op1->kind) : ""));
  }
}
}  // namespace

nl::tile tensor_scalar(const nl::operand& data, const nl::binary_fn& op0, const nl::operand& operand0,
                       const engine_options& o, std::source_location sl) {
  Trace& t = Trace::current("tensor_scalar", sl);
  if (data.is_scalar()) t.fail("err_scalar_only_operation", SourceLoc::from(sl), "isa::tensor_scalar needs a tile, got a scalar");
  check_scalar_operand(t, data, operand0, "isa::tensor_scalar", SourceLoc::from(sl));
  check_tensor_scalar_engine(t, data, op0, nullptr, o, SourceLoc::from(sl));
  return nl::binary(op0.kind, data, operand0, {.dtype = o.dtype.value_or(tile_info(t, data.tile_id).dtype), .mask = o.mask}, sl,
                    nullptr, false, ir_engine(o.engine));
}

nl::tile tensor_scalar(const nl::operand& data, const nl::binary_fn& op0, const nl::operand& operand0,
                       const nl::binary_fn& op1, const nl::operand& operand1, const engine_options& o,
                       std::source_location sl) {
  Trace& t = Trace::current("tensor_scalar", sl);
  if (data.is_scalar()) t.fail("err_scalar_only_operation", SourceLoc::from(sl), "isa::tensor_scalar needs a tile, got a scalar");
  check_scalar_operand(t, data, operand0, "isa::tensor_scalar", SourceLoc::from(sl));
  check_scalar_operand(t, data, operand1, "isa::tensor_scalar", SourceLoc::from(sl));
  check_tensor_scalar_engine(t, data, op0, &op1, o, SourceLoc::from(sl));
  // A bypassed stage does nothing: the instruction is the other stage alone (one pass, one rounding).
  if (op1.kind == ir::BinaryKind::bypass) return tensor_scalar(data, op0, operand0, o, sl);
  if (op0.kind == ir::BinaryKind::bypass) return tensor_scalar(data, op1, operand1, o, sl);
  const DType out = o.dtype.value_or(tile_info(t, data.tile_id).dtype);
  // The engine keeps the intermediate in fp32: only the final result is rounded.
  nl::tile mid = nl::binary(op0.kind, data, operand0, {.dtype = DType::fp32, .mask = o.mask}, sl, nullptr, false, ir_engine(o.engine));
  return nl::binary(op1.kind, mid, operand1, {.dtype = out, .mask = o.mask}, sl, nullptr, false, ir_engine(o.engine));
}

nl::tile scalar_tensor_tensor(const nl::operand& data, const nl::binary_fn& op0, const nl::operand& operand0,
                              const nl::binary_fn& op1, const nl::operand& operand1,
                              const scalar_tensor_tensor_options& o, std::source_location sl) {
  Trace& t = Trace::current("scalar_tensor_tensor", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  if (data.is_scalar() || operand1.is_scalar()) {
    t.fail("err_scalar_only_operation", loc, "isa::scalar_tensor_tensor needs tiles for data and operand1, got a scalar");
  }
  check_scalar_operand(t, data, operand0, "isa::scalar_tensor_tensor", loc);
  const DType out = o.dtype.value_or(nl::promoted(t, {&data, &operand1}));
  // The engine keeps the intermediate in fp32: only the final result is rounded.
  const nl::tile mid = o.reverse0 ? nl::binary(op0.kind, operand0, data, {.dtype = DType::fp32, .mask = o.mask}, sl,
                                               nullptr, false, ir::Engine::vector)
                                  : nl::binary(op0.kind, data, operand0, {.dtype = DType::fp32, .mask = o.mask}, sl,
                                               nullptr, false, ir::Engine::vector);
  return o.reverse1 ? nl::binary(op1.kind, operand1, mid, {.dtype = out, .mask = o.mask}, sl, nullptr, false,
                                 ir::Engine::vector)
                    : nl::binary(op1.kind, mid, operand1, {.dtype = out, .mask = o.mask}, sl, nullptr, false,
                                 ir::Engine::vector);
}

nl::tile tensor_scalar_reduce(const nl::operand& data, const nl::binary_fn& op0, const nl::operand& operand0,
                              const nl::binary_fn& reduce_op, const nl::access& reduce_res,
                              const tensor_scalar_reduce_options& o, std::source_location sl) {
  Trace& t = Trace::current("tensor_scalar_reduce", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  if (data.is_scalar()) t.fail("err_scalar_only_operation", loc, "isa::tensor_scalar_reduce needs a tile, got a scalar");
  check_scalar_operand(t, data, operand0, "isa::tensor_scalar_reduce", loc);
  const ir::ReduceKind kind = reduce_kind_of(t, reduce_op, "isa::tensor_scalar_reduce", loc);
  if (o.reduce_cmd != reduce_cmd::reset_reduce) {
    t.fail("err_unsupported_reduce_cmd", loc,
           fmt::format("isa::tensor_scalar_reduce with reduce_cmd {}: only reset_reduce (registers reset, this "
                       "instruction's reduction written out) is supported; state kept across instructions is not",
                       reduce_cmd_name(o.reduce_cmd)));
  }
  if (!o.mask.empty()) {
    t.fail("err_unsupported_expression_in_mask", loc,
           "isa::tensor_scalar_reduce takes no mask: the reduction would read masked-off elements");
  }
  const DType out = o.dtype.value_or(tile_info(t, data.tile_id).dtype);
  const nl::tile f = nl::binary(op0.kind, data, operand0, {.dtype = DType::fp32, .mask = {}}, sl, nullptr, false, ir::Engine::vector);
  write_reduce_res(t, f.id(), kind, o.reduce_res_negate, reduce_res, ir::Engine::vector, "isa::tensor_scalar_reduce",
                   loc);
  return cast_result(t, f.id(), out, ir::Engine::vector, loc);
}

nl::tile tensor_reduce(const nl::operand& data, const nl::binary_fn& op, const nl::axes& axis, bool keepdims,
                       const nl::op_options& o, std::source_location sl) {
  ir::ReduceKind kind;
  switch (op.kind) {
    case ir::BinaryKind::add: kind = ir::ReduceKind::sum; break;
    case ir::BinaryKind::average: kind = ir::ReduceKind::mean; break;
    case ir::BinaryKind::maximum: kind = ir::ReduceKind::max; break;
    case ir::BinaryKind::minimum: kind = ir::ReduceKind::min; break;
    default:
      Trace::current("tensor_reduce", sl)
          .fail("err_unsupported_reduction_op", SourceLoc::from(sl),
                fmt::format("isa::tensor_reduce with op {}; supported are add, average, maximum, minimum",
                            ir::binary_name(op.kind)));
  }
  return nl::reduce(kind, data, axis, o.dtype, o.mask, keepdims, sl);
}

nl::tile tensor_reduce(const nl::binary_fn& op, const nl::operand& data, const nl::axes& axis,
                       const tensor_reduce_options& o, std::source_location sl) {
  Trace& t = Trace::current("tensor_reduce", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  if (data.is_scalar()) t.fail("err_scalar_only_operation", loc, "isa::tensor_reduce needs a tile, got a scalar");
  const Shape shape = tile_info(t, data.tile_id).shape;
  // NKI reduces the last free axes: a contiguous run that ends at the final one.
  std::vector<int> list = axis.list;
  std::sort(list.begin(), list.end());
  list.erase(std::unique(list.begin(), list.end()), list.end());
  const int rank = static_cast<int>(shape.size());
  bool trailing = !list.empty() && list.back() == rank - 1;
  for (std::size_t q = 1; q < list.size(); ++q) trailing = trailing && list[q] == list[q - 1] + 1;
  if (!list.empty() && list.front() >= 1 && list.back() < rank && !trailing) {
    t.fail("err_unsupported_reduction_axis", loc,
           fmt::format("isa::tensor_reduce over axes ({}) of a tile of shape {}: the axes must be the last free axes, "
                       "a contiguous run ending at axis {}",
                       fmt::join(list, ", "), shape_str(shape), rank - 1));
  }
  const nl::tile r = tensor_reduce(data, op, axis, o.keepdims, {.dtype = o.dtype, .mask = o.mask}, sl);
  if (!o.negate) return r;
  // The engine multiplies by -1 on the way out: the same instruction.
  const int neg = t.add_tile(tile_info(t, r.id()).shape, tile_info(t, r.id()).dtype);
  t.emit(ir::ActivationOp{neg, ir::ActKind::negative, {r.id(), 0, true}, {-1, 1.0, true}, {-1, 0.0, true}, o.mask.ir(), loc,
                          ir::Engine::vector, true});
  return nl::tile(neg);
}

nl::tile tensor_copy(const nl::operand& src, const engine_options& o, std::source_location sl) {
  Trace& t = Trace::current("tensor_copy", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  check_engine(t, o.engine, {engine::vector, engine::scalar, engine::gpsimd}, "isa::tensor_copy",
               "the Vector, Scalar or GpSimd engine", loc);
  check_gpsimd_memory(t, o.engine, {&src}, "isa::tensor_copy", loc);
  return nl::activation_op(ir::ActKind::copy, src, 0.0, 1.0, {.dtype = o.dtype, .mask = o.mask}, "isa::tensor_copy", sl,
                           ir_engine(o.engine));
}

nl::tile reciprocal(const nl::operand& data, const nl::op_options& o, std::source_location sl) {
  return nl::activation_op(ir::ActKind::reciprocal, data, 0.0, 1.0, o, "isa::reciprocal", sl, ir::Engine::vector);
}

nl::tile exponential(const nl::operand& src, const nl::operand& max_value, const exponential_options& o,
                     std::source_location sl) {
  Trace& t = Trace::current("exponential", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  if (src.is_scalar()) t.fail("err_scalar_only_operation", loc, "isa::exponential needs a tile, got a scalar");
  check_scalar_operand(t, src, max_value, "isa::exponential", loc);
  if (o.reduce_res && o.reduce_cmd != reduce_cmd::reset_reduce) {
    t.fail("err_unsupported_reduce_cmd", loc,
           fmt::format("isa::exponential with reduce_res and reduce_cmd {}: only reset_reduce (registers reset, this "
                       "instruction's sum written out) is supported; state kept across instructions is not",
                       reduce_cmd_name(o.reduce_cmd)));
  }
  if (!o.reduce_res && o.reduce_cmd != reduce_cmd::idle) {
    t.fail("err_invalid_reduce_res", loc,
           fmt::format("isa::exponential with reduce_cmd {} and no reduce_res: the sum would never be read",
                       reduce_cmd_name(o.reduce_cmd)));
  }
  if (o.reduce_res && !o.mask.empty()) {
    t.fail("err_unsupported_expression_in_mask", loc,
           "isa::exponential with reduce_res takes no mask: the reduction would read masked-off elements");
  }
  const DType out = o.dtype.value_or(tile_info(t, src.tile_id).dtype);
  // exp(x - m) as exp(x * 1 + (-m)): x * 1 is x, and x + (-m) is x - m exactly in IEEE arithmetic.
  nl::operand bias = max_value.is_scalar() ? nl::operand(-max_value.scalar, max_value.loc) : max_value;
  if (!max_value.is_scalar()) {
    nl::check_tile_scope(t, max_value.tile_id, loc);
    const Shape& ms = tile_info(t, max_value.tile_id).shape;
    const int neg = t.add_tile(ms, DType::fp32);
    t.emit(ir::ActivationOp{neg, ir::ActKind::negative, {max_value.tile_id, 0, true}, {-1, 1.0, true}, {-1, 0.0, true},
                            {}, loc, ir::Engine::vector, true});
    bias = nl::operand(nl::tile(neg), max_value.loc);
  }
  if (!o.reduce_res) {
    return nl::activation_op(ir::ActKind::exp, src, bias, 1.0, {.dtype = out, .mask = o.mask}, "isa::exponential", sl,
                             ir::Engine::vector);
  }
  const nl::tile f = nl::activation_op(ir::ActKind::exp, src, bias, 1.0, {.dtype = DType::fp32, .mask = {}},
                                       "isa::exponential", sl, ir::Engine::vector);
  write_reduce_res(t, f.id(), ir::ReduceKind::sum, false, *o.reduce_res, ir::Engine::vector, "isa::exponential", loc);
  return cast_result(t, f.id(), out, ir::Engine::vector, loc);
}

nl::tile iota(const nl::index& expr, DType dtype, const nl::op_options& o, std::source_location sl) {
  Trace& t = Trace::current("iota", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  if (expr.expr().unexpanded_arange) {
    t.fail("err_1d_arange_not_supported", loc,
           fmt::format("isa::iota of a 1-D arange({}); expand it with [_, newaxis] or [newaxis, _]",
                       *expr.expr().unexpanded_arange));
  }
  Shape shape = expr.shape();
  if (shape.empty()) shape = {1};
  nl::check_partition_limit(t, shape, loc);
  ir::IotaOp op{-1, expr.expr(), nl::checked_mask(t, o.mask, shape, "isa::iota", loc), loc};
  op.result = t.add_tile(shape, dtype);
  t.emit(std::move(op));
  return nl::tile(op.result);
}

nl::tile affine_select(const nl::predicate& pred, const nl::operand& on_true, const nl::operand& on_false_value,
                       const nl::op_options& o, std::source_location sl) {
  Trace& t = Trace::current("affine_select", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  const Shape shape = nl::broadcast_operands(t, {&on_true, &on_false_value}, "isa::affine_select", loc);
  const DType dtype = o.dtype.value_or(nl::promoted(t, {&on_true, &on_false_value}));
  ir::SelectOp op{-1, {-1, 1.0, true}, nl::checked_mask(t, pred, shape, "isa::affine_select", loc),
                  nl::to_ir(t, on_true, loc), nl::to_ir(t, on_false_value, loc),
                  nl::checked_mask(t, o.mask, shape, "isa::affine_select", loc), loc};
  op.result = t.add_tile(shape, dtype);
  t.emit(std::move(op));
  return nl::tile(op.result);
}

nl::tile tensor_tensor_scan(const nl::operand& data0, const nl::operand& data1, const nl::operand& initial,
                            const nl::binary_fn& op0, const nl::binary_fn& op1, const scan_options& o,
                            std::source_location sl) {
  Trace& t = Trace::current("tensor_tensor_scan", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* name = "isa::tensor_tensor_scan";
  for (const auto& [d, role] : {std::pair{&data0, "data0"}, std::pair{&data1, "data1"}}) {
    if (d->is_scalar()) t.fail("err_scalar_only_operation", loc, fmt::format("{}: {} is a scalar; it must be a tile", name, role));
    nl::check_tile_scope(t, d->tile_id, loc);
    const Shape& s = tile_info(t, d->tile_id).shape;
    if (s.size() != 2) {
      t.fail("err_unsupported_tile_rank", loc,
             fmt::format("{}: {} must be a 2-D tile [P, F], got shape {}", name, role, shape_str(s)));
    }
  }
  const ir::TileInfo& a = tile_info(t, data0.tile_id);
  const ir::TileInfo& b = tile_info(t, data1.tile_id);
  if (a.shape[0] != b.shape[0]) {
    t.fail("err_num_partition_mismatch", loc,
           fmt::format("{}: data0 {} and data1 {} have different partition counts", name, shape_str(a.shape),
                       shape_str(b.shape)));
  }
  if (a.shape[1] != b.shape[1]) {
    t.fail("err_free_dim_mismatch", loc,
           fmt::format("{}: data0 {} and data1 {} have different numbers of elements per partition", name,
                       shape_str(a.shape), shape_str(b.shape)));
  }
  if (a.memory == ir::Memory::psum && b.memory == ir::Memory::psum) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("{}: data0 and data1 are both in PSUM; at most one of them may be (copy one to SBUF first)", name));
  }
  if (!initial.is_scalar()) {
    nl::check_tile_scope(t, initial.tile_id, loc);
    const Shape& s = tile_info(t, initial.tile_id).shape;
    if (s[0] != a.shape[0]) {
      t.fail("err_num_partition_mismatch", loc,
             fmt::format("{}: initial {} has {} partitions; the data have {}", name, shape_str(s), s[0], a.shape[0]));
    }
    std::int64_t per_partition = 1;
    for (std::size_t d = 1; d < s.size(); ++d) per_partition *= s[d];
    if (per_partition != 1) {
      t.fail("err_free_dim_mismatch", loc,
             fmt::format("{}: initial is a scalar or a tile of one element per partition ([{}, 1]), got {}", name,
                         a.shape[0], shape_str(s)));
    }
  }
  const DType dtype = o.dtype.value_or(nl::promoted(t, {&data0, &data1}));
  ir::ScanOp op{-1, op0.kind, op1.kind, data0.tile_id, data1.tile_id, nl::to_ir(t, initial, loc), o.reverse0,
                o.reverse1, loc};
  op.result = t.add_tile(a.shape, dtype);
  t.emit(std::move(op));
  return nl::tile(op.result);
}

void memset(const nl::access& dst, double value, std::source_location loc) {
  (void)loc;
  nl::write_window(dst, nl::operand(value, loc), false);
}

}  // namespace nki::isa
