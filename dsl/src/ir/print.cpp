/** \file Canonical IR text (the compile-cache key) and its hash. */
#include <fmt/format.h>

#include "nki/ir/passes.h"

namespace nki::ir {

namespace {

std::string access_str(const KernelIR& k, const Access& a) {
  std::vector<std::string> idx;
  for (const IndexExpr& e : a.indices) idx.push_back(to_string(e));
  return fmt::format("%{}[{}]", k.tensors.at(a.tensor).name, fmt::join(idx, ", "));
}

std::string tile_type(const KernelIR& k, int tile) {
  const TileInfo& t = k.tiles.at(tile);
  return fmt::format("{}{}", dtype_name(t.dtype), shape_str(t.shape));
}

std::string operand_str(const Operand& o) {
  return o.is_scalar() ? fmt::format("{}", o.scalar) : fmt::format("%t{}", o.tile);
}

struct OpPrinter {
  const KernelIR& k;
  std::string operator()(const LoadOp& op) const {
    return fmt::format("%t{} = load {} : {}", op.result, access_str(k, op.src), tile_type(k, op.result));
  }
  std::string operator()(const BinaryOp& op) const {
    return fmt::format("%t{} = {} {}, {} : {}", op.result, binary_name(op.kind), operand_str(op.lhs),
                       operand_str(op.rhs), tile_type(k, op.result));
  }
  std::string operator()(const StoreOp& op) const {
    return fmt::format("store {}, %t{}", access_str(k, op.dst), op.value);
  }
  std::string operator()(const std::monostate&) const { return "<empty>"; }
};

}  // namespace

std::string print(const KernelIR& k) {
  std::string out = fmt::format("kernel {} (grid rank {})\n", k.name, k.grid_rank);
  for (const TensorDecl& t : k.tensors) {
    out += fmt::format("  tensor %{} : {}{} {}\n", t.name, dtype_name(t.dtype), shape_str(t.shape),
                       memory_name(t.memory));
  }
  for (const Op& op : k.body) out += "  " + std::visit(OpPrinter{k}, op) + "\n";
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
