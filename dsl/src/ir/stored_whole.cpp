/**
 * \file Which HBM tensors a kernel's plain stores write whole over a launch grid: a launch
 * zeroes every fresh tensor but those, so none exposes an earlier tensor's bytes and the
 * common kernel (every output element stored) pays nothing for it.
 */
#include <algorithm>
#include <cstdint>

#include "nki/ir/passes.h"
#include "nki/ir/walk.h"

namespace nki::ir {

namespace {

/** A bitmap bigger than this (a tensor of more elements) is not built: such a tensor is zeroed. */
constexpr std::int64_t kMaxElements = std::int64_t{1} << 31;
/** At most this many (instance, iteration, tile row) visits per tensor; past them it is zeroed. */
constexpr std::int64_t kMaxVisits = std::int64_t{1} << 24;

/** A store that may prove coverage, and the loops around it (outermost first). */
struct StoreSite {
  const StoreOp* op;
  std::vector<int> loops;
};

class Bitmap {
 public:
  explicit Bitmap(std::int64_t bits) : bits_(bits), words_(static_cast<std::size_t>((bits + 63) / 64), 0) {}
  void set(std::int64_t lo, std::int64_t n) {  // bits [lo, lo + n)
    std::int64_t hi = lo + n;
    while (lo < hi && lo % 64 != 0) set_bit(lo++);
    for (; lo + 64 <= hi; lo += 64) words_[static_cast<std::size_t>(lo / 64)] = ~std::uint64_t{0};
    while (lo < hi) set_bit(lo++);
  }
  bool all() const {
    for (std::int64_t w = 0; w < bits_ / 64; ++w)
      if (words_[static_cast<std::size_t>(w)] != ~std::uint64_t{0}) return false;
    const std::int64_t rest = bits_ % 64;
    return rest == 0 || words_.back() == (std::uint64_t{1} << rest) - 1;
  }

 private:
  void set_bit(std::int64_t b) { words_[static_cast<std::size_t>(b / 64)] |= std::uint64_t{1} << (b % 64); }
  std::int64_t bits_;
  std::vector<std::uint64_t> words_;
};

/**
 * Marks in `seen` every element the site's store writes over the grid; false when it cannot
 * tell (an index outside the tensor, or too many visits).
 */
bool mark_site(const KernelIR& k, const StoreSite& site, const TensorDecl& t, const std::vector<std::int64_t>& grid,
               Bitmap& seen, std::int64_t& visits) {
  const Access& a = site.op->dst;
  const std::size_t rank = t.shape.size(), axes = a.shape.size();
  const std::vector<std::int64_t> strides = row_major_strides(t.shape);
  // The flat element index is linear in the tile coordinate: base + sum over axes of flat[axis] * coord.
  std::vector<std::int64_t> flat(axes, 0);
  std::vector<std::vector<std::int64_t>> coeff(rank, std::vector<std::int64_t>(axes, 0));
  for (std::size_t d = 0; d < rank; ++d) {
    const IndexExpr& e = a.indices[d];
    for (const Term& term : e.terms) {
      if (term.sym.kind != Sym::Kind::axis) continue;
      const auto ax = static_cast<std::size_t>(term.sym.index);
      if (ax >= axes) return false;
      if (ax < e.shape.size() && e.shape[ax] == 1) continue;  // a broadcast axis contributes 0
      coeff[d][ax] += term.coeff;
    }
    for (std::size_t ax = 0; ax < axes; ++ax) flat[ax] += strides[d] * coeff[d][ax];
  }
  std::vector<std::int64_t> pid(grid.size(), 0), loop(k.loops.size(), 0), iteration(site.loops.size(), 0);
  std::vector<std::int64_t> trips;
  for (int l : site.loops) trips.push_back(k.loops[static_cast<std::size_t>(l)].trip);
  const std::vector<std::int64_t> zero(axes, 0);
  std::vector<std::int64_t> outer_shape(a.shape.begin(), a.shape.end() - (axes > 0 ? 1 : 0));
  const std::int64_t last = axes > 0 ? a.shape.back() : 1, last_flat = axes > 0 ? flat.back() : 0;
  do {
    do {
      for (std::size_t i = 0; i < site.loops.size(); ++i) loop[static_cast<std::size_t>(site.loops[i])] = iteration[i];
      std::int64_t base = 0;
      for (std::size_t d = 0; d < rank; ++d) {
        const std::int64_t at = evaluate(a.indices[d], pid, loop, zero);
        std::int64_t lo = at, hi = at;  // the index's range over the tile
        for (std::size_t ax = 0; ax < axes; ++ax) {
          const std::int64_t span = coeff[d][ax] * (a.shape[ax] - 1);
          (span < 0 ? lo : hi) += span;
        }
        if (lo < 0 || hi >= t.shape[d]) return false;
        base += strides[d] * at;
      }
      std::vector<std::int64_t> c(outer_shape.size(), 0);
      do {
        std::int64_t start = base;
        for (std::size_t ax = 0; ax < c.size(); ++ax) start += flat[ax] * c[ax];
        if (last_flat == 1 || last == 1) {
          seen.set(start, last);
          ++visits;
        } else {
          for (std::int64_t j = 0; j < last; ++j) seen.set(start + last_flat * j, 1);
          visits += last;
        }
        if (visits > kMaxVisits) return false;
      } while (next_coord(c, outer_shape));
    } while (next_coord(iteration, trips));
  } while (next_coord(pid, grid));
  return true;
}

}  // namespace

std::vector<bool> stored_whole(const KernelIR& k, const std::vector<std::int64_t>& grid) {
  const std::size_t n = k.tensors.size();
  std::vector<bool> unknown(n, false);
  std::vector<std::vector<StoreSite>> sites(n);
  const LoopNest nest(k);
  for (std::size_t i = 0; i < k.body.size(); ++i) {
    const Op& op = k.body[i];
    if (const auto* s = std::get_if<StoreOp>(&op)) {
      const std::span<const int> loops = nest.enclosing(i);
      // A loop whose trip count is known only when it runs may run 0 times.
      const bool dynamic = std::any_of(loops.begin(), loops.end(), [&](int l) {
        const LoopKind kind = k.loops[static_cast<std::size_t>(l)].kind;
        return kind == LoopKind::dynamic || kind == LoopKind::while_loop;
      });
      const auto t = static_cast<std::size_t>(s->dst.tensor);
      const bool plain = s->index_tile < 0 && !s->accumulate && s->mask.empty() && !dynamic &&
                         s->dst.indices.size() == k.tensors[t].shape.size() &&
                         std::none_of(s->dst.indices.begin(), s->dst.indices.end(),
                                      [](const IndexExpr& e) { return has_symbol(e, Sym::Kind::rank); });
      if (plain) sites[t].push_back({s, {loops.begin(), loops.end()}});
      else unknown[t] = true;
    } else if (const auto* r = std::get_if<RegisterOp>(&op); r && r->kind == RegisterOp::Kind::store) {
      unknown[static_cast<std::size_t>(r->mem.tensor)] = true;
    } else if (const auto* c = std::get_if<CollectiveOp>(&op)) {
      for (int d : c->dsts) unknown[static_cast<std::size_t>(d)] = true;
      if (c->metadata >= 0) unknown[static_cast<std::size_t>(c->metadata)] = true;
    }
  }
  // A store through a reshape / view writes the bytes of the tensor it reinterprets.
  for (const TensorDecl& t : k.tensors)
    if (t.view_of >= 0 && (unknown[static_cast<std::size_t>(t.id)] || !sites[static_cast<std::size_t>(t.id)].empty()))
      unknown[static_cast<std::size_t>(t.view_of)] = true;

  std::vector<bool> whole(n, false);
  for (const TensorDecl& t : k.tensors) {
    const auto id = static_cast<std::size_t>(t.id);
    if (t.memory != Memory::shared_hbm || t.view_of >= 0 || unknown[id] || sites[id].empty()) continue;
    const std::int64_t elements = shape_elements(t.shape);
    if (elements > kMaxElements) continue;
    Bitmap seen(elements);
    std::int64_t visits = 0;
    bool ok = true;
    for (const StoreSite& s : sites[id]) ok = ok && mark_site(k, s, t, grid, seen, visits);
    whole[id] = ok && seen.all();
  }
  return whole;
}

}  // namespace nki::ir
