/** \file On-chip capacity: live SBUF/PSUM bytes per partition through the program (see capacity.h for the rule). */
#include "nki/simulator/capacity.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "nki/ir/walk.h"
#include "op_info.h"

namespace nki::sim {

namespace {

struct Item {
  bool psum = false;
  std::int64_t bytes = 0;
  std::string what;
  SourceLoc loc;
};

std::int64_t per_partition(const Shape& shape, int par_dim, DType dt) {
  std::int64_t n = dtype_bytes(dt);
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (static_cast<int>(d) != par_dim) n *= shape[d];
  return n;
}

/** PSUM is allocated in whole banks: an accumulation group holds one. */
std::int64_t in_banks(std::int64_t bytes, const TargetSpec& t) {
  const std::int64_t bank = t.psum_bank_bytes();
  return (bytes + bank - 1) / bank * bank;
}

/** An on-chip tensor's bytes per partition as allocated: a placed array counts its physical blocks. */
std::int64_t allocated_bytes(const ir::TensorDecl& t) { return per_partition(ir::storage_shape(t), t.par_dim, t.dtype); }

}  // namespace

CapacityUse check_capacity(const ir::KernelIR& k, const TargetSpec& target) {
  const std::size_t n = k.body.size();
  const ir::LoopNest nest(k);

  // Births and deaths by position.
  std::vector<std::vector<Item>> born(n);
  std::vector<std::vector<std::pair<bool, std::int64_t>>> dies(n + 1);
  std::vector<std::size_t> def_at(k.tiles.size(), n);
  std::vector<bool> is_view(k.tiles.size(), false);
  std::vector<std::size_t> last_use(k.tiles.size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    const ir::Op& op = k.body[i];
    if (const auto* a = std::get_if<ir::AllocOp>(&op)) {
      const ir::TensorDecl& t = k.tensors.at(static_cast<std::size_t>(a->tensor));
      if (t.memory != ir::Memory::sbuf && t.memory != ir::Memory::psum) continue;
      const bool psum = t.memory == ir::Memory::psum;
      const std::int64_t b = allocated_bytes(t);
      born[i].push_back({psum, b, fmt::format("tensor {} {} {}", t.name, dtype_name(t.dtype), shape_str(t.shape)), a->loc});
      const int scope = nest.innermost(i);
      const std::size_t scope_end = scope < 0 ? n : nest.end(scope);
      dies[scope_end].push_back({psum, b});
      continue;
    }
    const int def = ir::tile_defined(op);
    if (def >= 0) {
      def_at[static_cast<std::size_t>(def)] = i;
      if (const auto* l = std::get_if<ir::LoadOp>(&op))
        is_view[static_cast<std::size_t>(def)] = !ir::is_hbm(k.tensors.at(static_cast<std::size_t>(l->src.tensor)).memory);
    }
    for (int t : ir::tiles_read(op)) {
      const std::size_t d = def_at[static_cast<std::size_t>(t)];
      std::size_t u = i;
      // A use inside loops the definition is outside of keeps the tile to the end of the outermost such loop.
      for (int l : nest.enclosing(i)) {
        const bool encloses_def = d > nest.begin(l) && d < nest.end(l);
        if (!encloses_def) {
          u = nest.end(l);
          break;
        }
      }
      std::size_t& lu = last_use[static_cast<std::size_t>(t)];
      lu = lu == n ? u : std::max(lu, u);
    }
  }
  for (std::size_t t = 0; t < k.tiles.size(); ++t) {
    const std::size_t d = def_at[t];
    if (d >= n || is_view[t]) continue;
    const ir::TileInfo& ti = k.tiles[t];
    if (ti.memory != ir::Memory::sbuf && ti.memory != ir::Memory::psum) continue;
    const bool psum = ti.memory == ir::Memory::psum;
    const std::int64_t b = per_partition(ti.shape, ti.shape.empty() ? -1 : 0, ti.dtype);
    born[d].push_back({psum, b,
                       fmt::format("the {} result {} {}", op_label(k.body[d]), dtype_name(ti.dtype), shape_str(ti.shape)),
                       op_loc(k.body[d])});
    dies[last_use[t] == n ? d : last_use[t]].push_back({psum, b});
  }

  CapacityUse use;
  std::int64_t live[2] = {0, 0};
  const std::int64_t cap[2] = {target.sbuf_partition_bytes(), target.psum_partition_bytes()};
  for (std::size_t i = 0; i < n; ++i) {
    for (const Item& it : born[i]) {
      const int m = it.psum ? 1 : 0;
      if (live[m] + it.bytes > cap[m]) {
        throw UserError(it.psum ? "err_psum_out_of_memory" : "err_sbuf_out_of_memory", k.name, it.loc,
                        fmt::format("{} needs {} bytes per partition of {}; {} bytes are free of the {} per partition "
                                    "on {} ({} live)",
                                    it.what, it.bytes, it.psum ? "PSUM" : "SBUF", cap[m] - live[m], cap[m], target.name,
                                    live[m]));
      }
      live[m] += it.bytes;
      std::int64_t& peak = it.psum ? use.psum_peak : use.sbuf_peak;
      if (live[m] > peak) {
        peak = live[m];
        (it.psum ? use.psum_peak_at : use.sbuf_peak_at) = it.loc;
      }
    }
    for (auto [psum, b] : dies[i]) live[psum ? 1 : 0] -= b;
  }
  return use;
}

std::vector<int> loop_buffers(const ir::KernelIR& k, const TargetSpec& target) {
  const CapacityUse use = check_capacity(k, target);
  const ir::LoopNest nest(k);
  std::vector<int> buffers(k.tensors.size(), 1);
  struct Looped {
    int tensor;
    std::size_t depth;
    std::int64_t trip, bytes;
  };
  std::vector<Looped> allocs;
  for (std::size_t i = 0; i < k.body.size(); ++i) {
    const auto* a = std::get_if<ir::AllocOp>(&k.body[i]);
    if (a == nullptr || nest.innermost(i) < 0) continue;
    const ir::TensorDecl& t = k.tensors.at(static_cast<std::size_t>(a->tensor));
    if (t.memory != ir::Memory::sbuf && t.memory != ir::Memory::psum) continue;
    if (t.placement.placed) continue;  // placed by hand: its blocks are its buffers
    // Another buffer of a PSUM accumulation group is another bank.
    const std::int64_t b = allocated_bytes(t);
    allocs.push_back({a->tensor, nest.depth(i), k.loops.at(static_cast<std::size_t>(nest.innermost(i))).trip,
                      t.memory == ir::Memory::psum ? in_banks(b, target) : b});
  }
  // The innermost allocations are reloaded most often: they take the free bytes first.
  std::stable_sort(allocs.begin(), allocs.end(), [](const Looped& x, const Looped& y) { return x.depth > y.depth; });
  std::int64_t free[2] = {target.sbuf_partition_bytes() - use.sbuf_peak, target.psum_partition_bytes() - use.psum_peak};
  for (const Looped& a : allocs) {
    std::int64_t& f = free[k.tensors[static_cast<std::size_t>(a.tensor)].memory == ir::Memory::psum ? 1 : 0];
    const std::int64_t extra = std::min(std::max<std::int64_t>(0, a.trip - 1), a.bytes > 0 ? f / a.bytes : 0);
    buffers[static_cast<std::size_t>(a.tensor)] = static_cast<int>(1 + extra);
    f -= extra * a.bytes;
  }
  return buffers;
}

}  // namespace nki::sim
