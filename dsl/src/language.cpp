/** \file The tile language: each call checks its operands and appends IR to the current trace. */
#include "nki/language.h"

#include <fmt/format.h>

#include <stdexcept>

#include "nki/trace.h"

namespace nki::language {

namespace {

SourceLoc here(const source_location& l) { return SourceLoc::from(l); }

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
index operator+(const index& a, std::int64_t b) { return checked_add(a, index(b), "+"); }
index operator+(std::int64_t a, const index& b) { return checked_add(index(a), b, "+"); }
index operator-(const index& a, const index& b) { return checked_add(a, index(ir::scale(b.expr(), -1), b.where()), "-"); }
index operator-(const index& a, std::int64_t b) { return checked_add(a, index(-b), "-"); }
index operator-(std::int64_t a, const index& b) {
  return checked_add(index(a), index(ir::scale(b.expr(), -1), b.where()), "-");
}
index operator*(const index& a, std::int64_t k) { return index(ir::scale(a.expr(), k), a.where()); }
index operator*(std::int64_t k, const index& a) { return index(ir::scale(a.expr(), k), a.where()); }

index program_id(int axis, source_location loc) {
  Trace& t = Trace::current("program_id", loc);
  if (axis < 0 || axis >= static_cast<int>(t.grid().size())) {
    t.fail("err_program_id_axis_out_of_range", here(loc),
           fmt::format("program_id({}) on a launch grid of rank {}; valid axes are [0, {})", axis, t.grid().size(),
                       t.grid().size()));
  }
  return index(ir::IndexExpr::symbol({ir::Sym::Kind::program_id, axis}), here(loc));
}

std::int64_t num_programs(int axis, source_location loc) {
  Trace& t = Trace::current("num_programs", loc);
  if (axis < 0 || axis >= static_cast<int>(t.grid().size())) {
    t.fail("err_program_id_axis_out_of_range", here(loc),
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
  if (n <= 0) t.fail("err_invalid_arange", here(loc), fmt::format("arange({}): the size must be positive", n));
  ir::IndexExpr e = ir::IndexExpr::symbol({ir::Sym::Kind::axis, 0});
  e.shape = {n};
  e.unexpanded_arange = n;
  return index(std::move(e), here(loc));
}

// ---- tensors and tiles ----

Shape tensor::shape() const { return Trace::current("tensor.shape", source_location::current()).ir().tensors.at(id_).shape; }
DType tensor::dtype() const { return Trace::current("tensor.dtype", source_location::current()).ir().tensors.at(id_).dtype; }
Shape tile::shape() const { return Trace::current("tile.shape", source_location::current()).ir().tiles.at(id_).shape; }
DType tile::dtype() const { return Trace::current("tile.dtype", source_location::current()).ir().tiles.at(id_).dtype; }

tensor ndarray(const Shape& shape, DType dtype, buffer, const std::string& name, source_location loc) {
  Trace& t = Trace::current("ndarray", loc);
  for (std::int64_t d : shape) {
    if (d <= 0) {
      t.fail("err_invalid_shape", here(loc),
             fmt::format("ndarray shape {} has a dimension of size {}; sizes must be positive", shape_str(shape), d));
    }
  }
  const int id = t.add_tensor(name, shape, dtype, ir::Memory::shared_hbm, here(loc));
  t.ir().outputs.push_back(id);
  return tensor(id);
}

namespace {

/** Resolves tensor[indices] into an IR access: one index per dimension, broadcast to a tile shape. */
ir::Access make_access(Trace& t, const access& a) {
  const ir::TensorDecl& decl = t.ir().tensors.at(a.tensor);
  const SourceLoc loc = here(a.loc);
  if (a.indices.size() != decl.shape.size()) {
    t.fail("err_index_rank_mismatch", loc,
           fmt::format("tensor {} of shape {} has {} dimensions but was indexed with {}", decl.name,
                       shape_str(decl.shape), decl.shape.size(), a.indices.size()));
  }
  ir::Access out{a.tensor, a.indices, {}, loc};
  Shape shape;
  for (const ir::IndexExpr& e : a.indices) {
    if (e.unexpanded_arange) {
      t.fail("err_1d_arange_not_supported", loc,
             fmt::format("tensor {} is indexed with a 1-D arange({}); expand it with [_, newaxis] or [newaxis, _]",
                         decl.name, *e.unexpanded_arange));
    }
    auto b = ir::broadcast_shapes(shape, e.shape);
    if (!b) {
      t.fail("err_index_shape_mismatch", loc,
             fmt::format("indices of tensor {} have shapes that do not broadcast: {} and {}", decl.name,
                         shape_str(shape), shape_str(e.shape)));
    }
    shape = *b;
  }
  if (shape.empty()) shape = {1};
  out.shape = shape;
  return out;
}

tile binary(ir::BinaryKind kind, const operand& a, const operand& b) {
  Trace& t = Trace::current(ir::binary_name(kind), a.loc);
  const SourceLoc loc = here(a.loc);
  if (a.tile_id < 0 && b.tile_id < 0) {
    t.fail("err_scalar_only_operation", loc,
           fmt::format("nl::{} needs at least one tile operand, got two scalars", ir::binary_name(kind)));
  }
  Shape shape;
  DType dtype{};
  if (a.tile_id >= 0 && b.tile_id >= 0) {
    const ir::TileInfo& ta = t.ir().tiles.at(a.tile_id);
    const ir::TileInfo& tb = t.ir().tiles.at(b.tile_id);
    if (ta.shape[0] != tb.shape[0]) {
      t.fail("err_num_partition_mismatch", loc,
             fmt::format("nl::{} operands have {} and {} partitions; tiles broadcast along free dimensions only",
                         ir::binary_name(kind), ta.shape[0], tb.shape[0]));
    }
    auto s = ir::broadcast_shapes(ta.shape, tb.shape);
    if (!s) {
      t.fail("err_free_dim_mismatch", loc,
             fmt::format("nl::{} operand shapes {} and {} do not broadcast", ir::binary_name(kind),
                         shape_str(ta.shape), shape_str(tb.shape)));
    }
    shape = *s;
    dtype = promote(ta.dtype, tb.dtype);
  } else {
    const ir::TileInfo& ti = t.ir().tiles.at(a.tile_id >= 0 ? a.tile_id : b.tile_id);
    shape = ti.shape;
    dtype = ti.dtype;  // a scalar is weakly typed: the tile's dtype wins
  }
  const int result = t.add_tile(shape, dtype);
  t.emit(ir::BinaryOp{result, kind, {a.tile_id, a.scalar}, {b.tile_id, b.scalar}, loc});
  return tile(result);
}

}  // namespace

tile load(const access& src, source_location loc) {
  Trace& t = Trace::current("load", loc);
  ir::Access a = make_access(t, src);
  const int result = t.add_tile(a.shape, t.ir().tensors.at(src.tensor).dtype);
  t.emit(ir::LoadOp{result, std::move(a), here(loc)});
  return tile(result);
}

void store(const access& dst, const tile& value, source_location loc) {
  Trace& t = Trace::current("store", loc);
  ir::Access a = make_access(t, dst);
  const ir::TileInfo& v = t.ir().tiles.at(value.id());
  if (v.shape[0] != a.shape[0]) {
    t.fail("err_num_partition_mismatch", here(loc),
           fmt::format("store of a tile with {} partitions into an access of {} partitions", v.shape[0], a.shape[0]));
  }
  auto b = ir::broadcast_shapes(a.shape, v.shape);
  if (!b || *b != a.shape) {
    t.fail("err_store_shape_mismatch", here(loc),
           fmt::format("store of a tile of shape {} into an access of shape {}", shape_str(v.shape),
                       shape_str(a.shape)));
  }
  t.emit(ir::StoreOp{std::move(a), value.id(), here(loc)});
}

tile add(const operand& a, const operand& b) { return binary(ir::BinaryKind::add, a, b); }
tile subtract(const operand& a, const operand& b) { return binary(ir::BinaryKind::subtract, a, b); }
tile multiply(const operand& a, const operand& b) { return binary(ir::BinaryKind::multiply, a, b); }
tile divide(const operand& a, const operand& b) { return binary(ir::BinaryKind::divide, a, b); }
tile maximum(const operand& a, const operand& b) { return binary(ir::BinaryKind::maximum, a, b); }
tile minimum(const operand& a, const operand& b) { return binary(ir::BinaryKind::minimum, a, b); }

tile operator+(const operand& a, const operand& b) { return add(a, b); }
tile operator-(const operand& a, const operand& b) { return subtract(a, b); }
tile operator*(const operand& a, const operand& b) { return multiply(a, b); }
tile operator/(const operand& a, const operand& b) { return divide(a, b); }

}  // namespace nki::language
