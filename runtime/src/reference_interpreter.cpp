/** \file The reference interpreter: the IR executed op by op in plain C++, every index checked. */
#include <fmt/format.h>

#include "nki/error.h"
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

// Element values cross nki::load_element / store_element as double; tiles here hold fp32. A
// hardware float <-> double conversion would set the quiet bit of a NaN, so the bits move
// through the fp32 conversions of nki::dtype, which keep them.
float to_f32(double v) {
  float f;
  store_element(&f, DType::fp32, v);
  return f;
}
double to_f64(float f) { return load_element(&f, DType::fp32); }

class ReferenceRunner final : public CoreRunner {
 public:
  ReferenceRunner(const ir::KernelIR& ir, std::vector<TensorBinding> tensors)
      : ir_(ir), tensors_(std::move(tensors)), tiles_(ir.tiles.size()) {}

  void run_batch(std::span<const std::int64_t> pid, std::int64_t count) override {
    std::vector<std::int64_t> current(pid.begin(), pid.end());
    for (std::int64_t i = 0; i < count; ++i) {
      pid_ = current;
      for (const ir::Op& op : ir_.body) std::visit([this](const auto& o) { exec(o); }, op);
      if (!current.empty()) ++current.back();
    }
  }

 private:
  const ir::KernelIR& ir_;
  std::vector<TensorBinding> tensors_;
  std::vector<std::vector<float>> tiles_;  ///< values already rounded to each tile's dtype
  std::span<const std::int64_t> pid_;

  /** Byte address of the element an access reaches at tile coordinate `c`. */
  std::byte* element(const ir::Access& a, const std::vector<std::int64_t>& c) const {
    const TensorBinding& t = tensors_[a.tensor];
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < a.indices.size(); ++d) {
      const ir::IndexExpr& e = a.indices[d];
      std::int64_t v = e.constant;
      for (const ir::Term& term : e.terms) {
        const std::int64_t s = term.sym.kind == ir::Sym::Kind::program_id ? pid_[term.sym.index]
                                                                           : (e.shape[term.sym.index] == 1 ? 0 : c[term.sym.index]);
        v += term.coeff * s;
      }
      if (v < 0 || v >= t.shape[d]) {
        throw InternalError(fmt::format("{}: access to {} out of bounds on dimension {} at index {} (validation "
                                        "should have rejected it)",
                                        ir_.name, ir_.tensors[a.tensor].name, d, v));
      }
      offset += v * t.strides[d];
    }
    return t.data + offset * dtype_bytes(t.dtype);
  }

  /** Value of a tile at `c` of a (possibly larger, broadcast) result shape. */
  float value(const ir::Operand& o, const std::vector<std::int64_t>& c) const {
    if (o.is_scalar()) return o.scalar;
    const Shape& s = ir_.tiles[o.tile].shape;
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < s.size(); ++d) flat = flat * s[d] + (s[d] == 1 ? 0 : c[d]);
    return tiles_[o.tile][static_cast<std::size_t>(flat)];
  }

  void exec(const ir::LoadOp& op) {
    const ir::TileInfo& ti = ir_.tiles[op.result];
    std::vector<float>& out = tiles_[op.result];
    out.resize(static_cast<std::size_t>(shape_elements(ti.shape)));
    const DType src = ir_.tensors[op.src.tensor].dtype;
    std::vector<std::int64_t> c(ti.shape.size(), 0);
    std::size_t i = 0;
    do out[i++] = to_f32(load_element(element(op.src, c), src));
    while (next_coord(c, ti.shape));
  }

  void exec(const ir::BinaryOp& op) {
    const ir::TileInfo& ti = ir_.tiles[op.result];
    std::vector<float> out(static_cast<std::size_t>(shape_elements(ti.shape)));
    std::vector<std::int64_t> c(ti.shape.size(), 0);
    std::size_t i = 0;
    do out[i++] = to_f32(round_to_dtype(to_f64(ir::apply_binary(op.kind, value(op.lhs, c), value(op.rhs, c))), ti.dtype));
    while (next_coord(c, ti.shape));
    tiles_[op.result] = std::move(out);
  }

  void exec(const ir::StoreOp& op) {
    const DType dst = ir_.tensors[op.dst.tensor].dtype;
    const ir::Operand v{op.value, 0.0f};
    std::vector<std::int64_t> c(op.dst.shape.size(), 0);
    do store_element(element(op.dst, c), dst, to_f64(value(v, c)));
    while (next_coord(c, op.dst.shape));
  }

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
