/**
 * \file Lowers kernel IR to Halide and JIT-compiles it. The only translation unit that
 * includes Halide.h.
 *
 * One pipeline per store: the store's value DAG (loads and elementwise ops) fuses into
 * one Func over the tile, written straight into the output tensor through a strided
 * view. Input tensors are whole-tensor buffers; program ids are scalar parameters, so
 * one artifact serves every instance on every core (SPMD). All shapes and strides are
 * compile-time constants of the signature; only base pointers and ids vary per call.
 *
 * Batches: every Func has one more dimension, `j`, over a run of instances of one core
 * whose ids differ only in the last grid axis (program_id(last) = base + j). The loop
 * order is (tile axis 0, j, other tile axes): for a [128, 512] tile the rows of
 * neighbouring instances form one long contiguous stream instead of 128 short ones,
 * which the hardware prefetchers can follow. Batching is used only when it cannot be
 * observed: no load reads a tensor the kernel stores, and each tensor is stored once.
 *
 * Loads of a tensor the kernel also stores are not fused: a step of their own copies
 * the tile into a per-core scratch buffer (SBUF) at the load's place in the program,
 * and later ops read the scratch, so a store never changes what an earlier load saw.
 * Compiled with strict_float so fp32 arithmetic matches the reference interpreter bit
 * for bit (no FMA contraction, no reassociation).
 */
#include <Halide.h>
#include <fmt/format.h>

#include <atomic>
#include <climits>
#include <mutex>

#include "nki/error.h"
#include "nki/ir/passes.h"
#include "program.h"

namespace nki {

namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

thread_local std::string last_halide_error;

/** Installs handlers so a failing Halide call returns an error code instead of aborting. */
void install_halide_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    Halide::JITHandlers h;
    h.custom_error = [](Halide::JITUserContext*, const char* msg) { last_halide_error = msg; };
    h.custom_print = [](Halide::JITUserContext*, const char*) {};
    Halide::Internal::JITSharedRuntime::set_default_handlers(h);
  });
}

Halide::Type storage_type(DType t) {
  // 16-bit floats are handled as raw bits: the conversions below are ours, bit-exact on every CPU
  // (Halide's own float16 casts do not keep NaN on every path).
  switch (t) {
    case DType::fp32: return Halide::Float(32);
    case DType::bf16:
    case DType::fp16: return Halide::UInt(16);
    default: throw InternalError(fmt::format("the halide executor has no storage for dtype {}", dtype_name(t)));
  }
}

Expr u32(std::uint32_t v) { return Halide::cast(Halide::UInt(32), Expr(static_cast<int32_t>(v))); }
Expr as_f32(Expr bits) { return Halide::reinterpret(Halide::Float(32), bits); }

/** Stored element -> fp32 (exact). */
Expr to_f32(Expr stored, DType t) {
  switch (t) {
    case DType::fp32: return stored;
    case DType::bf16: return as_f32(Halide::cast(Halide::UInt(32), stored) << 16);
    case DType::fp16: {
      Expr h = Halide::cast(Halide::UInt(32), stored);
      Expr sign = (h & u32(0x8000)) << 16;
      Expr exp = (h >> 10) & u32(0x1f);
      Expr man = h & u32(0x3ff);
      Expr subnormal = as_f32(Halide::reinterpret(Halide::UInt(32), Halide::cast(Halide::Float(32), man) *
                                                                         Expr(5.9604644775390625e-8f)) |
                              sign);
      Expr inf_nan = as_f32(sign | u32(0x7f800000) | (man << 13));
      Expr normal = as_f32(sign | ((exp + u32(112)) << 23) | (man << 13));
      return Halide::select(exp == u32(0), subnormal, exp == u32(0x1f), inf_nan, normal);
    }
    default: throw InternalError(fmt::format("the halide executor cannot load dtype {}", dtype_name(t)));
  }
}

/** fp32 -> stored element of `t`, round to nearest even; NaN kept quiet with its sign (as nki::float_to_*_bits). */
Expr from_f32(Expr f, DType t) {
  switch (t) {
    case DType::fp32: return f;
    case DType::bf16: {
      Expr b = Halide::reinterpret(Halide::UInt(32), f);
      Expr odd = (b >> 16) & u32(1);
      Expr rne = Halide::cast(Halide::UInt(16), (b + u32(0x7fff) + odd) >> 16);
      Expr top = b >> 16;
      Expr nan = Halide::cast(Halide::UInt(16), Halide::select((top & u32(0x7f)) == u32(0), top | u32(0x40), top));
      return Halide::select(Halide::is_nan(f), nan, rne);
    }
    case DType::fp16: {
      Expr b = Halide::reinterpret(Halide::UInt(32), f);
      Expr sign = (b >> 16) & u32(0x8000);
      Expr abs = b & u32(0x7fffffff);
      Expr payload = (abs >> 13) & u32(0x3ff);
      Expr nan = sign | u32(0x7c00) | Halide::select(payload == u32(0), u32(0x200), payload);
      Expr inf = sign | u32(0x7c00);
      // Subnormal half: the significand (implicit bit included) shifted right, rounded to nearest even.
      Expr shift = u32(126) - (abs >> 23);
      Expr sig = (abs & u32(0x7fffff)) | u32(0x800000);
      Expr sh = Halide::min(shift, u32(31));
      Expr q = sig >> sh;
      Expr rem = sig - (q << sh);
      Expr half = u32(1) << (sh - u32(1));
      Expr up = rem > half || (rem == half && (q & u32(1)) == u32(1));
      Expr subnormal = sign | Halide::select(shift > u32(24), u32(0), q + Halide::select(up, u32(1), u32(0)));
      Expr v = abs - u32(112u << 23);
      Expr normal = sign | ((v + u32(0x0fff) + ((v >> 13) & u32(1))) >> 13);
      Expr bits = Halide::select(abs > u32(0x7f800000), nan, abs >= u32(0x477ff000), inf, abs < u32(0x38800000),
                                 subnormal, normal);
      return Halide::cast(Halide::UInt(16), bits);
    }
    default: throw InternalError(fmt::format("the halide executor cannot store dtype {}", dtype_name(t)));
  }
}

Expr round_to(Expr f, DType t) { return t == DType::fp32 ? f : to_f32(from_f32(f, t), t); }

Expr binary_raw(ir::BinaryKind k, Expr a, Expr b) {
  using Halide::is_nan;
  using Halide::select;
  switch (k) {
    case ir::BinaryKind::add: return a + b;
    case ir::BinaryKind::subtract: return a - b;
    case ir::BinaryKind::multiply: return a * b;
    case ir::BinaryKind::divide: return a / b;
    // numpy semantics, as ir::apply_binary.
    case ir::BinaryKind::maximum: return select(is_nan(a), a, select(is_nan(b), b, select(a >= b, a, b)));
    case ir::BinaryKind::minimum: return select(is_nan(a), a, select(is_nan(b), b, select(a <= b, a, b)));
  }
  return a;
}

/** As ir::apply_binary: a NaN result is the canonical quiet NaN, whatever the operands' payloads. */
Expr binary(ir::BinaryKind k, Expr a, Expr b) {
  Expr r = binary_raw(k, a, b);
  return Halide::select(Halide::is_nan(r), as_f32(u32(0x7fc00000)), r);
}

/** Builds Halide Funcs for one kernel's tiles; tile dim d is Halide dimension (rank - 1 - d). */
class Lowerer {
 public:
  explicit Lowerer(const ir::KernelIR& k) : k_(k), tiles_(k.tiles.size()), raw_(k.tiles.size()) {
    for (int a = 0; a < k.grid_rank; ++a) pids_.emplace_back(fmt::format("pid{}", a));
  }

  /** The instance-batch dimension (the last argument of every Func). */
  const Var& batch() const { return j_; }

  const std::vector<Halide::Param<int32_t>>& pids() const { return pids_; }
  std::map<int, Halide::ImageParam>& inputs() { return inputs_; }

  /** A load fused into its consumers: the tensor is read where the tile is used. */
  void define(const ir::LoadOp& op) {
    const std::vector<Var> v = vars(op.src.shape.size());
    Func f(fmt::format("t{}", op.result));
    f(v) = to_f32(loaded(op, v), k_.tensors[op.src.tensor].dtype);
    tiles_[op.result] = f;
  }

  /** The raw elements a load reads, as a Func over the tile (for copying into scratch). */
  Func load_copy(const ir::LoadOp& op) {
    const std::vector<Var> v = vars(op.src.shape.size());
    Func f("load_copy");
    f(v) = loaded(op, v);
    return f;
  }

  /** A load materialized in scratch buffer `scratch`: consumers read the copy. */
  void define_from_scratch(const ir::LoadOp& op, int scratch) {
    const Shape& shape = k_.tiles[op.result].shape;
    const DType dt = k_.tensors[op.src.tensor].dtype;
    Halide::ImageParam& p = dense_input(scratch_key(scratch), dt, shape, fmt::format("scratch{}", scratch));
    const std::vector<Var> v = vars(shape.size());
    Func f(fmt::format("t{}", op.result));
    f(v) = to_f32(p(std::vector<Expr>(v.begin(), v.end() - 1)), dt);
    tiles_[op.result] = f;
  }

  /** Argument keys: a tensor id (>= 0), or a scratch buffer (< 0). */
  static int scratch_key(int scratch) { return -1 - scratch; }

  void define(const ir::BinaryOp& op) {
    const ir::TileInfo& ti = k_.tiles[op.result];
    const std::vector<Var> v = vars(ti.shape.size());
    Func raw(fmt::format("t{}_f32", op.result));
    raw(v) = binary(op.kind, operand(op.lhs, ti.shape, v), operand(op.rhs, ti.shape, v));
    Func f(fmt::format("t{}", op.result));
    f(v) = round_to(raw(v), ti.dtype);
    raw_[op.result] = raw;
    tiles_[op.result] = f;
  }

  /** The stored value of a store: the tile converted to the tensor's dtype, over the access shape. */
  Func stored(const ir::StoreOp& op) {
    const DType dst = k_.tensors[op.dst.tensor].dtype;
    const ir::TileInfo& vi = k_.tiles[op.value];
    const std::vector<Var> v = vars(op.dst.shape.size());
    std::vector<Expr> at = broadcast_coords(vi.shape, op.dst.shape, v);
    // Rounding is idempotent: convert an op's unrounded fp32 result once when the dtypes agree.
    Expr value = (raw_[op.value].defined() && vi.dtype == dst) ? raw_[op.value](at) : tiles_[op.value](at);
    Func out("stored");
    out(v) = from_f32(value, dst);
    return out;
  }

 private:
  const ir::KernelIR& k_;
  std::vector<Func> tiles_, raw_;
  std::vector<Halide::Param<int32_t>> pids_;
  std::map<int, Halide::ImageParam> inputs_;
  Var j_{"j"};

  /** Halide-ordered vars of a tile of `rank` dimensions, then the batch var. */
  std::vector<Var> vars(std::size_t rank) const {
    std::vector<Var> v;
    for (std::size_t k = 0; k < rank; ++k) v.emplace_back(fmt::format("x{}", k));
    v.push_back(j_);
    return v;
  }
  /** Tile coordinates in tile-dimension order from Halide-ordered vars (batch var dropped). */
  static std::vector<Expr> tile_coords(const std::vector<Var>& v) {
    std::vector<Expr> c(v.rbegin() + 1, v.rend());
    return c;
  }
  /** Halide-ordered call arguments reading a tile of shape `from` at coordinates of shape `to`. */
  std::vector<Expr> broadcast_coords(const Shape& from, const Shape& to, const std::vector<Var>& v) const {
    std::vector<Expr> at;
    for (int d = static_cast<int>(from.size()) - 1; d >= 0; --d) {
      const std::size_t k = to.size() - 1 - static_cast<std::size_t>(d);
      at.push_back(from[d] == 1 && to[d] != 1 ? Expr(0) : Expr(v[k]));
    }
    at.push_back(j_);
    return at;
  }

  Expr loaded(const ir::LoadOp& op, const std::vector<Var>& v) {
    const ir::TensorDecl& t = k_.tensors[op.src.tensor];
    Halide::ImageParam& in = dense_input(op.src.tensor, t.dtype, t.shape, fmt::format("tensor{}", op.src.tensor));
    std::vector<Expr> idx;
    const std::vector<Expr> coords = tile_coords(v);
    for (int d = static_cast<int>(op.src.indices.size()) - 1; d >= 0; --d) idx.push_back(index(op.src.indices[d], coords));
    return in(idx);
  }

  /** The argument `key`: a whole row-major buffer of a known shape, so constant bounds and strides. */
  Halide::ImageParam& dense_input(int key, DType dt, const Shape& shape, const std::string& name) {
    auto it = inputs_.find(key);
    if (it != inputs_.end()) return it->second;
    Halide::ImageParam p(storage_type(dt), static_cast<int>(shape.size()), name);
    const std::vector<std::int64_t> strides = row_major_strides(shape);
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      const int hd = static_cast<int>(shape.size()) - 1 - d;
      p.dim(hd).set_bounds(0, static_cast<int>(shape[d])).set_stride(static_cast<int>(strides[d]));
    }
    return inputs_.emplace(key, p).first->second;
  }

  Expr index(const ir::IndexExpr& e, const std::vector<Expr>& coords) const {
    Expr v = Expr(static_cast<int>(e.constant));
    for (const ir::Term& t : e.terms) {
      Expr s = t.sym.kind == ir::Sym::Kind::program_id ? pid(t.sym.index)
                                                       : (e.shape[t.sym.index] == 1 ? Expr(0) : coords[t.sym.index]);
      v = v + static_cast<int>(t.coeff) * s;
    }
    return v;
  }

  /** program_id(axis): the last axis advances with the batch var. */
  Expr pid(int axis) const {
    return axis == k_.grid_rank - 1 ? Expr(pids_[axis]) + j_ : Expr(pids_[axis]);
  }

  Expr operand(const ir::Operand& o, const Shape& result, const std::vector<Var>& v) const {
    if (o.is_scalar()) return Expr(o.scalar);
    return tiles_[o.tile](broadcast_coords(k_.tiles[o.tile].shape, result, v));
  }
};

/** One compiled store: its entry point and how to build its arguments. */
struct Step {
  Halide::Internal::JITModule module;
  Halide::Internal::JITModule::argv_wrapper fn = nullptr;
  std::vector<int> inputs;              ///< argument keys in order (Lowerer::scratch_key for scratch)
  const ir::StoreOp* store = nullptr;   ///< writes a tensor through a view, or
  int scratch = -1;                     ///< writes this scratch buffer (a materialized load)
  std::vector<halide_dimension_t> out_dims;  ///< tile extents and strides, then the batch dim
};

/** A per-core buffer holding one materialized load tile. */
struct Scratch {
  Shape shape;
  DType dtype;
};

class HalideRunner final : public CoreRunner {
 public:
  HalideRunner(const ir::KernelIR& ir, const std::vector<Step>& steps, const std::vector<Scratch>& scratch,
               bool batchable, std::vector<TensorBinding> tensors)
      : ir_(ir), steps_(steps), batchable_(batchable), tensors_(std::move(tensors)), bound_(steps.size()) {
    for (const Scratch& sc : scratch) {
      scratch_mem_.emplace_back(static_cast<std::size_t>(shape_elements(sc.shape) * dtype_bytes(sc.dtype)));
      scratch_.push_back({scratch_mem_.back().data(), sc.shape, row_major_strides(sc.shape), sc.dtype});
    }
    for (std::size_t s = 0; s < steps_.size(); ++s) {
      Bound& b = bound_[s];
      const Step& step = steps_[s];
      b.in_dims.resize(step.inputs.size());
      b.in.resize(step.inputs.size());
      for (std::size_t i = 0; i < step.inputs.size(); ++i) {
        const TensorBinding& t = source(step.inputs[i]);
        for (int d = static_cast<int>(t.shape.size()) - 1; d >= 0; --d)
          b.in_dims[i].push_back({0, static_cast<int32_t>(t.shape[d]), static_cast<int32_t>(t.strides[d]), 0});
        b.in[i] = make_buffer(t.data, t.dtype, b.in_dims[i]);
      }
      b.out_dims = step.out_dims;
      const TensorBinding& o = step.store ? tensors_[step.store->dst.tensor] : scratch_[step.scratch];
      b.out = make_buffer(o.data, o.dtype, b.out_dims);
    }
  }

  void run_batch(std::span<const std::int64_t> pid, std::int64_t count) override {
    if (!batchable_ && count > 1) {  // one instance per call keeps the order of reads and writes
      std::vector<std::int64_t> next(pid.begin(), pid.end());
      for (std::int64_t i = 0; i < count; ++i, ++next.back()) run_batch(next, 1);
      return;
    }
    for (int a = 0; a < ir_.grid_rank; ++a) pid32_[a] = static_cast<int32_t>(pid[a]);
    for (std::size_t s = 0; s < steps_.size(); ++s) {
      const Step& step = steps_[s];
      Bound& b = bound_[s];
      if (step.store == nullptr) {  // a materialized load: always the same scratch buffer
        call(step, b);
        continue;
      }
      const TensorBinding& o = tensors_[step.store->dst.tensor];
      std::int64_t offset = 0;  // where tile coordinate 0 of the first instance lands
      for (std::size_t d = 0; d < step.store->dst.indices.size(); ++d) {
        const ir::IndexExpr& e = step.store->dst.indices[d];
        std::int64_t v = e.constant;
        for (const ir::Term& t : e.terms)
          if (t.sym.kind == ir::Sym::Kind::program_id) v += t.coeff * pid[t.sym.index];
        offset += v * o.strides[d];
      }
      b.out.host = reinterpret_cast<uint8_t*>(o.data + offset * dtype_bytes(o.dtype));
      b.out_dims.back().extent = static_cast<int32_t>(count);
      call(step, b);
    }
  }

  static constexpr std::size_t kMaxArgs = 64;

 private:
  struct Bound {
    std::vector<std::vector<halide_dimension_t>> in_dims;
    std::vector<halide_buffer_t> in;
    std::vector<halide_dimension_t> out_dims;
    halide_buffer_t out{};
  };

  void call(const Step& step, Bound& b) {
    const void* args[kMaxArgs];
    std::size_t n = 0;
    for (halide_buffer_t& in : b.in) args[n++] = &in;
    for (int a = 0; a < ir_.grid_rank; ++a) args[n++] = &pid32_[a];
    args[n++] = &b.out;
    if (step.fn(args) != 0) {
      throw InternalError(fmt::format("{}: compiled code failed: {}", ir_.name, last_halide_error));
    }
  }

  const TensorBinding& source(int key) const {
    return key >= 0 ? tensors_[static_cast<std::size_t>(key)] : scratch_[static_cast<std::size_t>(-1 - key)];
  }

  static halide_buffer_t make_buffer(std::byte* data, DType t, std::vector<halide_dimension_t>& dims) {
    halide_buffer_t b{};
    b.host = reinterpret_cast<uint8_t*>(data);
    const Halide::Type ht = storage_type(t);
    b.type = halide_type_t(static_cast<halide_type_code_t>(ht.code()), static_cast<uint8_t>(ht.bits()), 1);
    b.dimensions = static_cast<int32_t>(dims.size());
    b.dim = dims.data();
    return b;
  }

  const ir::KernelIR& ir_;
  const std::vector<Step>& steps_;
  bool batchable_;
  std::vector<TensorBinding> tensors_;
  std::vector<std::vector<std::byte>> scratch_mem_;
  std::vector<TensorBinding> scratch_;
  std::vector<Bound> bound_;
  int32_t pid32_[16] = {};
};

class HalideProgram final : public Program {
 public:
  explicit HalideProgram(std::shared_ptr<const ir::KernelIR> ir) : ir_(std::move(ir)) { compile(); }

  std::unique_ptr<CoreRunner> bind(const std::vector<TensorBinding>& tensors) const override {
    return std::make_unique<HalideRunner>(*ir_, steps_, scratch_, batchable_, tensors);
  }

 private:
  std::shared_ptr<const ir::KernelIR> ir_;
  std::vector<Step> steps_;
  std::vector<Scratch> scratch_;
  bool batchable_ = true;


  void compile() {
    install_halide_handlers();
    if (ir_->grid_rank > 16) throw UserError("err_grid_rank", ir_->name, {}, "grids have at most 16 axes");
    // Halide indexes buffers with 32-bit integers; every address in range of a tensor is
    // below its element count, so that count bounds every extent, stride and offset.
    for (const ir::TensorDecl& t : ir_->tensors) {
      if (shape_elements(t.shape) > INT32_MAX) {
        throw UserError("err_tensor_too_large", ir_->name, t.loc,
                        fmt::format("tensor {} {} has {} elements; the halide executor indexes with 32-bit integers "
                                    "(at most {}); use the reference executor",
                                    t.name, shape_str(t.shape), shape_elements(t.shape), INT32_MAX));
      }
    }
    const std::vector<int> stores = ir::count_stores(*ir_);
    // Interleaving a core's instances is invisible only if no load reads a stored tensor
    // and no tensor is written by two stores.
    batchable_ = ir_->grid_rank > 0;
    for (const ir::Op& op : ir_->body) {
      if (const auto* l = std::get_if<ir::LoadOp>(&op); l != nullptr && stores[l->src.tensor] > 0) batchable_ = false;
    }
    for (int n : stores) batchable_ = batchable_ && n <= 1;

    Lowerer low(*ir_);
    for (const ir::Op& op : ir_->body) {
      if (const auto* l = std::get_if<ir::LoadOp>(&op)) {
        if (stores[l->src.tensor] > 0) {
          steps_.push_back(compile_load_copy(low, *l));
          low.define_from_scratch(*l, steps_.back().scratch);
        } else {
          low.define(*l);
        }
      } else if (const auto* b = std::get_if<ir::BinaryOp>(&op)) {
        low.define(*b);
      } else if (const auto* s = std::get_if<ir::StoreOp>(&op)) {
        steps_.push_back(compile_store(low, *s));
      }
    }
  }

  /** A step copying a load's tile into a new scratch buffer, at the load's place in the program. */
  Step compile_load_copy(Lowerer& low, const ir::LoadOp& op) {
    Func out = low.load_copy(op);
    const Shape& shape = ir_->tiles[op.result].shape;
    Step step;
    step.scratch = static_cast<int>(scratch_.size());
    scratch_.push_back({shape, ir_->tensors[op.src.tensor].dtype});
    const std::vector<std::int64_t> strides = row_major_strides(shape);
    for (int k = static_cast<int>(shape.size()) - 1; k >= 0; --k)
      step.out_dims.push_back({0, static_cast<int32_t>(shape[k]), static_cast<int32_t>(strides[k]), 0});
    // batch: always one instance
    step.out_dims.push_back({0, 1, static_cast<int32_t>(shape_elements(shape)), 0});
    finish(low, out, step, op.loc, fmt::format("load{}", steps_.size()));
    return step;
  }

  Step compile_store(Lowerer& low, const ir::StoreOp& op) {
    Func out = low.stored(op);
    const ir::TensorDecl& t = ir_->tensors[op.dst.tensor];
    const std::size_t rank = op.dst.shape.size();
    // The view's stride along tile dim k: sum over tensor dims d of stride_d * coeff(axis k in index d).
    const std::vector<std::int64_t> tstride = row_major_strides(t.shape);
    Step step;
    step.store = &op;
    for (int k = static_cast<int>(rank) - 1; k >= 0; --k) {
      std::int64_t stride = 0;
      for (std::size_t d = 0; d < op.dst.indices.size(); ++d) {
        const ir::IndexExpr& e = op.dst.indices[d];
        if (!e.shape.empty() && e.shape[k] > 1) stride += tstride[d] * e.coeff_of({ir::Sym::Kind::axis, k});
      }
      step.out_dims.push_back({0, static_cast<int32_t>(op.dst.shape[k]), static_cast<int32_t>(stride), 0});
    }
    // The batch dim: one instance further along the last grid axis moves the store by this much.
    std::int64_t batch_stride = 0;
    for (std::size_t d = 0; d < op.dst.indices.size() && ir_->grid_rank > 0; ++d)
      batch_stride += tstride[d] * op.dst.indices[d].coeff_of({ir::Sym::Kind::program_id, ir_->grid_rank - 1});
    step.out_dims.push_back({0, 1, static_cast<int32_t>(batch_stride), 0});
    finish(low, out, step, op.loc, fmt::format("store{}", steps_.size()));
    return step;
  }

  /** Constrains the output to step.out_dims, schedules, compiles, and fills step.fn and step.inputs. */
  void finish(Lowerer& low, Func& out, Step& step, const SourceLoc& loc, const std::string& what) {
    const std::size_t rank = step.out_dims.size() - 1;
    Halide::OutputImageParam ob = out.output_buffer();
    for (std::size_t k = 0; k < rank; ++k)
      ob.dim(static_cast<int>(k)).set_bounds(0, step.out_dims[k].extent).set_stride(step.out_dims[k].stride);
    ob.dim(static_cast<int>(rank)).set_min(0).set_stride(step.out_dims[rank].stride);

    // Schedule: serial over the tile (parallelism comes from cores), vectorized along the innermost axis.
    const Halide::Target target = Halide::get_jit_target_from_environment().with_feature(Halide::Target::StrictFloat);
    const int lanes = target.natural_vector_size(Halide::Float(32));
    const Var x0 = out.args()[0];
    if (rank >= 2) {  // loop order: tile axis 0, batch, the other tile axes
      std::vector<Halide::VarOrRVar> order{x0, low.batch()};
      for (std::size_t k = 1; k < rank; ++k) order.emplace_back(out.args()[k]);
      out.reorder(order);
    }
    if (step.out_dims[0].extent >= lanes && step.out_dims[0].extent % lanes == 0) out.vectorize(x0, lanes);

    std::vector<Halide::Argument> args;
    for (auto& [key, p] : low.inputs()) {
      args.emplace_back(p);
      step.inputs.push_back(key);
    }
    for (const auto& p : low.pids()) args.emplace_back(p);
    if (args.size() + 1 > HalideRunner::kMaxArgs) {
      throw UserError("err_too_many_tensors", ir_->name, loc,
                      fmt::format("a step of the kernel reads {} buffers and {} program ids; the compiled executor "
                                  "passes at most {} arguments",
                                  step.inputs.size(), low.pids().size(), HalideRunner::kMaxArgs - 1));
    }
    const std::string fn_name = fmt::format("nki_{}_{}", sanitize(ir_->name), what);
    Halide::Module m = Halide::Pipeline(out).compile_to_module(args, fn_name, target);
    step.module = Halide::Internal::JITModule(m, m.get_function_by_name(fn_name));
    step.fn = step.module.argv_function();
    if (step.fn == nullptr) throw InternalError(fmt::format("{}: Halide produced no entry point", ir_->name));
  }


  static std::string sanitize(const std::string& s) {
    std::string out;
    for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return out;
  }
};

}  // namespace

std::shared_ptr<const Program> compile_halide_program(std::shared_ptr<const ir::KernelIR> ir) {
  // Halide's lowering and LLVM's JIT share global state: compile one pipeline at a time.
  static std::mutex compile_mutex;
  std::lock_guard lock(compile_mutex);
  const std::string name = ir->name;
  try {
    return std::make_shared<HalideProgram>(std::move(ir));
  } catch (const Halide::Error& e) {  // a kernel the validator accepted must compile
    throw InternalError(fmt::format("{}: Halide could not compile the kernel: {}", name, e.what()));
  }
}

}  // namespace nki
