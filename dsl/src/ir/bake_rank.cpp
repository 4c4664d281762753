/** \file MPMD: a kernel specialised for one rank, its rank and collective groups baked in as constants. */
#include <fmt/format.h>

#include "nki/error.h"
#include "nki/ir/kernel_ir.h"

namespace nki::ir {

namespace {

/** Calls `f` on every index expression an op holds (accesses, masks, predicates, iota and view indices). */
template <class Op, class F>
void for_each_index(Op& op, F&& f) {
  auto access = [&](auto& a) {
    for (auto& e : a.indices) f(e);
  };
  auto predicate = [&](auto& p) {
    for (auto& c : p.all) f(c.expr);
  };
  if constexpr (requires { op.src.indices; }) access(op.src);
  if constexpr (requires { op.dst.indices; }) access(op.dst);
  if constexpr (requires { op.mem.indices; }) access(op.mem);
  if constexpr (requires { op.mask.all; }) predicate(op.mask);
  if constexpr (requires { op.pred.all; }) predicate(op.pred);
  if constexpr (requires { op.expr.terms; }) f(op.expr);
  if constexpr (requires { op.indices.front().terms; })
    for (auto& e : op.indices) f(e);
}

}  // namespace

bool reads_rank(const KernelIR& k) {
  bool found = false;
  for (const Op& op : k.body)
    std::visit([&](const auto& o) { for_each_index(o, [&](const IndexExpr& e) { found = found || has_symbol(e, Sym::Kind::rank); }); }, op);
  return found;
}

KernelIR bake_rank(const KernelIR& k, int rank, const std::vector<std::vector<int>>& own_groups) {
  KernelIR out = k;
  out.baked_rank = rank;
  std::size_t collective = 0;
  for (Op& op : out.body) {
    std::visit([&](auto& o) { for_each_index(o, [&](IndexExpr& e) { e = bake_rank(e, rank); }); }, op);
    if (auto* c = std::get_if<CollectiveOp>(&op)) {
      if (collective >= own_groups.size())
        throw InternalError(fmt::format("{}: bake_rank was given {} groups for more collectives", k.name, own_groups.size()));
      if (c->kind != CollectiveOp::Kind::permute) c->group = {{own_groups[collective]}, {}};
      ++collective;
    }
  }
  return out;
}

}  // namespace nki::ir
