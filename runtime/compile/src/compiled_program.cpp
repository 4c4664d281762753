/** \file Runs a compiled kernel: walks its plan per instance, calling the artifact's step functions. */
#include "compiled_program.h"

#include <HalideRuntime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "halide_lowering.h"
#include "core/atomic_add.h"
#include "core/rank_link.h"
#include "kernel_abi.h"
#include "nki/error.h"
#include "on_chip_layout.h"
#include "on_chip_memory.h"
#include "storage_type.h"

namespace nki {

namespace {

/** Bytes of a per-instance tensor's host storage (padded partitions included). */
std::size_t tensor_bytes(const OnChipLayout& layout, const ir::TensorDecl& t) {
  return static_cast<std::size_t>(layout.elements(t.id) * dtype_bytes(t.dtype));
}

std::size_t scratch_bytes(const ScratchPlan& sc) {
  return static_cast<std::size_t>(shape_elements(sc.shape) * (sc.type_bits / 8));
}

/** The one block a runner carves its per-instance tensors and scratch from, in that order. */
std::size_t own_bytes(const ir::KernelIR& ir, const KernelPlan& plan, const OnChipLayout& layout) {
  std::size_t n = 0;
  for (const ir::TensorDecl& t : ir.tensors)
    if (ir::is_per_instance(t.memory)) n += OnChipMemory::aligned(tensor_bytes(layout, t));
  for (const ScratchPlan& sc : plan.scratch) n += OnChipMemory::aligned(scratch_bytes(sc));
  return n;
}

class CompiledRunner final : public CoreRunner {
 public:
  CompiledRunner(const ir::KernelIR& ir, const KernelPlan& plan, const OnChipLayout& layout,
                 const std::vector<ArgvFunction>& fns, std::vector<TensorBinding> tensors)
      : ir_(ir), plan_(plan), layout_(layout), fns_(fns), tensors_(std::move(tensors)), own_(own_bytes(ir, plan, layout)),
        bound_(plan.steps.size()),
        loop32_(ir.loops.size(), 0), regs_(static_cast<std::size_t>(ir.registers), 0) {
    // Per-instance tensors and scratch: this core's own memory, one block carved in order.
    std::byte* part = own_.data();
    const auto carve = [&part](std::size_t bytes) {
      std::byte* p = part;
      part += OnChipMemory::aligned(bytes);
      return p;
    };
    for (std::size_t i = 0; i < ir_.tensors.size(); ++i) {
      const ir::TensorDecl& t = ir_.tensors[i];
      if (!ir::is_per_instance(t.memory)) continue;
      // A placed array's storage has its physical blocks only (ir::Placement): aliased blocks share it.
      tensors_[i] = {carve(tensor_bytes(layout_, t)), ir::storage_shape(t), layout_.strides(static_cast<int>(i)), t.dtype};
    }
    for (const ScratchPlan& sc : plan_.scratch) {
      scratch_.push_back({carve(scratch_bytes(sc)), sc.shape, row_major_strides(sc.shape),
                          halide_type_t(static_cast<halide_type_code_t>(sc.type_code), static_cast<uint8_t>(sc.type_bits), 1)});
    }
    for (std::size_t s = 0; s < plan_.steps.size(); ++s) {
      const StepPlan& step = plan_.steps[s];
      if (step.kind != StepPlan::Kind::call) continue;
      Bound& b = bound_[s];
      b.in_dims.resize(step.inputs.size());
      b.in.resize(step.inputs.size());
      for (std::size_t i = 0; i < step.inputs.size(); ++i) {
        const View v = view(step.inputs[i]);
        for (int d = static_cast<int>(v.shape.size()) - 1; d >= 0; --d)
          b.in_dims[i].push_back({0, static_cast<int32_t>(v.shape[d]), static_cast<int32_t>(v.strides[d]), 0});
        b.in[i] = make_buffer(v.data, v.type, b.in_dims[i]);
      }
      for (const PlanDim& d : step.out_dims) b.out_dims.push_back({0, d.extent, d.stride, 0});
      const View o = step.store >= 0 ? view(std::get<ir::StoreOp>(ir_.body[static_cast<std::size_t>(step.store)]).dst.tensor)
                                     : view(-1 - step.scratch);
      b.out = make_buffer(o.data, o.type, b.out_dims);
    }
  }

  void run_batch(std::span<const std::int64_t> pid, std::int64_t count) override {
    if (!plan_.batchable && count > 1) {  // one instance per call keeps the order of reads and writes
      std::vector<std::int64_t> next(pid.begin(), pid.end());
      for (std::int64_t i = 0; i < count; ++i, ++next.back()) run_batch(next, 1);
      return;
    }
    pid_.assign(pid.begin(), pid.end());
    rank32_ = link_ != nullptr ? link_->rank() : 0;
    std::fill(regs_.begin(), regs_.end(), 0);  // every instance's registers start at 0 (never batched: count 1)
    for (int a = 0; a < ir_.grid_rank; ++a) {
      const std::int64_t base = plan_.pid_base.empty() ? 0 : plan_.pid_base[static_cast<std::size_t>(a)];
      pid32_[a] = static_cast<int32_t>(pid[static_cast<std::size_t>(a)] - base);
    }
    run(0, plan_.steps.size(), count);
  }

 private:
  struct Bound {
    std::vector<std::vector<halide_dimension_t>> in_dims;
    std::vector<halide_buffer_t> in;
    std::vector<halide_dimension_t> out_dims;
    halide_buffer_t out{};
  };
  struct View {
    std::byte* data;
    Shape shape;
    std::vector<std::int64_t> strides;
    halide_type_t type;
  };

  View view(int key) const {
    if (key >= 0) {
      const TensorBinding& t = tensors_[static_cast<std::size_t>(key)];
      return {t.data, t.shape, t.strides, storage_halide_type(t.dtype)};
    }
    return scratch_[static_cast<std::size_t>(-1 - key)];
  }

  void run(std::size_t begin, std::size_t end, std::int64_t count) {
    for (std::size_t s = begin; s < end; ++s) {
      const StepPlan& step = plan_.steps[s];
      switch (step.kind) {
        case StepPlan::Kind::loop: {
          const ir::LoopInfo& info = ir_.loops[static_cast<std::size_t>(step.loop)];
          if (ir::is_dynamic(info.kind)) {
            run_dynamic(s, info, count);
            s = step.end;
            break;
          }
          // An unrolled loop runs its groups with the variable at each group's first iteration.
          const std::int64_t trip = step.trip >= 0 ? step.trip : info.trip;
          for (std::int64_t it = 0; it < trip; ++it) {
            loop32_[static_cast<std::size_t>(step.loop)] = static_cast<int32_t>(step.first + it * step.stride);
            run(s + 1, step.end, count);
          }
          s = step.end;
          break;
        }
        case StepPlan::Kind::loop_end: break;
        case StepPlan::Kind::fill: fill(step.tensor); break;
        case StepPlan::Kind::call: call_step(s, count); break;
        case StepPlan::Kind::reg: register_step(step); break;
        case StepPlan::Kind::print: print_step(step); break;
        case StepPlan::Kind::collective: collective_step(step); break;
        case StepPlan::Kind::scatter: scatter_step(step); break;
      }
    }
  }

  /** A loop whose trip count the registers give as it starts (dynamic), or that runs while a register is non-zero. */
  void run_dynamic(std::size_t s, const ir::LoopInfo& info, std::int64_t count) {
    const StepPlan& step = plan_.steps[s];
    auto reg = [&](int r) -> std::int32_t& { return regs_[static_cast<std::size_t>(r)]; };
    loop32_[static_cast<std::size_t>(step.loop)] = 0;  // no index reads a dynamic loop's variable
    if (info.kind == ir::LoopKind::while_loop) {
      for (std::int64_t it = 0; reg(info.cond) != 0; ++it) {
        if (it == ir::kWhileLoopLimit) ir::throw_while_loop_limit(ir_, info, pid_);
        reg(info.induction) = reg(info.cond);
        run(s + 1, step.end, count);
      }
      return;
    }
    const std::int64_t trip = ir::dynamic_trip(info, regs_);
    const std::int64_t lo = info.lower_reg >= 0 ? reg(info.lower_reg) : info.lower;
    for (std::int64_t it = 0; it < trip; ++it) {
      reg(info.induction) = static_cast<std::int32_t>(lo + it * info.step);
      run(s + 1, step.end, count);
    }
  }

  std::vector<DevicePrint> take_device_prints() override { return std::exchange(prints_, {}); }

  /** nl.device_print: the tile's values from its scratch buffer (exact values of its dtype, fp32 or fp64). */
  void print_step(const StepPlan& step) {
    const auto& op = std::get<ir::PrintOp>(ir_.body[static_cast<std::size_t>(step.op)]);
    const ir::TileInfo& ti = ir_.tiles[static_cast<std::size_t>(op.tile)];
    const View& v = scratch_[static_cast<std::size_t>(step.scratch)];
    std::vector<double> values(static_cast<std::size_t>(shape_elements(ti.shape)));
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (v.type.bits == 64) values[i] = reinterpret_cast<const double*>(v.data)[i];
      else values[i] = reinterpret_cast<const float*>(v.data)[i];
    }
    prints_.push_back({pid_, ir::device_print_line(op.prefix, pid_, ti.dtype, ti.shape, values)});
  }

  /** Element `i` (row-major) of a scratch buffer: fp32 or fp64 values. */
  static double scratch_value(const View& v, std::int64_t i) {
    if (v.type.bits == 64) return reinterpret_cast<const double*>(v.data)[i];
    return reinterpret_cast<const float*>(v.data)[i];
  }

  /**
   * A scatter (or nl.atomic_rmw): partition p of the value tile goes to the row base + index[p]
   * of dst, partitions in order. Every row is checked before any is written, as the interpreter
   * does: under oob_mode.error an out-of-bound row writes nothing; under skip it is not written.
   */
  void scatter_step(const StepPlan& step) {
    const auto& op = std::get<ir::StoreOp>(ir_.body[static_cast<std::size_t>(step.op)]);
    const ir::TensorDecl& decl = ir_.tensors[static_cast<std::size_t>(op.dst.tensor)];
    const TensorBinding& t = tensors_[static_cast<std::size_t>(op.dst.tensor)];
    const View& value = scratch_[static_cast<std::size_t>(-1 - step.inputs[0])];
    const View& index = scratch_[static_cast<std::size_t>(-1 - step.inputs[1])];
    const Shape& shape = op.dst.shape;
    // dim 0 has no axis terms: its index is the window's start; the others walk the tile
    const std::int64_t base = first_element_offset_on(op.dst, 0, step);
    std::vector<std::int64_t> rows(static_cast<std::size_t>(shape[0]));
    for (std::int64_t p = 0; p < shape[0]; ++p) {
      const double row = static_cast<double>(base) + scratch_value(index, p);
      if (row >= 0 && row < static_cast<double>(t.shape[0])) {
        rows[static_cast<std::size_t>(p)] = static_cast<std::int64_t>(row);
      } else if (op.oob_error) {
        throw UserError("err_tensor_access_out_of_bound", ir_.name, op.loc,
                        ir::indirect_out_of_bound_message(decl.name, 0, static_cast<std::int64_t>(row), t.shape[0]));
      } else {
        rows[static_cast<std::size_t>(p)] = -1;
      }
    }
    std::vector<std::int64_t> start(op.dst.indices.size());
    for (std::size_t d = 1; d < start.size(); ++d) start[d] = first_element_offset_on(op.dst, d, step);
    std::vector<std::int64_t> loops(loop32_.begin(), loop32_.end());
    if (step.shift_loop >= 0) loops[static_cast<std::size_t>(step.shift_loop)] += step.shift;
    std::vector<std::int64_t> c(shape.size(), 0);
    const std::int64_t n = shape_elements(shape);
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t r = i, d = static_cast<std::int64_t>(shape.size()) - 1; d >= 0; --d) {
        c[static_cast<std::size_t>(d)] = r % shape[static_cast<std::size_t>(d)];
        r /= shape[static_cast<std::size_t>(d)];
      }
      const std::int64_t row = rows[static_cast<std::size_t>(c[0])];
      if (row < 0 || !op.mask.holds(pid_, loops, c, rank32_)) continue;
      std::int64_t offset = row * t.strides[0];
      for (std::size_t d = 1; d < op.dst.indices.size(); ++d) {
        std::int64_t v = start[d];
        for (const ir::Term& term : op.dst.indices[d].terms)
          if (term.sym.kind == ir::Sym::Kind::axis) v += term.coeff * c[static_cast<std::size_t>(term.sym.index)];
        offset += v * t.strides[d];
      }
      std::byte* at = t.data + offset * dtype_bytes(t.dtype);
      const double v = scratch_value(value, i);
      if (op.atomic) atomic_add_element(at, decl.dtype, v);
      else store_element(at, decl.dtype, v);
    }
  }

  /** A collective: the rank link meets the group's other ranks and writes the dsts. */
  void collective_step(const StepPlan& step) {
    const auto& op = std::get<ir::CollectiveOp>(ir_.body[static_cast<std::size_t>(step.op)]);
    if (link_ == nullptr) throw InternalError("a collective ran on a core with no rank link");
    std::vector<TensorBinding> srcs, dsts;
    for (int t : op.srcs) srcs.push_back(tensors_[static_cast<std::size_t>(t)]);
    if (op.metadata >= 0) srcs.push_back(tensors_[static_cast<std::size_t>(op.metadata)]);  // the _v kinds' counts, last
    for (int t : op.dsts) dsts.push_back(tensors_[static_cast<std::size_t>(t)]);
    link_->collective(ir_, step.op, srcs, dsts, pid_);
  }

  /** A register instruction: moves between registers, or one element of a tensor to or from one. */
  void register_step(const StepPlan& step) {
    const auto& op = std::get<ir::RegisterOp>(ir_.body[static_cast<std::size_t>(step.op)]);
    auto reg = [&](int r) -> std::int32_t& { return regs_[static_cast<std::size_t>(r)]; };
    if (op.kind == ir::RegisterOp::Kind::move) {
      reg(op.dst) = op.src >= 0 ? reg(op.src) : op.imm;
      return;
    }
    const TensorBinding& t = tensors_[static_cast<std::size_t>(op.mem.tensor)];
    // validated in bounds: every index is a constant, program id, rank or loop variable
    std::byte* at = t.data + first_element_offset(op.mem, t, step) * dtype_bytes(t.dtype);
    if (op.kind == ir::RegisterOp::Kind::load) reg(op.dst) = ir::register_from_element(at, t.dtype);
    else ir::register_to_element(at, t.dtype, reg(op.src));
  }

  /** Index `d` of access `a` at tile coordinate 0 for the current instance (the step's loop shift applied). */
  std::int64_t first_element_offset_on(const ir::Access& a, std::size_t d, const StepPlan& step) const {
    const ir::IndexExpr& e = a.indices[d];
    std::int64_t v = e.constant;
    for (const ir::Term& term : e.terms) {
      const auto i = static_cast<std::size_t>(term.sym.index);
      switch (term.sym.kind) {
        case ir::Sym::Kind::program_id: v += term.coeff * pid_[i]; break;
        case ir::Sym::Kind::loop: v += term.coeff * (loop32_[i] + (term.sym.index == step.shift_loop ? step.shift : 0)); break;
        case ir::Sym::Kind::rank: v += term.coeff * rank32_; break;
        case ir::Sym::Kind::axis: break;
      }
    }
    return v;
  }

  /** The element offset of tile coordinate 0 of access `a` into `t` for the current instance (the step's loop shift applied). */
  std::int64_t first_element_offset(const ir::Access& a, const TensorBinding& t, const StepPlan& step) const {
    const ir::TensorDecl& decl = ir_.tensors[static_cast<std::size_t>(a.tensor)];
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < a.indices.size(); ++d) {
      const std::int64_t v = first_element_offset_on(a, d, step);
      // A wrapped block dimension is indexed by a scalar (validate.cpp), so the wrap applies here.
      offset += ir::storage_index(decl, d, v) * t.strides[d];
    }
    return offset;
  }

  void fill(int tensor) {
    const ir::TensorDecl& t = ir_.tensors[static_cast<std::size_t>(tensor)];
    const TensorBinding& b = tensors_[static_cast<std::size_t>(tensor)];
    fill_elements(b.data, t.dtype, layout_.elements(tensor), *t.fill);  // the padding too: one contiguous fill
  }

  void call_step(std::size_t s, std::int64_t count) {
    const StepPlan& step = plan_.steps[s];
    Bound& b = bound_[s];
    if (step.store >= 0) {
      const ir::StoreOp& store = std::get<ir::StoreOp>(ir_.body[static_cast<std::size_t>(step.store)]);
      const TensorBinding& o = tensors_[static_cast<std::size_t>(store.dst.tensor)];
      const std::int64_t offset = first_element_offset(store.dst, o, step);  // where tile coordinate 0 of the first instance lands
      b.out.host = reinterpret_cast<uint8_t*>(o.data + offset * dtype_bytes(o.dtype));
      b.out_dims.back().extent = static_cast<int32_t>(count);
    }
    void* args[kMaxStepArgs];
    std::size_t n = 0;
    for (halide_buffer_t& in : b.in) args[n++] = &in;
    for (int a = 0; a < ir_.grid_rank; ++a) args[n++] = &pid32_[a];
    args[n++] = &rank32_;
    for (int32_t& l : loop32_) args[n++] = &l;
    args[n++] = &b.out;
    gather_fault() = {};
    if (fns_[s](args) != 0) {
      throw InternalError(fmt::format("{}: compiled code failed: {}", ir_.name, last_kernel_error()));
    }
    if (gather_fault().tile >= 0) raise_gather_fault();
#if defined(__x86_64__) || defined(__i386__)
    // Streaming stores are weakly ordered: fenced here, every later reader (this core's next
    // step, the other core after a barrier or the launch's end) sees them as it sees plain stores.
    if (step.streaming) __builtin_ia32_sfence();
#endif
  }

  /** An out-of-bound gather index under oob_mode.error: err_tensor_access_out_of_bound, as the interpreter's. */
  [[noreturn]] void raise_gather_fault() const {
    const GatherFault f = gather_fault();
    gather_fault() = {};
    for (const ir::Op& op : ir_.body) {
      const auto* g = std::get_if<ir::GatherOp>(&op);
      if (g && g->result == f.tile)
        throw UserError("err_tensor_access_out_of_bound", ir_.name, g->loc, ir::gather_out_of_bound_message(*g, f.index, f.limit));
      const auto* l = std::get_if<ir::LoadOp>(&op);
      if (l && l->index_tile >= 0 && l->result == f.tile)
        throw UserError("err_tensor_access_out_of_bound", ir_.name, l->loc,
                        ir::indirect_out_of_bound_message(ir_.tensors[static_cast<std::size_t>(l->src.tensor)].name,
                                                          l->index_dim, f.index, f.limit));
    }
    throw InternalError(fmt::format("{}: a gather of unknown tile {} was out of bound", ir_.name, f.tile));
  }

  static halide_buffer_t make_buffer(std::byte* data, halide_type_t t, std::vector<halide_dimension_t>& dims) {
    halide_buffer_t b{};
    b.host = reinterpret_cast<uint8_t*>(data);
    b.type = t;
    b.dimensions = static_cast<int32_t>(dims.size());
    b.dim = dims.data();
    return b;
  }

  const ir::KernelIR& ir_;
  const KernelPlan& plan_;
  const OnChipLayout& layout_;
  const std::vector<ArgvFunction>& fns_;
  std::vector<TensorBinding> tensors_;
  OnChipMemory own_;  ///< per-instance tensors, then scratch buffers
  std::vector<View> scratch_;
  std::vector<Bound> bound_;
  std::vector<std::int64_t> pid_;
  int32_t pid32_[16] = {};
  int32_t rank32_ = 0;  ///< rank_id() of the instances (the rank link's)
  std::vector<int32_t> loop32_;
  std::vector<std::int32_t> regs_;  ///< the instance's registers
  std::vector<DevicePrint> prints_;  ///< nl.device_print lines not yet taken
};

class CompiledProgram final : public Program {
 public:
  CompiledProgram(std::shared_ptr<const ir::KernelIR> ir, KernelPlan plan, std::shared_ptr<LoadedArtifact> artifact)
      : ir_(std::move(ir)), plan_(std::move(plan)), layout_(*ir_), artifact_(std::move(artifact)),
        fns_(plan_.steps.size(), nullptr) {
    if (ir_->grid_rank > 16) throw UserError("err_grid_rank", ir_->name, {}, "grids have at most 16 axes");
    for (std::size_t s = 0; s < plan_.steps.size(); ++s) {
      const StepPlan& step = plan_.steps[s];
      if (step.kind == StepPlan::Kind::call) {
        fns_[s] = artifact_->entry(step.function);
        if (fns_[s] == nullptr) throw std::runtime_error(fmt::format("the artifact has no function {}", step.function));
        const bool store_ok = step.store >= 0 && static_cast<std::size_t>(step.store) < ir_->body.size() &&
                              std::holds_alternative<ir::StoreOp>(ir_->body[static_cast<std::size_t>(step.store)]);
        const bool scratch_ok = step.store < 0 && step.scratch >= 0 &&
                                static_cast<std::size_t>(step.scratch) < plan_.scratch.size();
        if (!store_ok && !scratch_ok) throw std::runtime_error(fmt::format("step {} writes nothing valid", s));
        if (step.out_dims.empty()) throw std::runtime_error(fmt::format("step {} has no output dims", s));
        for (int key : step.inputs) {
          const bool ok = key >= 0 ? static_cast<std::size_t>(key) < ir_->tensors.size()
                                   : static_cast<std::size_t>(-1 - key) < plan_.scratch.size();
          if (!ok) throw std::runtime_error(fmt::format("step {} reads an unknown buffer {}", s, key));
        }
        if (step.inputs.size() + static_cast<std::size_t>(ir_->grid_rank) + ir_->loops.size() + 1 > kMaxStepArgs)
          throw std::runtime_error(fmt::format("step {} takes too many arguments", s));
        if (step.shift_loop < -1 || (step.shift_loop >= 0 && static_cast<std::size_t>(step.shift_loop) >= ir_->loops.size()) ||
            step.shift < 0 || (step.shift_loop < 0 && step.shift != 0) ||
            (step.shift_loop >= 0 && step.shift >= ir_->loops[static_cast<std::size_t>(step.shift_loop)].trip))
          throw std::runtime_error(fmt::format("step {} has a malformed loop shift", s));
      } else if (step.kind == StepPlan::Kind::loop) {
        if (step.loop < 0 || static_cast<std::size_t>(step.loop) >= ir_->loops.size() || step.end <= s ||
            step.end >= plan_.steps.size() || plan_.steps[step.end].kind != StepPlan::Kind::loop_end)
          throw std::runtime_error(fmt::format("step {} is a malformed loop", s));
        const std::int64_t trip = ir_->loops[static_cast<std::size_t>(step.loop)].trip;
        if (step.first < 0 || step.stride < 1 || step.trip < -1 || step.trip > trip ||
            (step.trip > 0 && static_cast<__int128>(step.first) + static_cast<__int128>(step.trip - 1) * step.stride >= trip))
          throw std::runtime_error(fmt::format("step {} runs its loop out of range", s));
      } else if (step.kind == StepPlan::Kind::reg) {
        if (step.op < 0 || static_cast<std::size_t>(step.op) >= ir_->body.size() ||
            !std::holds_alternative<ir::RegisterOp>(ir_->body[static_cast<std::size_t>(step.op)]) ||
            step.shift_loop < -1 || (step.shift_loop >= 0 && static_cast<std::size_t>(step.shift_loop) >= ir_->loops.size()) ||
            step.shift < 0 || (step.shift_loop >= 0 && step.shift >= ir_->loops[static_cast<std::size_t>(step.shift_loop)].trip))
          throw std::runtime_error(fmt::format("step {} is a malformed register instruction", s));
      } else if (step.kind == StepPlan::Kind::scatter) {
        const auto* st = step.op >= 0 && static_cast<std::size_t>(step.op) < ir_->body.size()
                             ? std::get_if<ir::StoreOp>(&ir_->body[static_cast<std::size_t>(step.op)])
                             : nullptr;
        auto scratch_of = [&](std::size_t i, int tile) {
          if (step.inputs.size() != 2 || step.inputs[i] >= 0) return false;
          const auto sc = static_cast<std::size_t>(-1 - step.inputs[i]);
          return sc < plan_.scratch.size() && plan_.scratch[sc].shape == ir_->tiles[static_cast<std::size_t>(tile)].shape &&
                 plan_.scratch[sc].type_code == 2 && (plan_.scratch[sc].type_bits == 32 || plan_.scratch[sc].type_bits == 64);
        };
        if (st == nullptr || st->index_tile < 0 || !scratch_of(0, st->value) || !scratch_of(1, st->index_tile) ||
            step.shift_loop < -1 || (step.shift_loop >= 0 && static_cast<std::size_t>(step.shift_loop) >= ir_->loops.size()) ||
            step.shift < 0 || (step.shift_loop >= 0 && step.shift >= ir_->loops[static_cast<std::size_t>(step.shift_loop)].trip))
          throw std::runtime_error(fmt::format("step {} is a malformed scatter", s));
      } else if (step.kind == StepPlan::Kind::collective) {
        if (step.op < 0 || static_cast<std::size_t>(step.op) >= ir_->body.size() ||
            !std::holds_alternative<ir::CollectiveOp>(ir_->body[static_cast<std::size_t>(step.op)]))
          throw std::runtime_error(fmt::format("step {} is a malformed collective", s));
      } else if (step.kind == StepPlan::Kind::print) {
        if (step.op < 0 || static_cast<std::size_t>(step.op) >= ir_->body.size() ||
            !std::holds_alternative<ir::PrintOp>(ir_->body[static_cast<std::size_t>(step.op)]) || step.scratch < 0 ||
            static_cast<std::size_t>(step.scratch) >= plan_.scratch.size() ||
            plan_.scratch[static_cast<std::size_t>(step.scratch)].shape !=
                ir_->tiles[static_cast<std::size_t>(std::get<ir::PrintOp>(ir_->body[static_cast<std::size_t>(step.op)]).tile)].shape)
          throw std::runtime_error(fmt::format("step {} is a malformed device_print", s));
      } else if (step.kind == StepPlan::Kind::fill) {
        if (step.tensor < 0 || static_cast<std::size_t>(step.tensor) >= ir_->tensors.size() ||
            !ir_->tensors[static_cast<std::size_t>(step.tensor)].fill)
          throw std::runtime_error(fmt::format("step {} fills an unknown tensor", s));
      }
    }
    if (!plan_.pid_base.empty() && plan_.pid_base.size() != static_cast<std::size_t>(ir_->grid_rank))
      throw std::runtime_error("the plan's program-id base does not match the grid rank");
  }

  std::unique_ptr<CoreRunner> bind(const std::vector<TensorBinding>& tensors) const override {
    return std::make_unique<CompiledRunner>(*ir_, plan_, layout_, fns_, tensors);
  }

 private:
  std::shared_ptr<const ir::KernelIR> ir_;
  KernelPlan plan_;
  OnChipLayout layout_;  // the lowering's (the same IR gives the same layout)
  std::shared_ptr<LoadedArtifact> artifact_;
  std::vector<ArgvFunction> fns_;
};

}  // namespace

std::shared_ptr<const Program> make_compiled_program(std::shared_ptr<const ir::KernelIR> ir, KernelPlan plan,
                                                     std::shared_ptr<LoadedArtifact> artifact) {
  return std::make_shared<CompiledProgram>(std::move(ir), std::move(plan), std::move(artifact));
}

}  // namespace nki
