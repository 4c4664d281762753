/** \file Run-time bounds of masked accesses: the check before a compiled launch and the shared error. */
#include "bounds_check.h"

#include <fmt/format.h>

#include "nki/error.h"
#include "nki/ir/walk.h"

namespace nki {

void throw_out_of_bound(const ir::KernelIR& k, const ir::Access& a, std::span<const std::int64_t> pid,
                        std::span<const int> enclosing, std::span<const std::int64_t> loop,
                        std::span<const std::int64_t> coord, std::int64_t value, std::size_t dim, std::int64_t rank) {
  const ir::TensorDecl& t = k.tensors.at(static_cast<std::size_t>(a.tensor));
  std::string where = pid.empty() ? "instance (no grid)" : fmt::format("instance [{}]", fmt::join(pid, ","));
  if (rank != 0) where += fmt::format(" of rank {}", rank);
  for (int l : enclosing) where += fmt::format(" l{}={}", l, loop[static_cast<std::size_t>(l)]);
  throw UserError("err_tensor_access_out_of_bound", k.name, a.loc,
                  fmt::format("{} at tile coordinate [{}] accesses tensor {} {} at index {} on dimension {}, valid is "
                              "[0, {}]",
                              where, fmt::join(coord, ","), t.name, shape_str(t.shape), value, dim,
                              t.shape[dim] - 1));
}

void check_bounds_at_run_time(const ir::KernelIR& k, const std::vector<std::int64_t>& grid,
                              const std::vector<std::size_t>& positions, int world_size) {
  if (positions.empty()) return;
  for (std::int64_t rank = 0; rank < (ir::reads_rank(k) ? world_size : 1); ++rank) {
  const ir::LoopNest nest(k);
  const std::vector<std::int64_t> grid_extent(grid.begin(), grid.begin() + k.grid_rank);
  std::vector<std::int64_t> pid(grid_extent.size(), 0);
  do {
    for (std::size_t at : positions) {
      const ir::Op& op = k.body.at(at);
      const ir::Access* a = nullptr;
      const ir::Predicate* mask = nullptr;
      if (const auto* l = std::get_if<ir::LoadOp>(&op)) a = &l->src, mask = &l->mask;
      else if (const auto* s = std::get_if<ir::StoreOp>(&op)) a = &s->dst, mask = &s->mask;
      if (a == nullptr) continue;
      const ir::TensorDecl& t = k.tensors.at(static_cast<std::size_t>(a->tensor));
      const std::span<const int> enclosing = nest.enclosing(at);
      std::vector<std::int64_t> trips, iters(enclosing.size(), 0), loop(k.loops.size(), 0);
      for (int l : enclosing) trips.push_back(k.loops.at(static_cast<std::size_t>(l)).trip);
      do {
        for (std::size_t q = 0; q < iters.size(); ++q) loop[static_cast<std::size_t>(enclosing[q])] = iters[q];
        std::vector<std::int64_t> coord(a->shape.size(), 0);
        do {
          if (!mask->holds(pid, loop, coord, rank)) continue;
          for (std::size_t d = 0; d < a->indices.size(); ++d) {
            const std::int64_t v = ir::evaluate(a->indices[d], pid, loop, coord, rank);
            if (v < 0 || v >= t.shape[d]) throw_out_of_bound(k, *a, pid, enclosing, loop, coord, v, d, rank);
          }
        } while (next_coord(coord, a->shape));
      } while (next_coord(iters, trips));
    }
  } while (next_coord(pid, grid_extent));
  }
}

}  // namespace nki
