/** \file The reference interpreter: the IR executed op by op in plain C++, every index checked. */
#include "reference_interpreter.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "nki/error.h"
#include "nki/ir/passes.h"
#include "nki/ir/walk.h"
#include "bounds_check.h"
#include "checked_state.h"

namespace nki {

namespace {

/** Row-major iteration over a tile shape. */
bool next_coord(std::vector<std::int64_t>& c, const Shape& shape) {
  for (int d = static_cast<int>(c.size()) - 1; d >= 0; --d) {
    if (++c[d] < shape[d]) return true;
    c[d] = 0;
  }
  return false;
}

class ReferenceRunner final : public CoreRunner {
 public:
  /** `nest`: the loops of `ir`; `checked`: the launch's shared checked-mode state, or null for an unchecked run. */
  ReferenceRunner(const ir::KernelIR& ir, const ir::LoopNest& nest, std::vector<TensorBinding> tensors,
                  CheckedLaunch* checked = nullptr)
      : ir_(ir), nest_(nest), tensors_(std::move(tensors)), tiles_(ir.tiles.size()), loop_(ir.loops.size(), 0),
        checked_(checked) {
    // Per-instance tensors (SBUF, PSUM, private HBM) are this core's own memory.
    own_.reserve(ir_.tensors.size());
    for (std::size_t i = 0; i < ir_.tensors.size(); ++i) {
      const ir::TensorDecl& t = ir_.tensors[i];
      if (!ir::is_per_instance(t.memory)) continue;
      own_.emplace_back(static_cast<std::size_t>(shape_elements(t.shape) * dtype_bytes(t.dtype)));
      tensors_[i] = {own_.back().data(), t.shape, row_major_strides(t.shape), t.dtype};
    }
    if (checked_) init_checked();
  }

  void run_batch(std::span<const std::int64_t> pid, std::int64_t count) override {
    std::vector<std::int64_t> current(pid.begin(), pid.end());
    for (std::int64_t i = 0; i < count; ++i) {
      pid_ = current;
      if (checked_) begin_checked_instance();
      run(-1);
      if (!current.empty()) ++current.back();
    }
  }

 private:
  const ir::KernelIR& ir_;
  const ir::LoopNest& nest_;
  std::vector<TensorBinding> tensors_;
  std::vector<std::vector<std::byte>> own_;
  std::vector<std::vector<double>> tiles_;  ///< exact values of each tile's dtype
  std::vector<std::int64_t> pid_;
  std::vector<std::int64_t> loop_;          ///< current value of each loop variable

  // ---- checked mode (all unused when checked_ is null) ----
  CheckedLaunch* checked_;
  std::vector<std::vector<std::uint8_t>> written_;     ///< per-instance tensors: element written this instance
  std::vector<std::vector<std::int64_t>> own_writer_;  ///< private HBM: the record that last wrote each element
  std::size_t at_ = 0;                                 ///< the op being executed

  void init_checked() {
    written_.resize(ir_.tensors.size());
    own_writer_.resize(ir_.tensors.size());
  }

  /** Every per-instance tensor starts poisoned and unwritten. */
  void begin_checked_instance() {
    for (std::size_t i = 0; i < ir_.tensors.size(); ++i) {
      const ir::TensorDecl& t = ir_.tensors[i];
      if (!ir::is_per_instance(t.memory)) continue;
      fresh(i);
    }
  }

  void fresh(std::size_t tensor) {
    const ir::TensorDecl& t = ir_.tensors[tensor];
    const std::int64_t n = shape_elements(t.shape);
    written_[tensor].assign(static_cast<std::size_t>(n), 0);
    if (t.memory == ir::Memory::private_hbm) own_writer_[tensor].assign(static_cast<std::size_t>(n), kNeverWritten);
    poison(tensors_[tensor].data, t.dtype, n);
  }

  std::string where(std::size_t op) const {
    std::string w = pid_.empty() ? "instance (no grid)" : fmt::format("instance [{}]", fmt::join(pid_, ","));
    for (int l : nest_.enclosing(op)) w += fmt::format(" l{}={}", l, loop_[static_cast<std::size_t>(l)]);
    return w;
  }
  std::string where(const WriteRecord& r) const {
    std::string w = r.pid.empty() ? "instance (no grid)" : fmt::format("instance [{}]", fmt::join(r.pid, ","));
    for (int l : nest_.enclosing(r.op)) w += fmt::format(" l{}={}", l, r.loop[static_cast<std::size_t>(l)]);
    const SourceLoc& loc = std::get<ir::StoreOp>(ir_.body[r.op]).loc;
    return w + fmt::format(" ({})", loc.str());
  }

  /** Tensor coordinate and row-major flat index of the element access `a` reaches at tile coordinate `c`. */
  std::pair<std::vector<std::int64_t>, std::int64_t> coord_of(const ir::Access& a, const std::vector<std::int64_t>& c) const {
    const TensorBinding& t = tensors_[static_cast<std::size_t>(a.tensor)];
    std::vector<std::int64_t> idx(a.indices.size());
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < a.indices.size(); ++d) {
      idx[d] = eval(a.indices[d], c);
      if (idx[d] < 0 || idx[d] >= t.shape[d]) throw_out_of_bound(ir_, a, pid_, loop_, c, idx[d], d);
      flat = flat * t.shape[d] + idx[d];
    }
    return {idx, flat};
  }

  /** A read of element `c` of access `a` by op `op`: it must have been written (or filled, or be an argument). */
  void check_read(const ir::Access& a, const std::vector<std::int64_t>& c, const SourceLoc& loc) const {
    const std::size_t ti = static_cast<std::size_t>(a.tensor);
    const ir::TensorDecl& t = ir_.tensors[ti];
    if ((t.memory == ir::Memory::hbm_input || t.memory == ir::Memory::constant_hbm) && !checked_->writers[ti]) return;
    const auto [idx, flat] = coord_of(a, c);
    bool ok;
    if (ir::is_per_instance(t.memory)) ok = written_[ti][static_cast<std::size_t>(flat)] != 0;
    else ok = !checked_->writers[ti] || checked_->writers[ti][static_cast<std::size_t>(flat)].load(std::memory_order_acquire) != kNeverWritten;
    if (ok) return;
    throw UserError("err_uninitialized_read", ir_.name, loc,
                    fmt::format("{} reads element [{}] of tensor {} {} ({}), which nothing wrote: fresh {} holds {}",
                                where(at_), fmt::join(idx, ","), t.name, shape_str(t.shape), ir::memory_name(t.memory),
                                ir::memory_name(t.memory), is_float(t.dtype) ? "NaN" : "the pattern 0xA5"));
  }

  /** Two writes of one element conflict when instances differ, or when an affine_range enclosing both differs. */
  bool conflict(const WriteRecord& a, const WriteRecord& b) const {
    if (a.pid != b.pid) return true;
    if (a.accumulate && b.accumulate) return false;
    const std::span<const int> ea = nest_.enclosing(a.op);
    const std::span<const int> eb = nest_.enclosing(b.op);
    for (std::size_t q = 0; q < ea.size() && q < eb.size() && ea[q] == eb[q]; ++q) {
      const std::size_t l = static_cast<std::size_t>(ea[q]);
      if (ir_.loops[l].kind == ir::LoopKind::affine && a.loop[l] != b.loop[l]) return true;
    }
    return false;
  }

  [[noreturn]] void report_conflict(const ir::TensorDecl& t, const std::vector<std::int64_t>& idx, const WriteRecord& a,
                                    const WriteRecord& b, const SourceLoc& loc) const {
    const bool instances = a.pid != b.pid;
    const WriteRecord& first = a.pid < b.pid || (a.pid == b.pid && a.loop <= b.loop) ? a : b;
    const WriteRecord& second = &first == &a ? b : a;
    throw UserError(instances ? "err_instances_write_same_element" : "err_unexpected_output_dependencies", ir_.name, loc,
                    fmt::format("element [{}] of tensor {} {} is written by {} and by {}", fmt::join(idx, ","), t.name,
                                shape_str(t.shape), where(first), where(second)));
  }

  void checked_load(const ir::LoadOp& op) {
    const ir::TileInfo& ti = ir_.tiles[static_cast<std::size_t>(op.result)];
    std::vector<std::int64_t> c(ti.shape.size(), 0);
    do {
      if (holds(op.mask, c)) check_read(op.src, c, op.loc);
    } while (next_coord(c, ti.shape));
  }

  void checked_store(const ir::StoreOp& op) {
    const std::size_t ti = static_cast<std::size_t>(op.dst.tensor);
    const ir::TensorDecl& t = ir_.tensors[ti];
    const bool hbm = ir::is_hbm(t.memory);
    std::int64_t rec = -1;
    if (hbm) rec = checked_->records.append({pid_, loop_, at_, op.accumulate});
    std::vector<std::int64_t> c(op.dst.shape.size(), 0);
    do {
      if (!holds(op.mask, c)) continue;
      if (op.accumulate) check_read(op.dst, c, op.loc);
      const auto [idx, flat] = coord_of(op.dst, c);
      const std::size_t f = static_cast<std::size_t>(flat);
      std::int64_t old = kNeverWritten;
      if (t.memory == ir::Memory::private_hbm) old = std::exchange(own_writer_[ti][f], rec);
      else if (hbm) old = checked_->writers[ti][f].exchange(rec, std::memory_order_acq_rel);
      if (ir::is_per_instance(t.memory)) written_[ti][f] = 1;
      if (old >= 0 && old != rec && conflict(checked_->records[old], checked_->records[rec]))
        report_conflict(t, idx, checked_->records[old], checked_->records[rec], op.loc);
    } while (next_coord(c, op.dst.shape));
  }

  void checked_alloc(const ir::AllocOp& op) {
    const std::size_t ti = static_cast<std::size_t>(op.tensor);
    fresh(ti);
    if (ir_.tensors[ti].fill) std::fill(written_[ti].begin(), written_[ti].end(), std::uint8_t{1});
  }

  /** Runs the ops directly in `loop` (-1: the kernel's top level), each nested loop for its trip count. */
  void run(int loop) {
    for (std::size_t i : nest_.level(loop)) {
      if (const auto* l = std::get_if<ir::LoopOp>(&ir_.body[i])) {
        const std::int64_t trip = ir_.loops[static_cast<std::size_t>(l->loop)].trip;
        for (std::int64_t it = 0; it < trip; ++it) {
          loop_[static_cast<std::size_t>(l->loop)] = it;
          run(l->loop);
        }
        continue;
      }
      if (checked_) at_ = i;
      std::visit([this](const auto& o) { exec(o); }, ir_.body[i]);
    }
  }

  std::int64_t eval(const ir::IndexExpr& e, const std::vector<std::int64_t>& c) const {
    return ir::evaluate(e, pid_, loop_, c);
  }

  bool holds(const ir::Predicate& p, const std::vector<std::int64_t>& c) const { return p.holds(pid_, loop_, c); }

  /** Byte address of the element an access reaches at tile coordinate `c`; out of bounds is the user's error. */
  std::byte* element(const ir::Access& a, const std::vector<std::int64_t>& c) const {
    const TensorBinding& t = tensors_[static_cast<std::size_t>(a.tensor)];
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < a.indices.size(); ++d) {
      const std::int64_t v = eval(a.indices[d], c);
      if (v < 0 || v >= t.shape[d]) throw_out_of_bound(ir_, a, pid_, loop_, c, v, d);
      offset += v * t.strides[d];
    }
    return t.data + offset * dtype_bytes(t.dtype);
  }

  /** Value of an operand at `c` of a (possibly larger, broadcast) result shape. */
  double value(const ir::Operand& o, const std::vector<std::int64_t>& c) const {
    if (o.is_scalar()) return o.scalar;
    const Shape& s = ir_.tiles[static_cast<std::size_t>(o.tile)].shape;
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < s.size(); ++d) flat = flat * s[d] + (s[d] == 1 ? 0 : c[d]);
    return tiles_[static_cast<std::size_t>(o.tile)][static_cast<std::size_t>(flat)];
  }
  double tile_at(int tile, const std::vector<std::int64_t>& c) const { return value({tile, 0, true}, c); }

  /** Fills tile `result` elementwise: f(c) where the mask holds, 0 elsewhere. */
  template <class F>
  void compute(int result, const ir::Predicate& mask, F f) {
    const ir::TileInfo& ti = ir_.tiles[static_cast<std::size_t>(result)];
    std::vector<double> out(static_cast<std::size_t>(shape_elements(ti.shape)));
    std::vector<std::int64_t> c(ti.shape.size(), 0);
    std::size_t i = 0;
    do {
      out[i++] = holds(mask, c) ? round_to_dtype(f(c), ti.dtype) : 0.0;
    } while (next_coord(c, ti.shape));
    tiles_[static_cast<std::size_t>(result)] = std::move(out);
  }

  static float f32(double v) { return static_cast<float>(v); }

  void exec(const ir::LoadOp& op) {
    if (checked_) checked_load(op);
    const DType src = ir_.tensors[static_cast<std::size_t>(op.src.tensor)].dtype;
    compute(op.result, op.mask, [&](const auto& c) { return load_element(element(op.src, c), src); });
  }

  void exec(const ir::StoreOp& op) {
    if (checked_) checked_store(op);
    const DType dst = ir_.tensors[static_cast<std::size_t>(op.dst.tensor)].dtype;
    std::vector<std::int64_t> c(op.dst.shape.size(), 0);
    do {
      if (!holds(op.mask, c)) continue;
      std::byte* at = element(op.dst, c);
      const double v = tile_at(op.value, c);
      if (op.accumulate) store_element(at, dst, ir::apply_binary(ir::BinaryKind::add, f32(load_element(at, dst)), f32(v)));
      else store_element(at, dst, v);
    } while (next_coord(c, op.dst.shape));
  }

  void exec(const ir::AllocOp& op) {
    if (checked_) checked_alloc(op);
    const ir::TensorDecl& t = ir_.tensors[static_cast<std::size_t>(op.tensor)];
    if (!t.fill) return;
    const TensorBinding& b = tensors_[static_cast<std::size_t>(op.tensor)];
    fill_elements(b.data, t.dtype, shape_elements(t.shape), *t.fill);
  }

  static bool is_identity(const ir::ActivationOp& op) {
    return op.scale.is_scalar() && op.scale.scalar == 1.0 && op.bias.is_scalar() && op.bias.scalar == 0.0;
  }

  void exec(const ir::ActivationOp& op) {
    if (op.kind == ir::ActKind::copy && is_identity(op)) {  // data movement: exact, NaN bits kept
      compute(op.result, op.mask, [&](const auto& c) { return value(op.data, c); });
      return;
    }
    const bool affine = !is_identity(op);
    compute(op.result, op.mask, [&](const auto& c) {
      float x = f32(value(op.data, c));
      if (affine) x = x * f32(value(op.scale, c)) + f32(value(op.bias, c));
      return static_cast<double>(ir::apply_activation(op.kind, x));
    });
  }

  void exec(const ir::BinaryOp& op) {
    compute(op.result, op.mask, [&](const auto& c) {
      return static_cast<double>(ir::apply_binary(op.kind, f32(value(op.lhs, c)), f32(value(op.rhs, c))));
    });
  }

  void exec(const ir::SelectOp& op) {
    compute(op.result, op.mask, [&](const auto& c) {
      const bool cond = op.cond.is_scalar() ? holds(op.pred, c) : value(op.cond, c) != 0.0;
      return cond ? value(op.on_true, c) : value(op.on_false, c);
    });
  }

  void exec(const ir::IotaOp& op) {
    compute(op.result, op.mask, [&](const auto& c) { return static_cast<double>(eval(op.expr, c)); });
  }

  void exec(const ir::ReduceOp& op) {
    const Shape& in = ir_.tiles[static_cast<std::size_t>(op.data)].shape;
    Shape reduced;  // the extents walked for one output element
    for (int a : op.axes) reduced.push_back(in[static_cast<std::size_t>(a)]);
    compute(op.result, op.mask, [&](const std::vector<std::int64_t>& oc) {
      // Input coordinate: output coordinates on kept axes, the walk on reduced ones.
      std::vector<std::int64_t> ic(in.size(), 0), r(reduced.size(), 0);
      float acc = 0.0f;
      bool first = true;
      do {
        std::size_t o = 0, k = 0;
        for (std::size_t d = 0; d < in.size(); ++d) {
          const bool is_reduced = k < op.axes.size() && op.axes[k] == static_cast<int>(d);
          if (is_reduced) {
            ic[d] = r[k++];
            if (op.keepdims) ++o;
          } else {
            ic[d] = oc[o++];
          }
        }
        const float x = f32(tile_at(op.data, ic));
        if (first) acc = x;
        else if (op.kind == ir::ReduceKind::max) acc = ir::apply_binary(ir::BinaryKind::maximum, acc, x);
        else if (op.kind == ir::ReduceKind::min) acc = ir::apply_binary(ir::BinaryKind::minimum, acc, x);
        else acc = ir::apply_binary(ir::BinaryKind::add, acc, x);
        first = false;
      } while (next_coord(r, reduced));
      if (op.kind == ir::ReduceKind::mean) acc = ir::apply_binary(ir::BinaryKind::divide, acc, f32(static_cast<double>(shape_elements(reduced))));
      return static_cast<double>(acc);
    });
  }

  void exec(const ir::MatmulOp& op) {
    const Shape& st = ir_.tiles[static_cast<std::size_t>(op.stationary)].shape;  // [K, M]
    const Shape& mv = ir_.tiles[static_cast<std::size_t>(op.moving)].shape;      // [K, N]
    const std::vector<double>& a = tiles_[static_cast<std::size_t>(op.stationary)];
    const std::vector<double>& b = tiles_[static_cast<std::size_t>(op.moving)];
    const std::int64_t K = st[0], M = st[1], N = mv[1];
    compute(op.result, op.mask, [&](const std::vector<std::int64_t>& c) {
      // PSUM accumulation: one fused multiply-add per product, rounded once, k ascending from 0.
      float acc = 0.0f;
      for (std::int64_t k = 0; k < K; ++k)
        acc = std::fma(f32(a[static_cast<std::size_t>(k * M + c[0])]), f32(b[static_cast<std::size_t>(k * N + c[1])]), acc);
      return static_cast<double>(std::isnan(acc) ? std::numeric_limits<float>::quiet_NaN() : acc);
    });
  }

  void exec(const ir::TransposeOp& op) {
    compute(op.result, {}, [&](const std::vector<std::int64_t>& c) { return tile_at(op.data, {c[1], c[0]}); });
  }

  void exec(const ir::LoopOp&) {}
  void exec(const ir::LoopEndOp&) {}
  void exec(const std::monostate&) {}
};

class ReferenceProgram final : public Program {
 public:
  ReferenceProgram(std::shared_ptr<const ir::KernelIR> ir, bool checked) : ir_(std::move(ir)), nest_(*ir_) {
    if (checked) checked_ = std::make_unique<CheckedLaunch>();
  }
  std::unique_ptr<CoreRunner> bind(const std::vector<TensorBinding>& tensors) const override {
    return std::make_unique<ReferenceRunner>(*ir_, nest_, tensors, checked_.get());
  }

  /** Checked mode: unfilled outputs are poisoned; every shared HBM tensor a store writes gets a writer per element. */
  void begin_launch(const std::vector<TensorBinding>& tensors) const override {
    if (!checked_) return;
    const std::vector<int> stored = ir::count_stores(*ir_);
    checked_->writers.resize(ir_->tensors.size());
    for (const ir::TensorDecl& t : ir_->tensors) {
      const bool shared = t.memory == ir::Memory::hbm_input || t.memory == ir::Memory::shared_hbm;
      if (!shared) continue;
      const bool output = t.memory == ir::Memory::shared_hbm;
      if (!output && stored[static_cast<std::size_t>(t.id)] == 0) continue;
      const std::int64_t n = shape_elements(t.shape);
      auto& w = checked_->writers[static_cast<std::size_t>(t.id)];
      w = std::make_unique<std::atomic<std::int64_t>[]>(static_cast<std::size_t>(n));
      const std::int64_t initial = !output || t.fill ? kFilled : kNeverWritten;
      for (std::int64_t i = 0; i < n; ++i) w[static_cast<std::size_t>(i)].store(initial, std::memory_order_relaxed);
      if (output && !t.fill) poison(tensors[static_cast<std::size_t>(t.id)].data, t.dtype, n);
    }
  }

  /** Checked mode: an output element no instance wrote is err_tensor_output_not_written_to. */
  void end_launch(const std::vector<TensorBinding>&) const override {
    if (!checked_) return;
    for (int id : ir_->outputs) {
      const ir::TensorDecl& t = ir_->tensors[static_cast<std::size_t>(id)];
      const auto& w = checked_->writers[static_cast<std::size_t>(id)];
      const std::int64_t n = shape_elements(t.shape);
      for (std::int64_t i = 0; i < n; ++i) {
        if (w[static_cast<std::size_t>(i)].load(std::memory_order_relaxed) != kNeverWritten) continue;
        std::vector<std::int64_t> idx(t.shape.size());
        for (std::size_t d = t.shape.size(), r = static_cast<std::size_t>(i); d-- > 0;) {
          idx[d] = static_cast<std::int64_t>(r % static_cast<std::size_t>(t.shape[d]));
          r /= static_cast<std::size_t>(t.shape[d]);
        }
        std::int64_t missing = 0;
        for (std::int64_t j = i; j < n; ++j) missing += w[static_cast<std::size_t>(j)].load() == kNeverWritten;
        throw UserError("err_tensor_output_not_written_to", ir_->name, t.loc,
                        fmt::format("no instance wrote element [{}] of output tensor {} {} ({} of {} elements unwritten)",
                                    fmt::join(idx, ","), t.name, shape_str(t.shape), missing, n));
      }
    }
  }

 private:
  std::shared_ptr<const ir::KernelIR> ir_;
  ir::LoopNest nest_;
  std::unique_ptr<CheckedLaunch> checked_;
};

}  // namespace

void poison(std::byte* data, DType dt, std::int64_t count) {
  if (!is_float(dt)) {
    std::memset(data, 0xA5, static_cast<std::size_t>(count * dtype_bytes(dt)));
    return;
  }
  const int eb = dtype_bytes(dt);
  std::byte nan[8];
  store_element(nan, dt, std::numeric_limits<double>::quiet_NaN());
  for (std::int64_t i = 0; i < count; ++i) std::memcpy(data + i * eb, nan, static_cast<std::size_t>(eb));
}

std::shared_ptr<const Program> make_reference_program(std::shared_ptr<const ir::KernelIR> ir, bool checked) {
  return std::make_shared<ReferenceProgram>(std::move(ir), checked);
}

}  // namespace nki
