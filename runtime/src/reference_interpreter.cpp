/** \file The reference interpreter: the IR executed op by op in plain C++, every index checked. */
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "nki/error.h"
#include "bounds_check.h"
#include "program.h"

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
  ReferenceRunner(const ir::KernelIR& ir, std::vector<TensorBinding> tensors)
      : ir_(ir), tensors_(std::move(tensors)), tiles_(ir.tiles.size()), loop_(ir.loops.size(), 0) {
    // Per-instance tensors (SBUF, PSUM, private HBM) are this core's own memory.
    for (std::size_t i = 0; i < ir_.tensors.size(); ++i) {
      const ir::TensorDecl& t = ir_.tensors[i];
      if (!ir::is_per_instance(t.memory)) continue;
      own_.emplace_back(static_cast<std::size_t>(shape_elements(t.shape) * dtype_bytes(t.dtype)));
      tensors_[i] = {own_.back().data(), t.shape, row_major_strides(t.shape), t.dtype};
    }
  }

  void run_batch(std::span<const std::int64_t> pid, std::int64_t count) override {
    std::vector<std::int64_t> current(pid.begin(), pid.end());
    for (std::int64_t i = 0; i < count; ++i) {
      pid_ = current;
      run(0, ir_.body.size());
      if (!current.empty()) ++current.back();
    }
  }

 private:
  const ir::KernelIR& ir_;
  std::vector<TensorBinding> tensors_;
  std::vector<std::vector<std::byte>> own_;
  std::vector<std::vector<double>> tiles_;  ///< exact values of each tile's dtype
  std::vector<std::int64_t> pid_;
  std::vector<std::int64_t> loop_;          ///< current value of each loop variable

  void run(std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      if (const auto* l = std::get_if<ir::LoopOp>(&ir_.body[i])) {
        const std::size_t stop = static_cast<std::size_t>(l->end);
        const std::int64_t trip = ir_.loops[static_cast<std::size_t>(l->loop)].trip;
        for (std::int64_t it = 0; it < trip; ++it) {
          loop_[static_cast<std::size_t>(l->loop)] = it;
          run(i + 1, stop);
        }
        i = stop;  // the LoopEndOp
        continue;
      }
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
    const DType src = ir_.tensors[static_cast<std::size_t>(op.src.tensor)].dtype;
    compute(op.result, op.mask, [&](const auto& c) { return load_element(element(op.src, c), src); });
  }

  void exec(const ir::StoreOp& op) {
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
    const ir::TensorDecl& t = ir_.tensors[static_cast<std::size_t>(op.tensor)];
    if (!t.fill) return;
    const TensorBinding& b = tensors_[static_cast<std::size_t>(op.tensor)];
    const std::int64_t n = shape_elements(t.shape);
    for (std::int64_t i = 0; i < n; ++i) store_element(b.data + i * dtype_bytes(t.dtype), t.dtype, *t.fill);
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
      float acc = 0.0f;
      for (std::int64_t k = 0; k < K; ++k) {
        const float p = f32(a[static_cast<std::size_t>(k * M + c[0])]) * f32(b[static_cast<std::size_t>(k * N + c[1])]);
        acc = acc + p;
      }
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
  explicit ReferenceProgram(std::shared_ptr<const ir::KernelIR> ir) : ir_(std::move(ir)) {}
  std::unique_ptr<CoreRunner> bind(const std::vector<TensorBinding>& tensors) const override {
    return std::make_unique<ReferenceRunner>(*ir_, tensors);
  }

 private:
  std::shared_ptr<const ir::KernelIR> ir_;
};

}  // namespace

std::shared_ptr<const Program> make_reference_program(std::shared_ptr<const ir::KernelIR> ir) {
  return std::make_shared<ReferenceProgram>(std::move(ir));
}

}  // namespace nki
