/** \file What the simulator's reports call an IR op, and where in the kernel source it was written. */
#pragma once

#include "nki/ir/kernel_ir.h"

namespace nki::sim {

/** A short name of the op: load, store, store+=, memset, exp, add, select, iota, sum, matmul, transpose, ... */
inline const char* op_label(const ir::Op& op) {
  if (std::holds_alternative<ir::LoadOp>(op)) return "load";
  if (const auto* s = std::get_if<ir::StoreOp>(&op)) return s->atomic ? "atomic_rmw" : s->index_tile >= 0 ? "scatter" : s->accumulate ? "store+=" : "store";
  if (std::holds_alternative<ir::AllocOp>(op)) return "memset";
  if (const auto* a = std::get_if<ir::ActivationOp>(&op)) return ir::act_name(a->kind);
  if (const auto* b = std::get_if<ir::BinaryOp>(&op)) return ir::binary_name(b->kind);
  if (std::holds_alternative<ir::SelectOp>(op)) return "select";
  if (std::holds_alternative<ir::IotaOp>(op)) return "iota";
  if (const auto* r = std::get_if<ir::ReduceOp>(&op)) return ir::reduce_name(r->kind);
  if (std::holds_alternative<ir::MatmulOp>(op)) return "matmul";
  if (std::holds_alternative<ir::TransposeOp>(op)) return "transpose";
  if (std::holds_alternative<ir::ScanOp>(op)) return "tensor_tensor_scan";
  if (std::holds_alternative<ir::ViewOp>(op)) return "view";
  if (std::holds_alternative<ir::QuantizeMxOp>(op)) return "quantize_mx";
  if (std::holds_alternative<ir::MatmulMxOp>(op)) return "matmul_mx";
  if (const auto* g = std::get_if<ir::GatherOp>(&op)) return g->indices >= 0 ? "gather" : "shuffle";
  if (const auto* c = std::get_if<ir::CollectiveOp>(&op)) return ir::collective_name(c->kind);
  if (std::holds_alternative<ir::LoopOp>(op)) return "loop";
  return "end";
}

/** Whether the op is part of the instruction that made its operand (ir fused flag): no instruction of its own. */
inline bool is_fused(const ir::Op& op) {
  return std::visit(
      [](const auto& o) {
        if constexpr (requires { o.fused; }) return o.fused;
        else return false;
      },
      op);
}

/** The engine the author picked for the op (engine=), or unknown. */
inline ir::Engine chosen_engine(const ir::Op& op) {
  return std::visit(
      [](const auto& o) {
        if constexpr (requires { o.engine; }) return o.engine;
        else return ir::Engine::unknown;
      },
      op);
}

/** The kernel source line of the op (unknown for a loop end). */
inline SourceLoc op_loc(const ir::Op& op) {
  return std::visit(
      [](const auto& o) -> SourceLoc {
        if constexpr (requires { o.loc; }) return o.loc;
        else return {};
      },
      op);
}

}  // namespace nki::sim
