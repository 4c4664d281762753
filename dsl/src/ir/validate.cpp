/** \file Validation pass: hardware limits and provable misuse, with NKI's error names. */
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "nki/ir/passes.h"
#include "nki/ir/walk.h"
#include "nki/tile_limits.h"

namespace nki::ir {

namespace {

/** Combinations of launch and loop values enumerated to apply a mask to a bounds check. */
constexpr std::int64_t kMaxMaskCombinations = 1 << 16;

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

struct Validator {
  const KernelIR& k;
  const std::vector<std::int64_t>& grid;
  int world_size;  ///< rank_id() ranges over [0, world_size)
  const LoopNest& nest;
  std::vector<int> tensor_scope;         ///< loop each tensor was allocated in (-1: top level / HBM)
  std::size_t position = 0;              ///< body index of the op being checked
  std::vector<std::size_t> unproven;     ///< masked accesses left to the run-time check

  [[noreturn]] void fail(const char* name, const SourceLoc& loc, std::string detail) const {
    throw UserError(name, k.name, loc, std::move(detail));
  }

  std::int64_t sym_extent(Sym s, const Shape& shape) const {
    switch (s.kind) {
      case Sym::Kind::program_id: return grid.at(static_cast<std::size_t>(s.index));
      case Sym::Kind::loop: return k.loops.at(static_cast<std::size_t>(s.index)).trip;
      case Sym::Kind::axis: return shape.at(static_cast<std::size_t>(s.index));
      case Sym::Kind::rank: return world_size;
    }
    return 1;
  }

  void check_partitions(const Shape& shape, const SourceLoc& loc) const {
    if (!shape.empty() && shape[0] > tile_limits::pmax) {
      fail("err_num_partition_exceed_arch_limit", loc,
           fmt::format("number of partitions {} exceeds architecture limitation of {}", shape[0],
                       tile_limits::pmax));
    }
  }

  [[noreturn]] void out_of_bound(const Access& a, std::size_t d, const IndexRange& r, const std::string& where) const {
    const TensorDecl& t = k.tensors.at(static_cast<std::size_t>(a.tensor));
    fail("err_tensor_access_out_of_bound", a.loc,
         fmt::format("out-of-bound access to tensor {} {} on dimension {}: index {} ranges over [{}, {}]{}, "
                     "valid is [0, {}]",
                     t.name, shape_str(t.shape), d, to_string(a.indices[d]), r.lo, r.hi, where, t.shape[d] - 1));
  }

  void check_access(const Access& a, const Predicate& mask) {
    const TensorDecl& t = k.tensors.at(static_cast<std::size_t>(a.tensor));
    for (const IndexExpr& e : a.indices) {
      if (e.unexpanded_arange) {
        fail("err_1d_arange_not_supported", a.loc,
             fmt::format("tensor {} is indexed with a 1-D arange({}); expand it with [_, newaxis] or "
                         "[newaxis, _]",
                         t.name, *e.unexpanded_arange));
      }
    }
    check_partitions(a.shape, a.loc);
    check_wrapped_blocks(a);
    if (mask.empty()) {
      for (std::size_t d = 0; d < a.indices.size(); ++d) {
        const IndexExpr& e = a.indices[d];
        const IndexRange r = range_of(e, [&](Sym s) { return sym_extent(s, e.shape); });
        if (r.lo < 0 || r.hi >= t.shape[d]) out_of_bound(a, d, r, "");
      }
      return;
    }
    check_masked_access(a, mask);
  }

  /**
   * A block dimension that mod_alloc wraps is indexed by one block per access: the executors
   * wrap the block index of the tile's first element (a tile spanning blocks would need a
   * modulo inside its strides).
   */
  void check_wrapped_blocks(const Access& a) const {
    const TensorDecl& t = k.tensors.at(static_cast<std::size_t>(a.tensor));
    if (!t.placement.placed) return;
    for (std::size_t d = 0; d < a.indices.size(); ++d) {
      if (t.placement.storage[d] == t.shape[d] || !has_symbol(a.indices[d], Sym::Kind::axis)) continue;
      fail("err_block_index_not_scalar", a.loc,
           fmt::format("tensor {} {}{} has {} physical blocks along block dimension {} (mod_alloc); its index {} "
                       "varies over the tile: index one block at a time",
                       t.name, dtype_name(t.dtype), shape_str(t.shape), t.placement.storage[d], d,
                       to_string(a.indices[d])));
    }
  }

  /**
   * Bounds under a mask: for every combination of the program ids and loop variables the
   * access uses, conditions on a single tile axis narrow that axis; an index out of bounds
   * in the narrowed box is provable unless a condition could not be applied exactly.
   */
  void check_masked_access(const Access& a, const Predicate& mask) {
    // A condition bounding the index itself (idx < N, idx >= 0) proves that dimension directly.
    bool all_direct = true;
    for (std::size_t d = 0; d < a.indices.size(); ++d) {
      const std::int64_t size = k.tensors.at(static_cast<std::size_t>(a.tensor)).shape[d];
      const IndexRange r = range_of(a.indices[d], [&](Sym s) { return sym_extent(s, a.indices[d].shape); });
      bool lo_ok = r.lo >= 0, hi_ok = r.hi < size;
      for (const Condition& c : mask.all) {
        if (c.not_equal) continue;
        if (!broadcast_shapes(c.expr.shape, a.indices[d].shape)) continue;
        const IndexExpr upper = add(c.expr, a.indices[d]);            // c = K - idx: c + idx == K
        const IndexExpr lower = add(c.expr, scale(a.indices[d], -1));  // c = idx - K: c - idx == -K
        if (upper.is_constant() && upper.constant <= size - 1) hi_ok = true;  // idx <= K <= size - 1
        if (lower.is_constant() && lower.constant <= 0) lo_ok = true;          // idx >= -lower >= 0
      }
      all_direct = all_direct && lo_ok && hi_ok;
    }
    if (all_direct) return;
    std::vector<Sym> outer;
    auto collect = [&](const IndexExpr& e) {
      for (const Term& term : e.terms)
        if (term.sym.kind != Sym::Kind::axis && std::find(outer.begin(), outer.end(), term.sym) == outer.end())
          outer.push_back(term.sym);
    };
    for (const IndexExpr& e : a.indices) collect(e);
    for (const Condition& c : mask.all) collect(c.expr);
    std::int64_t combos = 1;
    for (Sym s : outer) {
      combos *= sym_extent(s, a.shape);
      if (combos > kMaxMaskCombinations) {  // too many to enumerate: checked at run time
        unproven.push_back(position);
        return;
      }
    }
    std::vector<std::int64_t> value(outer.size(), 0);
    bool any_inexact = false;
    auto value_of = [&](Sym s) {
      return value[static_cast<std::size_t>(std::find(outer.begin(), outer.end(), s) - outer.begin())];
    };
    for (std::int64_t c = 0; c < combos; ++c) {
      std::int64_t rest = c;
      for (std::size_t i = outer.size(); i-- > 0;) {
        const std::int64_t ext = sym_extent(outer[i], a.shape);
        value[i] = rest % ext;
        rest /= ext;
      }
      std::vector<std::int64_t> lo(a.shape.size(), 0), hi(a.shape.size());
      for (std::size_t x = 0; x < a.shape.size(); ++x) hi[x] = a.shape[x] - 1;
      bool exact = true, empty = false;
      for (const Condition& cond : mask.all) {
        std::int64_t constant = cond.expr.constant;
        std::vector<Term> axes;
        for (const Term& term : cond.expr.terms) {
          if (term.sym.kind == Sym::Kind::axis) {
            if (cond.expr.shape.at(static_cast<std::size_t>(term.sym.index)) > 1) axes.push_back(term);
          } else {
            constant += term.coeff * value_of(term.sym);
          }
        }
        if (cond.not_equal || axes.size() > 1) {
          exact = false;
          continue;
        }
        if (axes.empty()) {
          if (constant < 0) empty = true;
          continue;
        }
        const std::size_t x = static_cast<std::size_t>(axes[0].sym.index);
        const std::int64_t coeff = axes[0].coeff;
        if (coeff > 0) lo[x] = std::max(lo[x], -floor_div(constant, coeff));  // x >= ceil(-c / coeff)
        else hi[x] = std::min(hi[x], floor_div(constant, -coeff));
        if (lo[x] > hi[x]) empty = true;
      }
      any_inexact = any_inexact || !exact;
      if (empty) continue;
      for (std::size_t d = 0; d < a.indices.size(); ++d) {
        const IndexExpr& e = a.indices[d];
        __int128 rlo = e.constant, rhi = e.constant;
        for (const Term& term : e.terms) {
          if (term.sym.kind == Sym::Kind::axis) {
            if (e.shape.at(static_cast<std::size_t>(term.sym.index)) == 1) continue;
            const std::size_t x = static_cast<std::size_t>(term.sym.index);
            const __int128 p = static_cast<__int128>(term.coeff) * lo[x], q = static_cast<__int128>(term.coeff) * hi[x];
            rlo += std::min(p, q);
            rhi += std::max(p, q);
          } else {
            rlo += static_cast<__int128>(term.coeff) * value_of(term.sym);
            rhi += static_cast<__int128>(term.coeff) * value_of(term.sym);
          }
        }
        const std::int64_t size = k.tensors.at(static_cast<std::size_t>(a.tensor)).shape[d];
        if ((rlo < 0 || rhi >= size) && exact) {
          std::vector<std::string> at;
          for (std::size_t i = 0; i < outer.size(); ++i)
            at.push_back(fmt::format("{}={}", to_string(IndexExpr::symbol(outer[i])), value[i]));
          const IndexRange r{static_cast<std::int64_t>(rlo), static_cast<std::int64_t>(rhi)};
          out_of_bound(a, d, r, at.empty() ? " under its mask" : fmt::format(" under its mask at {}", fmt::join(at, ", ")));
        }
      }
    }
    if (any_inexact) unproven.push_back(position);
  }

  /** Two iterations of an enclosing affine_range must not write the same element (PSUM += excepted). */
  void check_output_dependencies(const StoreOp& op) const {
    if (op.accumulate || op.atomic) return;  // atomic updates commute
    const int scope = tensor_scope.at(static_cast<std::size_t>(op.dst.tensor));
    for (int l : nest.enclosing(position)) {
      const LoopInfo& info = k.loops.at(static_cast<std::size_t>(l));
      if (info.kind != LoopKind::affine || info.trip <= 1) continue;
      if (scope >= 0 && nest.within(scope, l)) continue;  // a fresh tensor on every iteration
      bool disjoint = false, uses = false;
      for (const IndexExpr& e : op.dst.indices) {
        const std::int64_t step = e.coeff_of({Sym::Kind::loop, l});
        if (step == 0) continue;
        uses = true;
        std::int64_t span = 0;  // how far one iteration's writes spread along this dimension
        for (const Term& t : e.terms) {
          // The loop variables inside `l` vary within one of its iterations.
          const bool varies = t.sym.kind == Sym::Kind::axis || (t.sym.kind == Sym::Kind::loop && t.sym.index != l &&
                                                                nest.within(t.sym.index, l));
          if (varies) span += (t.coeff < 0 ? -t.coeff : t.coeff) * (sym_extent(t.sym, e.shape) - 1);
        }
        if ((step < 0 ? -step : step) > span) disjoint = true;
      }
      if (!disjoint) {
        const TensorDecl& t = k.tensors.at(static_cast<std::size_t>(op.dst.tensor));
        fail("err_unexpected_output_dependencies", op.loc,
             fmt::format("iterations of affine_range l{} ({}:{}, {} iterations) write the same elements of tensor {}: "
                         "{}; index by the loop variable, or use sequential_range for a carried dependency",
                         l, info.loc.file, info.loc.line, info.trip, t.name,
                         uses ? "the writes of consecutive iterations overlap"
                              : "the write does not depend on the loop variable"));
      }
    }
  }

  /** A tile fits the partitions and the bytes per partition of the memory it is in. */
  void check_tile(int tile, const std::string& op, const SourceLoc& loc) const {
    const TileInfo& ti = k.tiles.at(static_cast<std::size_t>(tile));
    check_partitions(ti.shape, loc);
    std::int64_t per_partition = dtype_bytes(ti.dtype);
    for (std::size_t d = 1; d < ti.shape.size(); ++d) per_partition *= ti.shape[d];
    const std::int64_t limit =
        ti.memory == Memory::psum ? tile_limits::psum_partition_bytes : tile_limits::sbuf_partition_bytes;
    if (per_partition > limit) {
      fail("err_size_of_dimension_exceed_arch_limit", loc,
           fmt::format("{} of {} {} needs {} bytes per partition; {} has {} bytes per partition", op,
                       dtype_name(ti.dtype), shape_str(ti.shape), per_partition, memory_name(ti.memory), limit));
    }
  }

  void operator()(const LoadOp& op) {
    check_access(op.src, op.mask);
    check_tile(op.result, "nl::load", op.loc);
  }
  void operator()(const StoreOp& op) {
    check_access(op.dst, op.mask);
    check_output_dependencies(op);
  }
  void operator()(const AllocOp&) const {}
  void operator()(const ActivationOp& op) const { check_tile(op.result, std::string("nl::") + act_name(op.kind), op.loc); }
  void operator()(const BinaryOp& op) const { check_tile(op.result, std::string("nl::") + binary_name(op.kind), op.loc); }
  void operator()(const SelectOp& op) const { check_tile(op.result, "nl::where", op.loc); }
  void operator()(const IotaOp& op) const { check_tile(op.result, "isa::iota", op.loc); }
  void operator()(const ReduceOp& op) const { check_tile(op.result, std::string("nl::") + reduce_name(op.kind), op.loc); }
  void operator()(const MatmulOp& op) const { check_tile(op.result, "nl::matmul", op.loc); }
  void operator()(const TransposeOp& op) const { check_tile(op.result, "nl::transpose", op.loc); }
  void operator()(const ScanOp& op) const { check_tile(op.result, "isa::tensor_tensor_scan", op.loc); }
  void operator()(const ViewOp& op) const { check_tile(op.result, "a tile subscript", op.loc); }
  void operator()(const RegisterOp& op) {
    if (op.kind == RegisterOp::Kind::move) return;
    check_access(op.mem, {});
    if (op.kind == RegisterOp::Kind::store) {  // a write like a store's: iterations of an affine_range must not share it
      StoreOp as_store;
      as_store.dst = op.mem;
      as_store.loc = op.loc;
      check_output_dependencies(as_store);
    }
  }
  void operator()(const PrintOp&) const {}
  void operator()(const QuantizeMxOp& op) const { check_tile(op.result, "isa::quantize_mx", op.loc); }
  void operator()(const MatmulMxOp& op) const { check_tile(op.result, "isa::nc_matmul_mx", op.loc); }
  void operator()(const GatherOp& op) const { check_tile(op.result, op.label, op.loc); }
  void operator()(const CollectiveOp&) const {}  // checked where it is traced and, for its groups, at launch
  void operator()(const LoopOp&) const {}
  void operator()(const LoopEndOp&) const {}
  void operator()(const std::monostate&) const {}
};

}  // namespace

std::vector<std::size_t> validate(const KernelIR& k, const std::vector<std::int64_t>& grid, int world_size) {
  if (static_cast<int>(grid.size()) < k.grid_rank) {
    throw InternalError(fmt::format("validate: grid of rank {} for a kernel traced at rank {}", grid.size(),
                                    k.grid_rank));
  }
  const LoopNest nest(k);
  Validator v{k, grid, world_size, nest, std::vector<int>(k.tensors.size(), -1)};
  for (std::size_t i = 0; i < k.body.size(); ++i) {
    v.position = i;
    if (const auto* a = std::get_if<AllocOp>(&k.body[i]))
      v.tensor_scope[static_cast<std::size_t>(a->tensor)] = nest.innermost(i);
    std::visit(v, k.body[i]);
  }
  const std::vector<int> stores = count_stores(k);
  for (int id : k.outputs) {
    const TensorDecl& t = k.tensors.at(static_cast<std::size_t>(id));
    if (stores.at(static_cast<std::size_t>(id)) == 0 && !t.fill) {
      throw UserError("err_tensor_output_not_written_to", k.name, t.loc,
                      fmt::format("output tensor {} {} is returned but no nl::store writes it", t.name,
                                  shape_str(t.shape)));
    }
  }
  return v.unproven;
}

}  // namespace nki::ir
