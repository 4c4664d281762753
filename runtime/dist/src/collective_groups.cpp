/** \file The world ranks of a kernel's collectives, checked against the world before anything runs. */
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "dist/world_collectives.h"
#include "nki/error.h"

namespace nki {

namespace {

using Kind = ir::CollectiveOp::Kind;

std::string groups_str(const std::vector<std::vector<int>>& groups) {
  std::vector<std::string> parts;
  for (const auto& g : groups) parts.push_back(fmt::format("[{}]", fmt::join(g, ",")));
  return fmt::format("[{}]", fmt::join(parts, ","));
}

/** The group size's shape rules, now that the size is known. */
void check_group_shapes(const ir::KernelIR& k, const ir::CollectiveOp& op, std::int64_t g) {
  if (op.metadata >= 0) {  // one column per rank of the group
    const ir::TensorDecl& m = k.tensors.at(static_cast<std::size_t>(op.metadata));
    if (m.shape.back() != g) {
      throw UserError("err_collective_metadata", k.name, op.loc,
                      fmt::format("{}: metadata {} is {} in groups of {} ranks; it has one column per rank ([{}, {}])",
                                  ir::collective_name(op.kind), m.name, shape_str(m.shape), g,
                                  m.shape[m.shape.size() - 2], g));
    }
    return;
  }
  if (op.kind != Kind::all_gather && op.kind != Kind::reduce_scatter && op.kind != Kind::all_to_all) return;
  for (std::size_t i = 0; i < op.srcs.size(); ++i) {
    const ir::TensorDecl& s = k.tensors.at(static_cast<std::size_t>(op.srcs[i]));
    const ir::TensorDecl& d = k.tensors.at(static_cast<std::size_t>(op.dsts[i]));
    const auto dim = static_cast<std::size_t>(op.dim);
    std::string rule;
    if (op.kind == Kind::all_gather && d.shape[dim] != s.shape[dim] * g)
      rule = fmt::format("dst is {} srcs joined along dim {}", g, dim);
    else if (op.kind == Kind::reduce_scatter && s.shape[dim] != d.shape[dim] * g)
      rule = fmt::format("dst is src split along dim {} into {} parts", dim, g);
    else if (op.kind == Kind::all_to_all && s.shape[dim] % g != 0)
      rule = fmt::format("src splits along dim {} into {} parts, one per rank of the group", dim, g);
    if (rule.empty()) continue;
    throw UserError("err_collective_shape_mismatch", k.name, op.loc,
                    fmt::format("{}: src {} is {} and dst {} is {} in groups of {} ranks; {}", ir::collective_name(op.kind),
                                s.name, shape_str(s.shape), d.name, shape_str(d.shape), g, rule));
  }
}

}  // namespace

bool has_collectives(const ir::KernelIR& k) {
  return std::any_of(k.body.begin(), k.body.end(), [](const ir::Op& op) { return std::holds_alternative<ir::CollectiveOp>(op); });
}

std::vector<std::vector<int>> own_groups(const std::vector<CollectiveGroups>& groups, int rank) {
  std::vector<std::vector<int>> out;
  for (const CollectiveGroups& c : groups) {
    auto& mine = out.emplace_back();
    for (const auto& g : c.groups)
      if (std::find(g.begin(), g.end(), rank) != g.end()) mine = g;
  }
  return out;
}

std::vector<CollectiveGroups> resolve_collective_groups(
    const ir::KernelIR& k, int world_size,
    const std::function<std::vector<std::vector<int>>(const std::vector<std::string>& axes)>& axis_groups) {
  std::vector<CollectiveGroups> out;
  for (std::size_t i = 0; i < k.body.size(); ++i) {
    const auto* op = std::get_if<ir::CollectiveOp>(&k.body[i]);
    if (op == nullptr) continue;
    CollectiveGroups& c = out.emplace_back();
    c.op = static_cast<int>(i);
    const char* name = ir::collective_name(op->kind);
    auto fail = [&](const char* error, std::string detail) {
      throw UserError(error, k.name, op->loc, fmt::format("{}: {}", name, detail));
    };
    if (ir::meets_cores(*op)) {  // the cores of a logical core, not ranks: its own (core_barrier's) cores
      c.groups = op->group.groups;
      continue;
    }
    if (op->kind == Kind::permute) {
      for (const auto& [s, t] : op->pairs) {
        if (s >= world_size || t >= world_size)
          fail("err_invalid_source_target_pairs",
               fmt::format("pair ({}, {}) names a rank outside the world of {} ranks (0 to {})", s, t, world_size,
                           world_size - 1));
      }
      continue;
    }
    if (!op->group.axes.empty()) {
      try {
        c.groups = axis_groups(op->group.axes);
      } catch (const UserError& e) {  // the mesh's own error, at the collective's line
        throw UserError(e.name(), k.name, op->loc, fmt::format("{} over axes {{{}}}: {}", name, fmt::join(op->group.axes, ","), e.detail()));
      }
    } else if (!op->group.groups.empty()) {
      c.groups = op->group.groups;
      std::set<int> seen;
      for (const auto& g : c.groups) seen.insert(g.begin(), g.end());
      const bool covers = static_cast<int>(seen.size()) == world_size && *seen.begin() == 0 && *seen.rbegin() == world_size - 1;
      if (!covers) {
        fail("err_replica_group_mismatch",
             fmt::format("replica groups {} hold ranks {} to {} ({} ranks) but the world has {} ranks (0 to {}); "
                         "every rank of the world is in exactly one group",
                         groups_str(c.groups), *seen.begin(), *seen.rbegin(), seen.size(), world_size,
                         world_size - 1));
      }
    } else {
      c.groups.emplace_back();
      for (int r = 0; r < world_size; ++r) c.groups.back().push_back(r);
    }
    check_group_shapes(k, *op, static_cast<std::int64_t>(c.groups.front().size()));
  }
  return out;
}

}  // namespace nki
