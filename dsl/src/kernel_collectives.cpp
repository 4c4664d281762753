/**
 * \file nki.collectives traced into ir::CollectiveOp, and rank_id into an index symbol.
 * What the trace knows is checked here (memories, dtypes, shapes but the group size, groups
 * written out); the group size of mesh axes and the world are checked at launch.
 */
#include "nki/kernel_collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string_view>

#include "nki/trace.h"

namespace nki::collectives {

namespace {

using Kind = ir::CollectiveOp::Kind;

struct Checker {
  Trace& t;
  const char* op;
  SourceLoc loc;

  [[noreturn]] void fail(const char* name, std::string detail) const {
    t.fail(name, loc, fmt::format("{}: {}", op, detail));
  }
  const ir::TensorDecl& decl(const nl::tensor& x) const { return t.ir().tensors.at(static_cast<std::size_t>(x.id())); }
};

std::vector<std::vector<int>> checked_groups(const Checker& c, const ReplicaGroup& g) {
  if (!g.groups.empty() && !g.axes.empty())
    c.fail("err_invalid_replica_group", "a ReplicaGroup gives either groups or mesh axes, not both");
  std::set<int> seen;
  for (std::size_t i = 0; i < g.groups.size(); ++i) {
    const auto& group = g.groups[i];
    if (group.empty()) c.fail("err_invalid_replica_group", fmt::format("group {} is empty", i));
    if (group.size() != g.groups.front().size()) {
      c.fail("err_uneven_replica_groups",
             fmt::format("group {} has {} ranks and group 0 has {}; every group of a collective has the same size", i,
                         group.size(), g.groups.front().size()));
    }
    for (int r : group) {
      if (r < 0) c.fail("err_invalid_replica_group", fmt::format("group {} names rank {}; ranks are >= 0", i, r));
      if (!seen.insert(r).second)
        c.fail("err_invalid_replica_group", fmt::format("rank {} is in more than one place of the groups; groups do not overlap", r));
    }
  }
  for (const std::string& a : g.axes)
    if (a.empty()) c.fail("err_invalid_replica_group", "a mesh axis name is empty");
  return g.groups;
}

/** The group size when the groups are written out (0: known at launch only). */
std::int64_t known_group_size(const ReplicaGroup& g) {
  return g.groups.empty() ? 0 : static_cast<std::int64_t>(g.groups.front().size());
}

/** The reduction of nl::add / nl::maximum / nl::minimum. */
ir::ReduceKind reduction(const Checker& c, const nl::binary_fn& op) {
  switch (op.kind) {
    case ir::BinaryKind::add: return ir::ReduceKind::sum;
    case ir::BinaryKind::maximum: return ir::ReduceKind::max;
    case ir::BinaryKind::minimum: return ir::ReduceKind::min;
    default:
      c.fail("err_unsupported_collective_op",
             fmt::format("op is nl::{}; a collective reduces with nl::add, nl::maximum or nl::minimum",
                         ir::binary_name(op.kind)));
  }
}

/**
 * Checks the buffers: as many dsts as srcs, at least one, all in HBM or all in SBUF (several
 * only in HBM; SBUF only where `sbuf_ok`), a dst of its src's dtype, no dst a constant.
 */
bool check_buffers(const Checker& c, const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts,
                   bool sbuf_ok) {
  if (srcs.empty() || srcs.size() != dsts.size()) {
    c.fail("err_collective_buffers",
           fmt::format("{} srcs and {} dsts were given; a collective takes one dst per src, at least one", srcs.size(),
                       dsts.size()));
  }
  bool any_sbuf = false, any_hbm = false;
  auto memory_of = [&](const nl::tensor& x, const char* role) {
    const ir::TensorDecl& d = c.decl(x);
    if (ir::is_hbm(d.memory)) {
      any_hbm = true;
    } else if (d.memory == ir::Memory::sbuf && sbuf_ok) {
      any_sbuf = true;
    } else {
      c.fail("err_collective_memory",
             fmt::format("{} {} is in {}; this collective takes tensors in {}", role, d.name, ir::memory_name(d.memory),
                         sbuf_ok ? "HBM or SBUF" : "HBM"));
    }
  };
  for (std::size_t i = 0; i < srcs.size(); ++i) {
    memory_of(srcs[i], "src");
    memory_of(dsts[i], "dst");
    const ir::TensorDecl& s = c.decl(srcs[i]);
    const ir::TensorDecl& d = c.decl(dsts[i]);
    if (d.memory == ir::Memory::constant_hbm)
      c.fail("err_collective_memory", fmt::format("dst {} is a shared constant: constants are read-only", d.name));
    if (s.dtype != d.dtype) {
      c.fail("err_collective_dtype_mismatch",
             fmt::format("src {} is {} and dst {} is {}; a collective moves values without converting them", s.name,
                         dtype_name(s.dtype), d.name, dtype_name(d.dtype)));
    }
    if (s.shape.size() != d.shape.size()) {
      c.fail("err_collective_shape_mismatch",
             fmt::format("src {} {} and dst {} {} differ in rank", s.name, shape_str(s.shape), d.name, shape_str(d.shape)));
    }
  }
  if (any_sbuf && any_hbm) c.fail("err_collective_memory", "tensors are in HBM and in SBUF; all must be in one");
  // Only an all_reduce may write where it reads: the others write a dst while the group still reads srcs.
  if (std::string_view(c.op) != "all_reduce") {
    for (const nl::tensor& d : dsts)
      for (const nl::tensor& s : srcs)
        if (d.id() == s.id())
          c.fail("err_collective_buffers", fmt::format("{} is both a src and a dst; give the collective a dst of its own", c.decl(d).name));
  }
  if (any_sbuf && srcs.size() > 1)
    c.fail("err_collective_memory", fmt::format("{} SBUF tensors were given; coalesced collectives take HBM tensors", srcs.size()));
  return any_sbuf;
}

/** dst's shape along `dim` relates to src's by `factor` (dst = src * factor, or src = dst * factor when `shrinks`). */
void check_dim_shapes(const Checker& c, const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts,
                      int dim, std::int64_t group_size, bool shrinks, bool same) {
  for (std::size_t i = 0; i < srcs.size(); ++i) {
    const ir::TensorDecl& s = c.decl(srcs[i]);
    const ir::TensorDecl& d = c.decl(dsts[i]);
    bool ok = true;
    for (std::size_t k = 0; k < s.shape.size(); ++k) {
      if (same || static_cast<int>(k) != dim) {
        ok = ok && s.shape[k] == d.shape[k];
        continue;
      }
      const std::int64_t small = shrinks ? d.shape[k] : s.shape[k], big = shrinks ? s.shape[k] : d.shape[k];
      ok = ok && small > 0 && big % small == 0 && (group_size == 0 || big == small * group_size);
    }
    if (ok) continue;
    std::string rule;
    if (same) rule = "dst has src's shape";
    else if (shrinks) rule = fmt::format("dst is src split along dim {} into {} parts", dim, group_size ? std::to_string(group_size) : "group-size");
    else rule = fmt::format("dst is {} srcs joined along dim {}", group_size ? std::to_string(group_size) : "group-size", dim);
    c.fail("err_collective_shape_mismatch",
           fmt::format("src {} is {} and dst {} is {}; {}", s.name, shape_str(s.shape), d.name, shape_str(d.shape), rule));
  }
}

void check_dim(const Checker& c, int dim, bool sbuf, const std::vector<nl::tensor>& srcs, bool sbuf_dim1) {
  const bool ok = dim == 0 || (sbuf && sbuf_dim1 && dim == 1);
  if (!ok) {
    c.fail("err_unsupported_collective_dim",
           fmt::format("collective_dim is {}; it is 0{}", dim, sbuf_dim1 ? " (0 or 1 for SBUF tensors)" : ""));
  }
  if (sbuf && c.decl(srcs.front()).shape.size() != 2)
    c.fail("err_collective_memory", fmt::format("SBUF tensor {} is {}-D; SBUF collectives take 2-D tensors",
                                                c.decl(srcs.front()).name, c.decl(srcs.front()).shape.size()));
}

ir::CollectiveOp make_op(Kind kind, const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts,
                         ir::ReduceKind op, int dim, const ReplicaGroup& group, std::vector<std::pair<int, int>> pairs,
                         SourceLoc loc) {
  ir::CollectiveOp c;
  c.kind = kind;
  for (const nl::tensor& s : srcs) c.srcs.push_back(s.id());
  for (const nl::tensor& d : dsts) c.dsts.push_back(d.id());
  c.op = op;
  c.dim = dim;
  c.group.groups = group.groups;
  c.group.axes = group.axes;
  c.pairs = std::move(pairs);
  c.loc = loc;
  return c;
}

void emit(Trace& t, Kind kind, const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts,
          ir::ReduceKind op, int dim, const ReplicaGroup& group, std::vector<std::pair<int, int>> pairs, SourceLoc loc) {
  t.emit(make_op(kind, srcs, dsts, op, dim, group, std::move(pairs), loc));
}

/** The one tensor of channel 0 of each list, after checking there is exactly one channel (0) and one tensor. */
std::vector<const nl::tensor*> channel0(const Checker& c, const std::vector<int>& channel_ids,
                                        std::initializer_list<const std::vector<std::vector<nl::tensor>>*> lists) {
  bool one = channel_ids == std::vector<int>{0};
  for (const auto* l : lists) one = one && l->size() == 1;
  if (!one) {
    std::vector<std::string> sizes;
    for (const auto* l : lists) sizes.push_back(std::to_string(l->size()));
    c.fail("err_unsupported_channels",
           fmt::format("{} channel ids and channel lists of {} were given; one channel (0) is modelled",
                       channel_ids.size(), fmt::join(sizes, ", ")));
  }
  std::vector<const nl::tensor*> out;
  for (const auto* l : lists) {
    if (l->front().size() != 1)
      c.fail("err_collective_buffers", fmt::format("channel 0 has {} tensors in a list; each takes exactly one", l->front().size()));
    out.push_back(&l->front().front());
  }
  return out;
}

/** The _v kinds' metadata: uint32, HBM [rows, G] or SBUF [1, rows, G] (G checked at launch). */
void check_metadata(const Checker& c, const nl::tensor& m, int rows) {
  const ir::TensorDecl& d = c.decl(m);
  const bool hbm = ir::is_hbm(d.memory), sbuf = d.memory == ir::Memory::sbuf;
  const bool shape_ok = (hbm && d.shape.size() == 2 && d.shape[0] == rows) ||
                        (sbuf && d.shape.size() == 3 && d.shape[0] == 1 && d.shape[1] == rows);
  if (d.dtype != DType::uint32 || !(hbm || sbuf) || !shape_ok) {
    c.fail("err_collective_metadata",
           fmt::format("metadata {} is {} {} in {}; it is uint32 [{}, G] in HBM or [1, {}, G] in SBUF (G the group's size)",
                       d.name, dtype_name(d.dtype), shape_str(d.shape), ir::memory_name(d.memory), rows, rows));
  }
  if (d.memory == ir::Memory::constant_hbm)
    c.fail("err_collective_metadata", fmt::format("metadata {} is a shared constant: its row 2 receives counts", d.name));
}

void emit_v(const Checker& c, Kind kind, const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts,
            const ReplicaGroup& group, const nl::tensor& metadata, const v_options& v) {
  checked_groups(c, group);
  if (srcs.size() != 1 || dsts.size() != 1) {
    c.fail("err_collective_buffers",
           fmt::format("{} srcs and {} dsts were given; {} takes exactly one of each", srcs.size(), dsts.size(), c.op));
  }
  check_buffers(c, srcs, dsts, false);
  if (kind == Kind::all_gather_v && v.has_rdispls)
    c.fail("err_unsupported_collective_option", "has_rdispls is not supported by all_gather_v (chunks land at q * S)");
  check_metadata(c, metadata, v.has_rdispls ? 4 : 3);
  ir::CollectiveOp op = make_op(kind, srcs, dsts, ir::ReduceKind::sum, 0, group, {}, c.loc);
  op.metadata = metadata.id();
  op.recv_counts_known = v.recv_counts_known;
  op.has_rdispls = v.has_rdispls;
  c.t.emit(std::move(op));
}

void check_priority(const Checker& c, const collective_options& o) {
  if (o.priority < -1 || o.priority > 3)
    c.fail("err_invalid_priority", fmt::format("priority is {}; it is 0 to 3 (lower is higher)", o.priority));
}

Checker checker(const char* op, const std::source_location& where) {
  return {Trace::current(op, where), op, SourceLoc::from(where)};
}

}  // namespace

nl::index rank_id(std::source_location where) {
  (void)Trace::current("rank_id", where);
  return nl::index(ir::IndexExpr::symbol({ir::Sym::Kind::rank, 0}), SourceLoc::from(where));
}

void all_reduce(const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts, const ReplicaGroup& group,
                const nl::binary_fn& op, const collective_options& o, std::source_location where) {
  const Checker c = checker("all_reduce", where);
  check_priority(c, o);
  checked_groups(c, group);
  const ir::ReduceKind r = reduction(c, op);
  check_buffers(c, srcs, dsts, true);
  check_dim_shapes(c, srcs, dsts, 0, 0, false, true);
  emit(c.t, Kind::all_reduce, srcs, dsts, r, 0, group, {}, c.loc);
}

void all_gather(const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts, const ReplicaGroup& group,
                int collective_dim, const collective_options& o, std::source_location where) {
  const Checker c = checker("all_gather", where);
  check_priority(c, o);
  checked_groups(c, group);
  const bool sbuf = check_buffers(c, srcs, dsts, true);
  check_dim(c, collective_dim, sbuf, srcs, true);
  check_dim_shapes(c, srcs, dsts, collective_dim, known_group_size(group), false, false);
  emit(c.t, Kind::all_gather, srcs, dsts, ir::ReduceKind::sum, collective_dim, group, {}, c.loc);
}

void reduce_scatter(const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts, const ReplicaGroup& group,
                    int collective_dim, const nl::binary_fn& op, const collective_options& o,
                    std::source_location where) {
  const Checker c = checker("reduce_scatter", where);
  check_priority(c, o);
  checked_groups(c, group);
  const ir::ReduceKind r = reduction(c, op);
  const bool sbuf = check_buffers(c, srcs, dsts, true);
  check_dim(c, collective_dim, sbuf, srcs, false);
  check_dim_shapes(c, srcs, dsts, collective_dim, known_group_size(group), true, false);
  emit(c.t, Kind::reduce_scatter, srcs, dsts, r, collective_dim, group, {}, c.loc);
}

void all_to_all(const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts, const ReplicaGroup& group,
                int collective_dim, const collective_options& o, std::source_location where) {
  const Checker c = checker("all_to_all", where);
  check_priority(c, o);
  checked_groups(c, group);
  check_buffers(c, srcs, dsts, false);
  check_dim(c, collective_dim, false, srcs, false);
  check_dim_shapes(c, srcs, dsts, collective_dim, 0, false, true);
  for (const nl::tensor& s : srcs) {
    const std::int64_t g = known_group_size(group);
    const ir::TensorDecl& d = c.decl(s);
    if (g > 0 && d.shape[0] % g != 0) {
      c.fail("err_collective_shape_mismatch",
             fmt::format("src {} is {}: dim 0 does not split into {} parts, one per rank of the group", d.name,
                         shape_str(d.shape), g));
    }
  }
  emit(c.t, Kind::all_to_all, srcs, dsts, ir::ReduceKind::sum, collective_dim, group, {}, c.loc);
}

void collective_permute(const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts,
                        const std::vector<std::pair<int, int>>& source_target_pairs, const collective_options& o,
                        std::source_location where) {
  const Checker c = checker("collective_permute", where);
  check_priority(c, o);
  if (srcs.size() != 1 || dsts.size() != 1) {
    c.fail("err_collective_buffers",
           fmt::format("{} srcs and {} dsts were given; collective_permute takes exactly one of each", srcs.size(),
                       dsts.size()));
  }
  check_buffers(c, srcs, dsts, false);
  check_dim_shapes(c, srcs, dsts, 0, 0, false, true);
  if (source_target_pairs.empty()) c.fail("err_invalid_source_target_pairs", "no (source, target) pair was given");
  std::set<int> sources, targets;
  for (const auto& [s, tgt] : source_target_pairs) {
    if (s < 0 || tgt < 0)
      c.fail("err_invalid_source_target_pairs", fmt::format("pair ({}, {}) names a rank < 0", s, tgt));
    if (!sources.insert(s).second)
      c.fail("err_invalid_source_target_pairs", fmt::format("rank {} is the source of two pairs", s));
    if (!targets.insert(tgt).second)
      c.fail("err_invalid_source_target_pairs", fmt::format("rank {} is the target of two pairs", tgt));
  }
  emit(c.t, Kind::permute, srcs, dsts, ir::ReduceKind::sum, 0, {}, source_target_pairs, c.loc);
}

void collective_permute_implicit(const std::vector<std::vector<nl::tensor>>& srcs_by_channel,
                                 const std::vector<std::vector<nl::tensor>>& dsts_by_channel,
                                 const ReplicaGroup& group, const std::vector<int>& channel_ids,
                                 const collective_options& o, std::source_location where) {
  const Checker c = checker("collective_permute_implicit", where);
  check_priority(c, o);
  checked_groups(c, group);
  if (channel_ids != std::vector<int>{0} || srcs_by_channel.size() != 1 || dsts_by_channel.size() != 1) {
    c.fail("err_unsupported_channels",
           fmt::format("{} channel ids, {} src and {} dst channel lists were given; one channel (0) is modelled",
                       channel_ids.size(), srcs_by_channel.size(), dsts_by_channel.size()));
  }
  const auto& srcs = srcs_by_channel.front();
  const auto& dsts = dsts_by_channel.front();
  if (srcs.size() != 1 || dsts.size() != 1) {
    c.fail("err_collective_buffers",
           fmt::format("channel 0 has {} srcs and {} dsts; each channel takes exactly one of each", srcs.size(),
                       dsts.size()));
  }
  check_buffers(c, srcs, dsts, false);
  check_dim_shapes(c, srcs, dsts, 0, 0, false, true);
  emit(c.t, Kind::permute_implicit, srcs, dsts, ir::ReduceKind::sum, 0, group, {}, c.loc);
}

void collective_permute_implicit_reduce(const std::vector<std::vector<nl::tensor>>& srcs0_by_channel,
                                        const std::vector<std::vector<nl::tensor>>& srcs1_by_channel,
                                        const std::vector<std::vector<nl::tensor>>& dsts_by_channel,
                                        const ReplicaGroup& group, const nl::binary_fn& op,
                                        const std::vector<int>& channel_ids, const collective_options& o,
                                        std::source_location where) {
  const Checker c = checker("collective_permute_implicit_reduce", where);
  check_priority(c, o);
  checked_groups(c, group);
  const ir::ReduceKind r = reduction(c, op);
  const auto t = channel0(c, channel_ids, {&srcs0_by_channel, &srcs1_by_channel, &dsts_by_channel});
  // Both srcs pair with the dst: the same shape and dtype, in HBM.
  check_buffers(c, {*t[0], *t[1]}, {*t[2], *t[2]}, false);
  check_dim_shapes(c, {*t[0], *t[1]}, {*t[2], *t[2]}, 0, 0, false, true);
  emit(c.t, Kind::permute_implicit_reduce, {*t[0], *t[1]}, {*t[2]}, r, 0, group, {}, c.loc);
}

void all_gather_v(const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts, const ReplicaGroup& group,
                  const nl::tensor& metadata, const v_options& v, const collective_options& o, std::source_location where) {
  const Checker c = checker("all_gather_v", where);
  check_priority(c, o);
  emit_v(c, Kind::all_gather_v, srcs, dsts, group, metadata, v);
}

void all_to_all_v(const std::vector<nl::tensor>& srcs, const std::vector<nl::tensor>& dsts, const ReplicaGroup& group,
                  const nl::tensor& metadata, const v_options& v, const collective_options& o, std::source_location where) {
  const Checker c = checker("all_to_all_v", where);
  check_priority(c, o);
  emit_v(c, Kind::all_to_all_v, srcs, dsts, group, metadata, v);
}

}  // namespace nki::collectives
