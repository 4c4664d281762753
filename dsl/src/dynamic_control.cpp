/**
 * \file Registers (isa.register_alloc / move / load / store), loops with run-time trip counts
 * (nl.dynamic_range, nl.fori_loop, nl.while_loop), nl.no_reorder and nl.device_print, traced into RegisterOps,
 * dynamic LoopInfos and PrintOps that both executors run (docs/reference.md, "Registers and dynamic loops").
 */
#include <fmt/format.h>

#include <cstdint>
#include <exception>

#include "nki/language.h"
#include "nki/trace.h"

namespace nki::language::detail {
ir::Access resolve_access(Trace& t, const access& a);  // language.cpp
}  // namespace nki::language::detail

namespace nki {

namespace {


/** The no_reorder blocks open in the trace being recorded on this thread. */
struct NoReorderState {
  const Trace* trace = nullptr;
  int depth = 0;
};
thread_local NoReorderState no_reorder_state;

bool in_no_reorder(const Trace& t) { return no_reorder_state.trace == &t && no_reorder_state.depth > 0; }

int new_register(Trace& t) { return t.ir().registers++; }

void check_register(Trace& t, const isa::VirtualRegister& r, const char* op, const SourceLoc& loc) {
  if (r.id() < 0 || r.id() >= t.ir().registers)
    t.fail("err_invalid_register", loc, fmt::format("{}: register {} was not made by isa::register_alloc in this kernel", op, r.id()));
}

std::int32_t checked_int32(Trace& t, std::int64_t v, const char* op, const SourceLoc& loc) {
  if (v < INT32_MIN || v > INT32_MAX)
    t.fail("err_register_value_out_of_range", loc,
           fmt::format("{}: {} does not fit a 32-bit register ([{}, {}])", op, v, INT32_MIN, INT32_MAX));
  return static_cast<std::int32_t>(v);
}

void emit_move(Trace& t, int dst, int src, std::int32_t imm, const SourceLoc& loc) {
  ir::RegisterOp op;
  op.kind = ir::RegisterOp::Kind::move;
  op.dst = dst;
  op.src = src;
  op.imm = imm;
  op.loc = loc;
  t.emit(std::move(op));
}

/** The single element a register instruction reads or writes: a one-element integer tensor (window) in SBUF or HBM. */
ir::Access register_element(Trace& t, const language::access& a, bool whole, const char* op, const SourceLoc& loc) {
  ir::Access acc = language::detail::resolve_access(t, a);
  acc.loc = loc;
  const ir::TensorDecl& decl = t.ir().tensors.at(static_cast<std::size_t>(acc.tensor));
  const Shape& what = whole ? decl.shape : acc.shape;
  if (shape_elements(what) != 1) {
    t.fail("err_register_tensor_shape", loc,
           fmt::format("{}: {} {} has {} elements; a register moves exactly one ([1] or [1, 1])", op,
                       whole ? "tensor " + decl.name : "the window of tensor " + decl.name, shape_str(what),
                       shape_elements(what)));
  }
  if (decl.memory == ir::Memory::psum) {
    t.fail("err_register_memory", loc, fmt::format("{}: tensor {} is in psum; a register moves to or from SBUF or HBM", op, decl.name));
  }
  if (!ir::is_register_dtype(decl.dtype)) {
    t.fail("err_register_dtype", loc,
           fmt::format("{}: tensor {} is {}; a register moves an integer of at most 32 bits (int8, int16, int32, "
                       "uint8, uint16, uint32)",
                       op, decl.name, dtype_name(decl.dtype)));
  }
  return acc;
}

void emit_load(const isa::VirtualRegister& dst, const language::access& src, bool whole, const std::source_location& where) {
  Trace& t = Trace::current("isa::register_load", where);
  const SourceLoc loc = SourceLoc::from(where);
  check_register(t, dst, "isa::register_load", loc);
  ir::RegisterOp op;
  op.kind = ir::RegisterOp::Kind::load;
  op.dst = dst.id();
  op.mem = register_element(t, src, whole, "isa::register_load", loc);
  op.loc = loc;
  t.emit(std::move(op));
}

void emit_store(const language::access& dst, const isa::VirtualRegister& src, bool whole, const std::source_location& where) {
  Trace& t = Trace::current("isa::register_store", where);
  const SourceLoc loc = SourceLoc::from(where);
  check_register(t, src, "isa::register_store", loc);
  const ir::TensorDecl& decl = t.ir().tensors.at(static_cast<std::size_t>(dst.tensor()));
  if (decl.memory == ir::Memory::constant_hbm)
    t.fail("err_unsupported_memory", loc,
           fmt::format("isa::register_store into tensor {}, a shared constant: constants are read-only", decl.name));
  ir::RegisterOp op;
  op.kind = ir::RegisterOp::Kind::store;
  op.src = src.id();
  op.mem = register_element(t, dst, whole, "isa::register_store", loc);
  op.loc = loc;
  t.emit(std::move(op));
}

}  // namespace

namespace isa {

VirtualRegister register_alloc(std::source_location where) {
  Trace& t = Trace::current("isa::register_alloc", where);
  return VirtualRegister(new_register(t));
}

VirtualRegister register_alloc(std::int64_t x, std::source_location where) {
  Trace& t = Trace::current("isa::register_alloc", where);
  const std::int32_t v = checked_int32(t, x, "isa::register_alloc", SourceLoc::from(where));
  const int r = new_register(t);
  emit_move(t, r, -1, v, SourceLoc::from(where));
  return VirtualRegister(r);
}

void register_move(const VirtualRegister& dst, std::int64_t value, std::source_location where) {
  Trace& t = Trace::current("isa::register_move", where);
  check_register(t, dst, "isa::register_move", SourceLoc::from(where));
  emit_move(t, dst.id(), -1, checked_int32(t, value, "isa::register_move", SourceLoc::from(where)), SourceLoc::from(where));
}

void register_move(const VirtualRegister& dst, const VirtualRegister& src, std::source_location where) {
  Trace& t = Trace::current("isa::register_move", where);
  check_register(t, dst, "isa::register_move", SourceLoc::from(where));
  check_register(t, src, "isa::register_move", SourceLoc::from(where));
  emit_move(t, dst.id(), src.id(), 0, SourceLoc::from(where));
}

void register_load(const VirtualRegister& dst, const nl::tensor& src, std::source_location where) {
  emit_load(dst, src.all(where), true, where);
}
void register_load(const VirtualRegister& dst, const nl::access& src, std::source_location where) {
  emit_load(dst, src, false, where);
}
void register_store(const nl::tensor& dst, const VirtualRegister& src, std::source_location where) {
  emit_store(dst.all(where), src, true, where);
}
void register_store(const nl::access& dst, const VirtualRegister& src, std::source_location where) {
  emit_store(dst, src, false, where);
}

}  // namespace isa

namespace language {

namespace detail {

namespace {
void refuse_in_no_reorder(Trace& t, const char* op, const SourceLoc& loc) {
  if (in_no_reorder(t))
    t.fail("err_dynamic_loop_in_no_reorder", loc,
           fmt::format("nl::{}: a loop with a run-time trip count cannot be inside nl::no_reorder (static loops can)", op));
}
}  // namespace

int open_dynamic_loop(const char* op, loop_bound lower, loop_bound upper, std::int64_t step, int& induction,
                      std::source_location where) {
  Trace& t = Trace::current(op, where);
  const SourceLoc loc = SourceLoc::from(where);
  refuse_in_no_reorder(t, op, loc);
  if (step <= 0)
    t.fail("err_invalid_loop_range", loc, fmt::format("nl::{}: the step is {}; it must be a positive integer", op, step));
  const std::string name = fmt::format("nl::{}", op);
  for (const loop_bound& b : {lower, upper}) {
    if (b.reg >= 0) check_register(t, isa::VirtualRegister(b.reg), name.c_str(), loc);
    else checked_int32(t, b.value, name.c_str(), loc);
  }
  checked_int32(t, step, name.c_str(), loc);
  induction = new_register(t);
  const int id = t.open_loop(ir::LoopKind::dynamic, 1, loc);
  ir::LoopInfo& l = t.ir().loops[static_cast<std::size_t>(id)];
  l.lower_reg = lower.reg;
  l.upper_reg = upper.reg;
  l.lower = lower.reg >= 0 ? 0 : lower.value;
  l.upper = upper.reg >= 0 ? 0 : upper.value;
  l.step = step;
  l.induction = induction;
  return id;
}

int open_while_loop(const isa::VirtualRegister& init, int& value, std::source_location where) {
  Trace& t = Trace::current("nl::while_loop", where);
  const SourceLoc loc = SourceLoc::from(where);
  refuse_in_no_reorder(t, "while_loop", loc);
  check_register(t, init, "nl::while_loop", loc);
  const int cond = new_register(t);
  emit_move(t, cond, init.id(), 0, loc);  // the loop owns its condition: init itself is left as it is
  value = new_register(t);
  const int id = t.open_loop(ir::LoopKind::while_loop, 1, loc);
  ir::LoopInfo& l = t.ir().loops[static_cast<std::size_t>(id)];
  l.cond = cond;
  l.induction = value;
  return id;
}

void close_while_loop(int loop, const isa::VirtualRegister& next, std::source_location where) {
  Trace& t = Trace::current("nl::while_loop", where);
  const SourceLoc loc = SourceLoc::from(where);
  check_register(t, next, "nl::while_loop (the body's result)", loc);
  emit_move(t, t.ir().loops[static_cast<std::size_t>(loop)].cond, next.id(), 0, loc);
  t.close_loop(loop);
}

void await_range_for(int loop) { Trace::current("nl::dynamic_range", std::source_location::current()).await_range_for(loop); }
void range_for_begins(int loop) { Trace::current("nl::dynamic_range", std::source_location::current()).range_for_begins(loop); }
void range_for_ends(int loop) { Trace::current("nl::dynamic_range", std::source_location::current()).range_for_ends(loop); }

void close_dynamic_loop(int loop) {
  // While an error unwinds, the trace is being abandoned: leave it as it is.
  Trace* t = Trace::active();
  if (t != nullptr && std::uncaught_exceptions() == 0 && t->innermost_loop() == loop) t->close_loop(loop);
}

}  // namespace detail

void device_print(const std::string& prefix, const access& src, std::source_location where) {
  Trace& t = Trace::current("nl::device_print", where);
  const ir::Memory m = t.ir().tensors.at(static_cast<std::size_t>(src.tensor())).memory;
  // HBM is read as nl::load reads it, an on-chip array as an operand reads it.
  device_print(prefix, ir::is_hbm(m) ? load(src, {}, where) : tile(operand(src, where).tile_id), where);
}
void device_print(const std::string& prefix, const tensor& src, std::source_location where) {
  device_print(prefix, src.all(where), where);
}
void device_print(const std::string& prefix, const tile& src, std::source_location where) {
  Trace& t = Trace::current("nl::device_print", where);
  t.emit(ir::PrintOp{prefix, src.id(), SourceLoc::from(where)});
}

no_reorder::no_reorder(std::source_location where) {
  Trace& t = Trace::current("nl::no_reorder", where);
  if (no_reorder_state.trace != &t) no_reorder_state = {&t, 0};
  ++no_reorder_state.depth;
  trace_ = &t;
}

no_reorder::~no_reorder() {
  if (no_reorder_state.trace == trace_ && no_reorder_state.depth > 0) --no_reorder_state.depth;
}

}  // namespace language

}  // namespace nki
