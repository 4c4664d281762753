/** \file Planning a kernel for the ranks of a world: groups from the mesh, per-rank MPMD kernels, the cache key's mesh. */
#include "world_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "nki/ir/passes.h"
#include "nki/error.h"
#include "nki/replica_groups.h"

namespace nki {

namespace {

/** The mesh and groups axis-named collectives use, as the cache key holds them ("" when none names an axis). */
std::string mesh_key_of(const ir::KernelIR& k, const Mesh& mesh, const std::vector<CollectiveGroups>& groups) {
  std::string s;
  for (const CollectiveGroups& c : groups) {
    const auto& op = std::get<ir::CollectiveOp>(k.body[static_cast<std::size_t>(c.op)]);
    if (op.group.axes.empty()) continue;
    std::vector<std::string> gs;
    for (const auto& g : c.groups) gs.push_back(fmt::format("[{}]", fmt::join(g, ",")));
    s += fmt::format("{{{}}} -> [{}]; ", fmt::join(op.group.axes, ","), fmt::join(gs, ","));
  }
  return s.empty() ? s : mesh.str() + ": " + s;
}

}  // namespace

bool spans_ranks(const ir::KernelIR& k) { return has_collectives(k) || ir::reads_rank(k); }

WorldPlan plan_world(const TracedKernel& traced, const Mesh& mesh, int first, int ranks, CompileMode mode) {
  const ir::KernelIR& ir = *traced.ir;
  for (const ir::Op& op : ir.body) {
    const auto* c = std::get_if<ir::CollectiveOp>(&op);
    if (c == nullptr || !ir::meets_cores(*c)) continue;
    throw UserError("err_core_sync_in_world_launch", ir.name, c->loc,
                    fmt::format("isa::{} meets the two NeuronCores of a logical core, and a world launch's rank is one "
                                "NeuronCore; launch the kernel without a mesh, its grid over nc(2)",
                                ir::collective_name(c->kind)));
  }
  WorldPlan p;
  p.groups = resolve_collective_groups(ir, mesh.size(), [&](const std::vector<std::string>& axes) {
    std::vector<AxisRef> refs;
    for (const std::string& a : axes) refs.push_back(AxisRef::parse(a));
    return replica_groups(mesh, refs).groups;
  });
  for (int r = 0; r < ranks; ++r) p.rank_groups.push_back(own_groups(p.groups, first + r));
  if (mode == CompileMode::mpmd) {
    for (int r = 0; r < ranks; ++r) {
      auto b = std::make_shared<TracedKernel>();
      b->ir = std::make_shared<const ir::KernelIR>(ir::bake_rank(ir, first + r, p.rank_groups[static_cast<std::size_t>(r)]));
      b->text = ir::print(*b->ir);
      b->hash = ir::hash_text(b->text);
      b->unproven = traced.unproven;
      p.baked.push_back(std::move(b));
    }
  }
  p.mesh_key = mesh_key_of(ir, mesh, p.groups);
  return p;
}

std::vector<sim::CollectiveShape> collective_shapes(const WorldPlan& plan, const ir::KernelIR& k, int rank,
                                                    int ranks_per_chip) {
  std::vector<sim::CollectiveShape> out;
  auto chips_of = [&](const std::vector<int>& ranks) {
    std::set<int> chips;
    for (int q : ranks) chips.insert(q / ranks_per_chip);
    return static_cast<int>(chips.size());
  };
  for (const CollectiveGroups& c : plan.groups) {
    const auto& op = std::get<ir::CollectiveOp>(k.body[static_cast<std::size_t>(c.op)]);
    if (op.kind == ir::CollectiveOp::Kind::permute) {
      std::vector<int> peers{rank};
      for (const auto& [s, t] : op.pairs) {
        if (s == rank) peers.push_back(t);
        if (t == rank) peers.push_back(s);
      }
      std::sort(peers.begin(), peers.end());
      peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
      out.push_back({peers.size() > 1 ? 2 : 1, chips_of(peers)});
      continue;
    }
    for (const auto& g : c.groups)
      if (std::find(g.begin(), g.end(), rank) != g.end()) out.push_back({static_cast<int>(g.size()), chips_of(g)});
  }
  return out;
}

}  // namespace nki
