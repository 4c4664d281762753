/** \file Canonical IR text (the compile-cache key) and its hash. */
#include <fmt/format.h>

#include <cstring>

#include "nki/ir/passes.h"
#include "nki/ir/walk.h"

namespace nki::ir {

namespace {

std::string access_str(const KernelIR& k, const Access& a) {
  std::vector<std::string> idx;
  for (const IndexExpr& e : a.indices) idx.push_back(to_string(e));
  return fmt::format("%{}[{}]", k.tensors.at(a.tensor).name, fmt::join(idx, ", "));
}

std::string tile_type(const KernelIR& k, int tile) {
  const TileInfo& t = k.tiles.at(tile);
  return fmt::format("{}{}{}", dtype_name(t.dtype), shape_str(t.shape), t.memory == Memory::psum ? " psum" : "");
}

std::string operand_str(const Operand& o) {
  if (!o.is_scalar()) return fmt::format("%t{}", o.tile);
  return o.scalar_is_float ? fmt::format("{}f", o.scalar) : fmt::format("{}", o.scalar);
}

std::string predicate_str(const Predicate& p) {
  std::vector<std::string> parts;
  for (const Condition& c : p.all) parts.push_back(fmt::format("{} {} 0", to_string(c.expr), c.not_equal ? "!=" : ">="));
  return fmt::format("{}", fmt::join(parts, " & "));
}

std::string mask_str(const Predicate& p) { return p.empty() ? "" : " mask(" + predicate_str(p) + ")"; }

/** The author's engine= and fusion into the previous instruction; printed only when set (timing, not values). */
std::string engine_str(Engine e, bool fused = false) {
  std::string s = e == Engine::unknown ? "" : fmt::format(" engine({})", engine_name(e));
  return fused ? s + " fused" : s;
}

struct OpPrinter {
  const KernelIR& k;
  std::string operator()(const LoadOp& op) const {
    const std::string indirect =
        op.index_tile < 0 ? "" : fmt::format(" indirect(dim {} += %t{}{})", op.index_dim, op.index_tile, op.oob_error ? " oob_error" : "");
    return fmt::format("%t{} = load {}{}{} : {}", op.result, access_str(k, op.src), indirect, mask_str(op.mask),
                       tile_type(k, op.result));
  }
  std::string operator()(const StoreOp& op) const {
    const std::string indirect =
        op.index_tile < 0 ? "" : fmt::format(" indirect(dim 0 += %t{}{})", op.index_tile, op.oob_error ? " oob_error" : "");
    return fmt::format("{} {}{}, %t{}{}", op.atomic ? "atomic_add" : op.accumulate ? "accumulate" : "store",
                       access_str(k, op.dst), indirect, op.value, mask_str(op.mask));
  }
  std::string operator()(const AllocOp& op) const { return fmt::format("alloc %{}", k.tensors.at(op.tensor).name); }
  std::string operator()(const ActivationOp& op) const {
    return fmt::format("%t{} = {} {} * {} + {}{}{} : {}", op.result, act_name(op.kind), operand_str(op.data),
                       operand_str(op.scale), operand_str(op.bias), mask_str(op.mask), engine_str(op.engine, op.fused),
                       tile_type(k, op.result));
  }
  std::string operator()(const BinaryOp& op) const {
    return fmt::format("%t{} = {} {}, {}{}{} : {}", op.result, binary_name(op.kind), operand_str(op.lhs),
                       operand_str(op.rhs), mask_str(op.mask), engine_str(op.engine, op.fused), tile_type(k, op.result));
  }
  std::string operator()(const SelectOp& op) const {
    const std::string cond = op.cond.is_scalar() ? "(" + predicate_str(op.pred) + ")" : operand_str(op.cond);
    return fmt::format("%t{} = select {}, {}, {}{}{} : {}", op.result, cond, operand_str(op.on_true),
                       operand_str(op.on_false), mask_str(op.mask), engine_str(Engine::unknown, op.fused),
                       tile_type(k, op.result));
  }
  std::string operator()(const IotaOp& op) const {
    return fmt::format("%t{} = iota {}{}{} : {}", op.result, to_string(op.expr), mask_str(op.mask),
                       engine_str(Engine::unknown, op.fused), tile_type(k, op.result));
  }
  std::string operator()(const ReduceOp& op) const {
    return fmt::format("%t{} = reduce_{} %t{} axes({}){}{}{} : {}", op.result, reduce_name(op.kind), op.data,
                       fmt::join(op.axes, ","), op.keepdims ? " keepdims" : "", mask_str(op.mask),
                       engine_str(op.engine, op.fused), tile_type(k, op.result));
  }
  std::string operator()(const MatmulOp& op) const {
    const std::string pair =
        op.stationary2 >= 0 ? fmt::format(" double_row %t{}, %t{}", op.stationary2, op.moving2) : std::string();
    std::string mode = op.transpose ? " transpose" : "";
    if (op.tile_rows != 128 || op.tile_columns != 128 || op.tile_row != 0 || op.tile_column != 0)
      mode += fmt::format(" tile({},{} size {},{})", op.tile_row, op.tile_column, op.tile_rows, op.tile_columns);
    if (op.stationary_onezero) mode += " stationary_onezero";
    if (op.moving_onezero) mode += " moving_onezero";
    return fmt::format("%t{} = matmul %t{}, %t{}{}{}{} : {}", op.result, op.stationary, op.moving, pair, mode,
                       mask_str(op.mask), tile_type(k, op.result));
  }
  std::string operator()(const TransposeOp& op) const {
    return fmt::format("%t{} = transpose %t{}{} : {}", op.result, op.data, engine_str(op.engine), tile_type(k, op.result));
  }
  std::string operator()(const ScanOp& op) const {
    return fmt::format("%t{} = scan {}{}, {}{} %t{}, %t{}, initial {} : {}", op.result, binary_name(op.op0),
                       op.reverse0 ? " reversed" : "", binary_name(op.op1), op.reverse1 ? " reversed" : "", op.data0,
                       op.data1, operand_str(op.initial), tile_type(k, op.result));
  }
  std::string operator()(const QuantizeMxOp& op) const {
    return fmt::format("%t{} = quantize_mx{} {} %t{} : {}", op.result, op.scale ? "_scale" : "", dtype_name(op.format),
                       op.data, tile_type(k, op.result));
  }
  std::string operator()(const MatmulMxOp& op) const {
    return fmt::format("%t{} = matmul_mx %t{}, %t{} scales %t{}, %t{} : {}", op.result, op.stationary, op.moving,
                       op.stationary_scale, op.moving_scale, tile_type(k, op.result));
  }
  std::string operator()(const ViewOp& op) const {
    std::vector<std::string> idx;
    for (const IndexExpr& e : op.indices) idx.push_back(to_string(e));
    return fmt::format("%t{} = view %t{}[{}] : {}", op.result, op.data, fmt::join(idx, ", "), tile_type(k, op.result));
  }
  std::string operator()(const RegisterOp& op) const {
    auto mem = [&] {
      std::vector<std::string> idx;
      for (const IndexExpr& e : op.mem.indices) idx.push_back(to_string(e));
      return fmt::format("%{}[{}]", k.tensors.at(static_cast<std::size_t>(op.mem.tensor)).name, fmt::join(idx, ", "));
    };
    switch (op.kind) {
      case RegisterOp::Kind::move:
        return op.src >= 0 ? fmt::format("%r{} = register_move %r{}", op.dst, op.src)
                           : fmt::format("%r{} = register_move {}", op.dst, op.imm);
      case RegisterOp::Kind::load: return fmt::format("%r{} = register_load {}", op.dst, mem());
      case RegisterOp::Kind::store: return fmt::format("register_store {}, %r{}", mem(), op.src);
    }
    return "?";
  }
  std::string operator()(const PrintOp& op) const { return fmt::format("device_print \"{}\" %t{}", op.prefix, op.tile); }
  std::string operator()(const GatherOp& op) const {
    const std::string src = op.indices >= 0 ? fmt::format("%t{}", op.indices) : fmt::format("table({})", fmt::join(op.table, ","));
    return fmt::format("%t{} = gather %t{}[{}] else {}{}{} : {}", op.result, op.data, src, operand_str(op.fallback),
                       op.oob_error ? " oob_error" : "", engine_str(op.engine), tile_type(k, op.result));
  }
  std::string operator()(const CollectiveOp& op) const {
    auto names = [&](const std::vector<int>& ids) {
      std::vector<std::string> out;
      for (int id : ids) out.push_back("%" + k.tensors.at(static_cast<std::size_t>(id)).name);
      return fmt::format("[{}]", fmt::join(out, ", "));
    };
    std::string group;
    if (!op.pairs.empty()) {
      std::vector<std::string> ps;
      for (const auto& [s, t] : op.pairs) ps.push_back(fmt::format("({},{})", s, t));
      group = fmt::format(" pairs [{}]", fmt::join(ps, ","));
    } else if (!op.group.axes.empty()) {
      group = fmt::format(" over axes {{{}}}", fmt::join(op.group.axes, ","));
    } else if (!op.group.groups.empty()) {
      std::vector<std::string> gs;
      for (const auto& g : op.group.groups) gs.push_back(fmt::format("[{}]", fmt::join(g, ",")));
      group = fmt::format(" over groups [{}]", fmt::join(gs, ","));
    } else {
      group = " over all ranks";
    }
    const bool reduces = op.kind == CollectiveOp::Kind::all_reduce || op.kind == CollectiveOp::Kind::reduce_scatter ||
                         op.kind == CollectiveOp::Kind::permute_implicit_reduce;
    const bool has_dim = op.kind == CollectiveOp::Kind::all_gather || op.kind == CollectiveOp::Kind::reduce_scatter ||
                         op.kind == CollectiveOp::Kind::all_to_all;
    std::string meta;
    if (op.metadata >= 0) {
      meta = fmt::format(" metadata %{}{}{}", k.tensors.at(static_cast<std::size_t>(op.metadata)).name,
                         op.recv_counts_known ? " recv_counts_known" : "", op.has_rdispls ? " has_rdispls" : "");
    }
    if (op.kind == CollectiveOp::Kind::core_barrier)
      return fmt::format("core_barrier {} cores [{}]{}", names(op.srcs), fmt::join(op.group.groups.front(), ","),
                         engine_str(op.engine));
    if (op.kind == CollectiveOp::Kind::sendrecv)
      return fmt::format("{} = sendrecv {} to core {} from core {} pipe {}{}", names(op.dsts), names(op.srcs),
                         to_string(op.send_to), to_string(op.recv_from), op.pipe_id, engine_str(op.engine));
    return fmt::format("{} = {}{}{} {}{}{}", names(op.dsts), collective_name(op.kind),
                       reduces ? fmt::format(" {}", reduce_name(op.op)) : "",
                       has_dim ? fmt::format(" dim {}", op.dim) : "", names(op.srcs), meta, group);
  }
  std::string operator()(const LoopOp& op) const {
    const LoopInfo& l = k.loops.at(op.loop);
    auto bound = [](int reg, std::int64_t v) { return reg >= 0 ? fmt::format("%r{}", reg) : std::to_string(v); };
    if (l.kind == LoopKind::dynamic)
      return fmt::format("for l{} in dynamic_range({}, {}, {}) -> %r{} {{", op.loop, bound(l.lower_reg, l.lower),
                         bound(l.upper_reg, l.upper), l.step, l.induction);
    if (l.kind == LoopKind::while_loop)
      return fmt::format("while l{} %r{} -> %r{} {{", op.loop, l.cond, l.induction);
    return fmt::format("for l{} in {}({}) {{", op.loop, loop_kind_name(l.kind), l.trip);
  }
  std::string operator()(const LoopEndOp&) const { return "}"; }
  std::string operator()(const std::monostate&) const { return "<empty>"; }
};

std::string tensor_str(const TensorDecl& t) {
  std::string s = fmt::format("tensor %{} : {}{} {}", t.name, dtype_name(t.dtype), shape_str(t.shape),
                              memory_name(t.memory));
  if (!is_hbm(t.memory) && t.shape.size() > 1) s += fmt::format(" par_dim({})", t.par_dim);
  if (t.fill) s += fmt::format(" fill({})", *t.fill);
  if (t.view_of >= 0) s += fmt::format(" view_of(tensor {})", t.view_of);  // the same storage, reinterpreted
  if (t.placement.placed) {
    const Placement& p = t.placement;
    s += t.memory == Memory::psum
             ? fmt::format(" at(bank {}, partition {}, byte {}, storage {})", p.bank, p.partition, p.address, shape_str(p.storage))
             : fmt::format(" at(partition {}, byte {}, storage {})", p.partition, p.address, shape_str(p.storage));
  }
  // A constant's values are bound at launch, not compiled in: their hash names them in the printout.
  if (!t.values.empty()) {
    std::string bytes(t.values.size() * sizeof(double), '\0');
    std::memcpy(bytes.data(), t.values.data(), bytes.size());
    s += fmt::format(" values({} hash {})", t.values.size(), hash_text(bytes));
  }
  return s;
}

}  // namespace

std::string print(const KernelIR& k) {
  std::string out = fmt::format("kernel {} (grid rank {})\n", k.name, k.grid_rank);
  if (k.nc_version != 0) out += fmt::format("  traced for nc_version gen{}\n", k.nc_version);
  if (k.baked_rank >= 0) out += fmt::format("  baked for rank {}\n", k.baked_rank);
  for (const TensorDecl& t : k.tensors) out += "  " + tensor_str(t) + "\n";
  const LoopNest nest(k);
  for (std::size_t i = 0; i < k.body.size(); ++i)  // a loop's markers line up with the ops around it
    out += std::string(2 * (1 + nest.depth(i)), ' ') + std::visit(OpPrinter{k}, k.body[i]) + "\n";
  std::vector<std::string> outs;
  for (int id : k.outputs) outs.push_back("%" + k.tensors.at(id).name);
  out += fmt::format("  return {}\n", fmt::join(outs, ", "));
  return out;
}

std::string hash_text(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return fmt::format("{:016x}", h);
}

}  // namespace nki::ir
