/**
 * \file Lowers kernel IR to Halide and compiles it ahead of time into an object file. The
 * only translation unit that includes Halide.h.
 *
 * A kernel becomes a plan of steps (kernel_plan.h) and one object holding every step's
 * function. One pipeline per store: the store's value DAG (loads and elementwise ops)
 * fuses into one Func over the tile, written straight into the output tensor through a
 * strided view. Input tensors are whole-tensor buffers; program ids and loop variables
 * are scalar parameters, so one artifact serves every instance on every core (SPMD). All
 * shapes and strides are compile-time constants of the signature; only base pointers and
 * ids vary per call.
 *
 * Batches: every Func has one more dimension, `j`, over a run of instances of one core
 * whose ids differ only in the last grid axis (program_id(last) = base + j). The loop
 * order is (tile axis 0, j, other tile axes): for a [128, 512] tile the rows of
 * neighbouring instances form one long contiguous stream instead of 128 short ones,
 * which the hardware prefetchers can follow. Batching is used only when it cannot be
 * observed (straight-line kernels, no snapshots, each tensor stored once, unmasked).
 *
 * Compiled with strict_float so fp32 arithmetic matches the reference interpreter bit
 * for bit (no FMA contraction, no reassociation).
 */
#include "halide_lowering.h"
#include "streaming_stores.h"

#include <Halide.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <cstdio>
#include <stdexcept>
#include <climits>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "nki/error.h"
#include "nki/ir/passes.h"
#include "nki/ir/walk.h"
#include "nki/ir/mx_format.h"
#include "kernel_plan.h"
#include "on_chip_layout.h"
#include "storage_type.h"

namespace nki {

namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

Halide::Type storage_type(DType t) { return Halide::Type(storage_halide_type(t)); }

/** Tile values travel as fp32, except 32-bit integers, which need fp64 to stay exact (as double in the interpreter). */
Halide::Type value_type(DType t) {
  return (t == DType::int32 || t == DType::uint32 || t == DType::fp8_e5m2_x4 || t == DType::fp8_e4m3fn_x4)
             ? Halide::Float(64)
             : Halide::Float(32);
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
    default: break;
  }
  throw InternalError("to_f32 of a non-16-bit float");
}

/**
 * The bf16 bits `f` was widened from by to_f32, if it is such a widening: bf16 -> fp32 -> bf16 is
 * the identity for every bit pattern (the low 16 bits are zero, so rounding adds no carry, and a
 * bf16 NaN keeps its bits), but LLVM does not see it, and a tile copied or stored unchanged paid
 * both conversions per element.
 */
const Expr* widened_bf16(const Expr& f) {
  using namespace Halide::Internal;
  const Call* re = f.as<Call>();
  if (re == nullptr || !re->is_intrinsic(Call::reinterpret)) return nullptr;
  const Call* shl = re->args[0].as<Call>();
  if (shl == nullptr || !shl->is_intrinsic(Call::shift_left) || !is_const(shl->args[1], 16)) return nullptr;
  const Cast* widen = shl->args[0].as<Cast>();
  if (widen == nullptr || widen->value.type() != Halide::UInt(16)) return nullptr;
  return &widen->value;
}

Expr canonical_nan(Expr r);

/**
 * Whether `f` is canonical_nan(x): its only NaN is 0x7fc00000, which rounding to nearest even
 * maps to bf16's quiet NaN 0x7fc0 by itself, so the NaN test of the narrowing can go (every
 * binary op's result is such a value: the compiled add did both per element).
 */
bool is_canonical_nan(const Expr& f) {
  const auto* s = f.as<Halide::Internal::Select>();
  return s != nullptr && Halide::Internal::equal(f, canonical_nan(s->false_value));
}

/** fp32 -> stored element of `t`, round to nearest even; NaN kept quiet with its sign (as nki::float_to_*_bits). */
Expr from_f32(Expr f, DType t) {
  switch (t) {
    case DType::fp32: return f;
    case DType::bf16: {
      if (const Expr* bits = widened_bf16(f)) return *bits;
      Expr b = Halide::reinterpret(Halide::UInt(32), f);
      Expr odd = (b >> 16) & u32(1);
      Expr rne = Halide::cast(Halide::UInt(16), (b + u32(0x7fff) + odd) >> 16);
      if (is_canonical_nan(f)) return rne;
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
    default: break;
  }
  throw InternalError("from_f32 to a non-16-bit float");
}

// ---- element conversions beyond the 16-bit floats: calls into nki_* functions (kernel_abi.cpp),
// the same C++ the interpreter runs, so both executors agree bit for bit ----

Expr call_extern(Halide::Type t, const char* name, std::vector<Expr> args) {
  return Halide::Internal::Call::make(t, name, args, Halide::Internal::Call::PureExtern);
}

Expr f32(Expr v) { return v.type() == Halide::Float(32) ? v : Halide::cast(Halide::Float(32), v); }
Expr f64(Expr v) { return v.type() == Halide::Float(64) ? v : Halide::cast(Halide::Float(64), v); }
Expr f64_const(double v) { return Halide::Internal::make_const(Halide::Float(64), v); }

/** The format argument of nki_fp8_to_f32 / nki_f32_to_fp8 (kernel_abi.h). */
int fp8_format(DType t) {
  return t == DType::fp8_e5m2 ? 1 : t == DType::fp8_e4m3fn ? 2 : t == DType::fp8_e8m0fnu ? 3 : 0;
}

/** fp32 -> tf32 as nki::float_to_tf32_bits: round to nearest even at 10 mantissa bits, NaN payload kept. */
Expr to_tf32(Expr f) {
  Expr b = Halide::reinterpret(Halide::UInt(32), f);
  Expr top = b & u32(0xffffe000u);
  Expr nan = Halide::select((top & u32(0x7fffff)) == u32(0), top | u32(0x400000), top);
  Expr rne = (b + u32(0xfff) + ((b >> 13) & u32(1))) & u32(0xffffe000u);
  return as_f32(Halide::select(Halide::is_nan(f), nan, rne));
}

/** A stored element of `t` -> its exact value (value_type(t)). */
Expr load_value(Expr stored, DType t) {
  switch (t) {
    case DType::fp32:
    case DType::tf32: return stored;
    case DType::bf16:
    case DType::fp16: return to_f32(stored, t);
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
    case DType::fp8_e4m3fn:
    case DType::fp8_e8m0fnu:
      return call_extern(Halide::Float(32), "nki_fp8_to_f32", {Expr(fp8_format(t)), stored});
    case DType::boolean: return Halide::select(stored != 0, Expr(1.0f), Expr(0.0f));
    default: return Halide::cast(value_type(t), stored);
  }
}

/**
 * The bf16 bits of `f`, a value of a bf16 tile (every tile Func holds its dtype's values, widened
 * exactly: round_value): the top half of its fp32 bits, as widened_bf16 finds where it can see the
 * widening (a tile is a Func of its own, so a store of it cannot).
 */
Expr bf16_bits_of_exact(Expr f) {
  return Halide::cast(Halide::UInt(16), Halide::reinterpret(Halide::UInt(32), f) >> 16);
}

/** A value (fp32 or fp64) -> the stored element of `t`, as nki::store_element does. */
Expr store_value(Expr v, DType t) {
  switch (t) {
    case DType::fp32: return f32(v);
    case DType::tf32: return to_tf32(f32(v));
    case DType::bf16:
    case DType::fp16: return from_f32(f32(v), t);
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
    case DType::fp8_e4m3fn:
    case DType::fp8_e8m0fnu:
      return call_extern(Halide::UInt(8), "nki_f32_to_fp8", {Expr(fp8_format(t)), f32(v)});
    case DType::boolean:
      return Halide::cast(Halide::UInt(8), Halide::select(Halide::is_nan(v) || v != Halide::cast(v.type(), 0), 1, 0));
    default: {
      const Halide::Type st = storage_type(t);
      Expr d = f64(v);
      const double lo = st.is_int() ? static_cast<double>(*Halide::Internal::as_const_int(st.min())) : 0.0;
      const double hi = st.is_int() ? static_cast<double>(*Halide::Internal::as_const_int(st.max()))
                                    : static_cast<double>(*Halide::Internal::as_const_uint(st.max()));
      Expr clamped = Halide::clamp(Halide::round(d), f64_const(lo), f64_const(hi));
      return Halide::select(Halide::is_nan(d), Halide::cast(st, 0), Halide::cast(st, clamped));
    }
  }
}

/** round_to_dtype: any value -> the nearest value of `t` (value_type(t)). */
Expr round_value(Expr v, DType t) {
  if (t == DType::fp32) return f32(v);
  return load_value(store_value(v, t), t);
}

Expr canonical_nan(Expr r) { return Halide::select(Halide::is_nan(r), as_f32(u32(0x7fc00000)), r); }

Expr binary_raw(ir::BinaryKind k, Expr a, Expr b) {
  using Halide::is_nan;
  using Halide::select;
  const Expr one(1.0f), zero(0.0f);
  switch (k) {
    case ir::BinaryKind::add: return a + b;
    case ir::BinaryKind::subtract: return a - b;
    case ir::BinaryKind::multiply: return a * b;
    case ir::BinaryKind::divide: return a / b;
    // numpy semantics, as ir::apply_binary.
    case ir::BinaryKind::maximum: return select(is_nan(a), a, select(is_nan(b), b, select(a >= b, a, b)));
    case ir::BinaryKind::minimum: return select(is_nan(a), a, select(is_nan(b), b, select(a <= b, a, b)));
    case ir::BinaryKind::power: return call_extern(Halide::Float(32), "nki_power", {a, b});
    // IEEE comparisons: every comparison with a NaN is false, except !=.
    case ir::BinaryKind::equal: return select(a == b && !is_nan(a) && !is_nan(b), one, zero);
    case ir::BinaryKind::not_equal: return select(a == b && !is_nan(a) && !is_nan(b), zero, one);
    case ir::BinaryKind::greater: return select(a > b && !is_nan(a) && !is_nan(b), one, zero);
    case ir::BinaryKind::greater_equal: return select(a >= b && !is_nan(a) && !is_nan(b), one, zero);
    case ir::BinaryKind::less: return select(a < b && !is_nan(a) && !is_nan(b), one, zero);
    case ir::BinaryKind::less_equal: return select(a <= b && !is_nan(a) && !is_nan(b), one, zero);
    case ir::BinaryKind::logical_and: return select((a != zero || is_nan(a)) && (b != zero || is_nan(b)), one, zero);
    case ir::BinaryKind::logical_or: return select((a != zero || is_nan(a)) || (b != zero || is_nan(b)), one, zero);
    case ir::BinaryKind::logical_xor: return select((a != zero || is_nan(a)) != (b != zero || is_nan(b)), one, zero);
    case ir::BinaryKind::average: return (a + b) * Expr(0.5f);
    case ir::BinaryKind::bypass: return a;
    // The rest call ir::apply_binary (bitwise kinds never reach here: see value_of(BinaryOp)).
    default: return call_extern(Halide::Float(32), "nki_binary", {Expr(static_cast<int32_t>(k)), a, b});
  }
}

/** As ir::apply_binary: a NaN result is the canonical quiet NaN, whatever the operands' payloads. */
Expr binary(ir::BinaryKind k, Expr a, Expr b) { return canonical_nan(binary_raw(k, a, b)); }

/** As ir::apply_activation; the transcendental ones call it, so both executors share libm. */
Expr activation(ir::ActKind k, Expr x) {
  switch (k) {
    case ir::ActKind::copy: return x;
    case ir::ActKind::relu: return canonical_nan(Halide::select(x > 0.0f || Halide::is_nan(x), x, Expr(0.0f)));
    case ir::ActKind::sqrt: return canonical_nan(Halide::sqrt(x));
    case ir::ActKind::rsqrt: return canonical_nan(Expr(1.0f) / Halide::sqrt(x));
    case ir::ActKind::reciprocal: return canonical_nan(Expr(1.0f) / x);
    case ir::ActKind::abs: return canonical_nan(Halide::abs(x));
    // The sign bit flipped (Halide writes -x as 0 - x, which turns -0 into +0).
    case ir::ActKind::negative: return canonical_nan(as_f32(Halide::reinterpret(Halide::UInt(32), x) ^ u32(0x80000000u)));
    case ir::ActKind::square: return canonical_nan(x * x);
    default: return call_extern(Halide::Float(32), "nki_activation", {Expr(static_cast<int32_t>(k)), x});
  }
}

/** Ops whose results are computed into a scratch buffer of their own (not fused into consumers). */
bool is_materialized_kind(const ir::Op& op) {
  return std::holds_alternative<ir::MatmulOp>(op) || std::holds_alternative<ir::ReduceOp>(op) ||
         std::holds_alternative<ir::TransposeOp>(op) || std::holds_alternative<ir::ScanOp>(op) ||
         std::holds_alternative<ir::QuantizeMxOp>(op) || std::holds_alternative<ir::MatmulMxOp>(op);
}

/**
 * Builds Halide Funcs for one kernel's tiles. Tile dim d is Halide dimension (rank - 1 - d);
 * every Func has one more argument, the instance-batch var j.
 */
class Lowerer {
 public:
  Lowerer(const ir::KernelIR& k, std::vector<std::int64_t> pid_base)
      : k_(k), layout_(k), tiles_(k.tiles.size()), pid_base_(std::move(pid_base)) {
    for (int a = 0; a < k.grid_rank; ++a) pids_.emplace_back(fmt::format("pid{}", a));
    for (std::size_t l = 0; l < k.loops.size(); ++l) loops_.emplace_back(fmt::format("loop{}", l));
    loop_shift_.assign(k.loops.size(), 0);
  }

  /** Loop `loop` is read as its parameter + `shift` (copy `shift` of an unrolled body) from now on. */
  void set_loop_shift(int loop, int shift) { loop_shift_[static_cast<std::size_t>(loop)] = shift; }

  const Var& batch() const { return j_; }
  const OnChipLayout& layout() const { return layout_; }
  const std::vector<Halide::Param<int32_t>>& pids() const { return pids_; }
  const Halide::Param<int32_t>& rank() const { return rank_; }
  const std::vector<Halide::Param<int32_t>>& loops() const { return loops_; }
  std::map<int, Halide::ImageParam>& inputs() { return inputs_; }

  /** The value Func of a tile (value_type of its dtype). */
  Func& tile(int id) { return tiles_[static_cast<std::size_t>(id)]; }

  /** Halide-ordered vars of a tile of `rank` dimensions, then the batch var. */
  std::vector<Var> vars(std::size_t rank) const {
    std::vector<Var> v;
    for (std::size_t q = 0; q < rank; ++q) v.emplace_back(fmt::format("x{}", q));
    v.push_back(j_);
    return v;
  }
  /** Tile coordinates in tile-dimension order from Halide-ordered args (batch dropped). */
  template <class V>
  static std::vector<Expr> tile_coords(const std::vector<V>& v) {
    return std::vector<Expr>(v.rbegin() + 1, v.rend());
  }
  /** Halide-ordered call args for a tile-order coordinate list and the batch var. */
  std::vector<Expr> call_args(const std::vector<Expr>& coords) const {
    std::vector<Expr> a(coords.rbegin(), coords.rend());
    a.push_back(j_);
    return a;
  }

  /** The value of an operand at tile coordinates `c` of a (possibly larger) result shape. */
  Expr operand(const ir::Operand& o, const std::vector<Expr>& c) {
    if (o.is_scalar()) return f64_const(o.scalar);
    const Shape& s = k_.tiles[static_cast<std::size_t>(o.tile)].shape;
    std::vector<Expr> at;
    for (std::size_t d = 0; d < s.size(); ++d) at.push_back(s[d] == 1 ? Expr(0) : c[d]);
    return tile(o.tile)(call_args(at));
  }

  Expr index(const ir::IndexExpr& e, const std::vector<Expr>& c) const {
    Expr v = Expr(static_cast<int>(e.constant));
    for (const ir::Term& t : e.terms) {
      Expr s;
      switch (t.sym.kind) {
        case ir::Sym::Kind::program_id: s = pid(t.sym.index); break;
        case ir::Sym::Kind::loop: s = loop_value(t.sym.index); break;
        case ir::Sym::Kind::rank: s = rank_; break;
        case ir::Sym::Kind::axis: s = e.shape[static_cast<std::size_t>(t.sym.index)] == 1 ? Expr(0) : c[static_cast<std::size_t>(t.sym.index)]; break;
      }
      v = v + static_cast<int>(t.coeff) * s;
    }
    return v;
  }

  Expr holds(const ir::Predicate& p, const std::vector<Expr>& c) const {
    Expr ok = Halide::Internal::const_true();
    for (const ir::Condition& cond : p.all) {
      Expr v = index(cond.expr, c);
      ok = ok && (cond.not_equal ? v != 0 : v >= 0);
    }
    return ok;
  }

  /** The elements of an access at tile coordinates (storage type); clamped into the tensor when masked. */
  Expr read(const ir::Access& a, const std::vector<Expr>& c, bool clamp) {
    const ir::TensorDecl& t = k_.tensors[static_cast<std::size_t>(a.tensor)];
    Halide::ImageParam& in = whole_input(a.tensor, storage_type(t.dtype), ir::storage_shape(t), layout_.strides(a.tensor),
                                         fmt::format("tensor{}", a.tensor));
    std::vector<Expr> idx;
    for (int d = static_cast<int>(a.indices.size()) - 1; d >= 0; --d) {
      Expr i = index(a.indices[static_cast<std::size_t>(d)], c);
      if (clamp) i = Halide::clamp(i, 0, static_cast<int>(t.shape[static_cast<std::size_t>(d)]) - 1);
      idx.push_back(stored_at(t, static_cast<std::size_t>(d), i));
    }
    return in(idx);
  }

  /** Defines an op's tile as a Func fused into its consumers. */
  void define(const ir::Op& op) {
    std::visit([this](const auto& o) { define_op(o); }, op);
  }

  /** The value a compute op produces at `c` (before masking and rounding), or an undefined Expr for non-elementwise ops. */
  Expr elementwise_value(const ir::Op& op, const std::vector<Expr>& c) {
    return std::visit([&](const auto& o) { return value_of(o, c); }, op);
  }

  /** A tile read back from scratch buffer `key` (dense, value type, no batch dim). */
  void define_from_scratch(int tile_id, int key) {
    const ir::TileInfo& ti = k_.tiles[static_cast<std::size_t>(tile_id)];
    Halide::ImageParam& p =
        whole_input(key, value_type(ti.dtype), ti.shape, row_major_strides(ti.shape), fmt::format("scratch{}", -1 - key));
    const std::vector<Var> v = vars(ti.shape.size());
    Func f(fmt::format("t{}", tile_id));
    f(v) = p(std::vector<Expr>(v.begin(), v.end() - 1));
    tile(tile_id) = f;
  }

  /** Where coordinate `i` of dimension `d` of `t` is stored: a wrapped block dimension of a placed array takes it mod its blocks. */
  static Expr stored_at(const ir::TensorDecl& t, std::size_t d, Expr i) {
    if (!t.placement.placed || t.placement.storage[d] == t.shape[d]) return i;
    return i % static_cast<int>(t.placement.storage[d]);
  }

  /** The argument `key`: a whole buffer of a known shape and strides, so constant bounds and strides. */
  Halide::ImageParam& whole_input(int key, Halide::Type type, const Shape& shape, const std::vector<std::int64_t>& strides,
                                  const std::string& name) {
    auto it = inputs_.find(key);
    if (it != inputs_.end()) return it->second;
    Halide::ImageParam p(type, static_cast<int>(shape.size()), name);
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      const int hd = static_cast<int>(shape.size()) - 1 - d;
      p.dim(hd).set_bounds(0, static_cast<int>(shape[static_cast<std::size_t>(d)]))
          .set_stride(static_cast<int>(strides[static_cast<std::size_t>(d)]));
    }
    return inputs_.emplace(key, p).first->second;
  }

 private:
  const ir::KernelIR& k_;
  OnChipLayout layout_;
  std::vector<Func> tiles_;
  std::vector<Halide::Param<int32_t>> pids_, loops_;
  Halide::Param<int32_t> rank_{"rank"};  ///< rank_id(): a run-time value (an MPMD kernel has it baked in)
  std::map<int, Halide::ImageParam> inputs_;
  std::vector<std::int64_t> pid_base_;  ///< MPMD: constants baked in; the parameter is pid - base
  std::vector<int> loop_shift_;
  Var j_{"j"};

  Expr loop_value(int loop) const {
    const int shift = loop_shift_[static_cast<std::size_t>(loop)];
    Expr p = loops_[static_cast<std::size_t>(loop)];
    return shift == 0 ? p : p + shift;
  }

  /** program_id(axis): the last axis advances with the batch var. */
  Expr pid(int axis) const {
    Expr p = pids_[static_cast<std::size_t>(axis)];
    if (!pid_base_.empty()) p = static_cast<int>(pid_base_[static_cast<std::size_t>(axis)]) + p;
    return axis == k_.grid_rank - 1 ? p + j_ : p;
  }

  template <class O>
  void define_op(const O& o) {
    if constexpr (requires { o.result; }) {
      const ir::TileInfo& ti = k_.tiles[static_cast<std::size_t>(o.result)];
      const std::vector<Var> v = vars(ti.shape.size());
      const std::vector<Expr> c = tile_coords(v);
      Expr value = value_of(o, c);
      if (!value.defined()) throw InternalError(fmt::format("{}: op of tile {} cannot be fused", k_.name, o.result));
      value = round_value(value, ti.dtype);
      if constexpr (requires { o.mask; })
        if (!o.mask.empty()) value = Halide::select(holds(o.mask, c), value, Halide::cast(value.type(), 0));
      Func f(fmt::format("t{}", o.result));
      f(v) = value;
      tile(o.result) = f;
    }
  }

  // The unrounded value of each elementwise op at tile coordinates c.
  Expr value_of(const ir::LoadOp& o, const std::vector<Expr>& c) {
    const ir::TensorDecl& t = k_.tensors[static_cast<std::size_t>(o.src.tensor)];
    if (o.index_tile < 0) return load_value(read(o.src, c, !o.mask.empty()), t.dtype);
    // Indirect: the row from the index tile, checked by nki_gather_index (-1 outside), clamped.
    const auto dim = static_cast<std::size_t>(o.index_dim);
    const int extent = static_cast<int>(t.shape[dim]);
    Expr base = index(o.src.indices[dim], c);
    Expr row = call_extern(Halide::Int(32), "nki_gather_index",
                           {f64(tile(o.index_tile)(call_args(std::vector<Expr>{c[0], Expr(0)}))) + f64(base), Expr(extent),
                            Expr(static_cast<int32_t>(o.result)), Expr(static_cast<int32_t>(o.oob_error ? 1 : 0))});
    Halide::ImageParam& in = whole_input(o.src.tensor, storage_type(t.dtype), ir::storage_shape(t),
                                         layout_.strides(o.src.tensor), fmt::format("tensor{}", o.src.tensor));
    std::vector<Expr> idx;
    for (int d = static_cast<int>(o.src.indices.size()) - 1; d >= 0; --d) {
      Expr i = static_cast<std::size_t>(d) == dim ? row : index(o.src.indices[static_cast<std::size_t>(d)], c);
      idx.push_back(stored_at(t, static_cast<std::size_t>(d), Halide::clamp(i, 0, static_cast<int>(t.shape[static_cast<std::size_t>(d)]) - 1)));
    }
    Expr v = load_value(in(idx), t.dtype);
    return Halide::select(row >= 0, v, Halide::cast(v.type(), 0));
  }
  Expr value_of(const ir::ActivationOp& o, const std::vector<Expr>& c) {
    const bool identity = o.scale.is_scalar() && o.scale.scalar == 1.0 && o.bias.is_scalar() && o.bias.scalar == 0.0;
    Expr x = operand(o.data, c);
    if (o.kind == ir::ActKind::copy && identity) return x;  // data movement: exact
    x = f32(x);
    if (!identity) x = x * f32(operand(o.scale, c)) + f32(operand(o.bias, c));
    return activation(o.kind, x);
  }
  Expr value_of(const ir::BinaryOp& o, const std::vector<Expr>& c) {
    if (ir::is_bitwise(o.kind)) {  // integer bit patterns in the result's type: exact values as fp64
      const DType dt = k_.tiles[static_cast<std::size_t>(o.result)].dtype;
      return call_extern(Halide::Float(64), "nki_bitwise",
                         {Expr(static_cast<int32_t>(o.kind)), Expr(static_cast<int32_t>(dt)), f64(operand(o.lhs, c)),
                          f64(operand(o.rhs, c))});
    }
    return binary(o.kind, f32(operand(o.lhs, c)), f32(operand(o.rhs, c)));
  }
  Expr value_of(const ir::SelectOp& o, const std::vector<Expr>& c) {
    Expr cond;
    if (o.cond.is_scalar()) {
      cond = holds(o.pred, c);
    } else {
      Expr x = operand(o.cond, c);
      cond = x != Halide::cast(x.type(), 0) || Halide::is_nan(x);
    }
    return Halide::select(cond, f64(operand(o.on_true, c)), f64(operand(o.on_false, c)));
  }
  Expr value_of(const ir::IotaOp& o, const std::vector<Expr>& c) { return f64(index(o.expr, c)); }
  /** A window or broadcast of a tile: the data tile at the view's indices (validated in bounds at trace time). */
  Expr value_of(const ir::ViewOp& o, const std::vector<Expr>& c) {
    std::vector<Expr> at;
    for (const ir::IndexExpr& e : o.indices) at.push_back(index(e, c));
    return tile(o.data)(call_args(at));
  }
  /**
   * ir::GatherOp: the index comes from the indices tile; nki_gather_index checks it (recording
   * an out-of-bound index under oob_mode.error for the executor to raise) and gives -1 outside.
   */
  Expr value_of(const ir::GatherOp& o, const std::vector<Expr>& c) {
    const Shape& ds = k_.tiles[static_cast<std::size_t>(o.data)].shape;
    Expr fallback = o.fallback.is_scalar() ? f64_const(o.fallback.scalar) : f64(operand(o.fallback, c));
    if (o.indices < 0) {  // a table of source partitions, fixed at trace time
      Expr src = Expr(-1);
      for (std::size_t p = 0; p < o.table.size(); ++p) src = Halide::select(c[0] == static_cast<int>(p), static_cast<int>(o.table[p]), src);
      std::vector<Expr> at = c;
      at[0] = Halide::max(src, 0);
      return Halide::select(src >= 0, f64(tile(o.data)(call_args(at))), fallback);
    }
    const std::int64_t per = shape_elements(ds) / ds[0];
    Expr g = call_extern(Halide::Int(32), "nki_gather_index",
                         {f64(operand({o.indices, 0, true}, c)), Expr(static_cast<int32_t>(per)), Expr(static_cast<int32_t>(o.result)),
                          Expr(static_cast<int32_t>(o.oob_error ? 1 : 0))});
    Expr safe = Halide::clamp(g, 0, static_cast<int>(per) - 1);
    std::vector<Expr> at(ds.size());
    at[0] = c[0];
    for (std::size_t d = ds.size(); d-- > 1;) {
      at[d] = safe % static_cast<int>(ds[d]);
      safe = safe / static_cast<int>(ds[d]);
    }
    return Halide::select(g >= 0, f64(tile(o.data)(call_args(at))), fallback);
  }
  template <class O>
  Expr value_of(const O&, const std::vector<Expr>&) {
    return Expr();
  }
};

/** The Halide step form of the plan (Step is StepPlan; scratch keeps its Halide type until plan()). */
using Step = StepPlan;
struct Scratch {
  Shape shape;
  Halide::Type type;
};

/// Outputs at least this large stream (StepPlan::streaming): more than a host's last-level cache
/// keeps for one core (32 MiB per 8-core AMD EPYC CCD, 1.5-2 MiB per Intel Xeon core), so the
/// line a plain store first reads into the cache is evicted unread; skipping that read is up to
/// a third more bandwidth for a copy-like kernel (bench/README.md, "Streaming stores").
constexpr std::int64_t kStreamingBytes = std::int64_t{64} << 20;

/** Whether the CPU executes AVX512-FP16 (CPUID leaf 7, EDX bit 23). */
bool host_has_avx512_fp16() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx & (1U << 23)) != 0;
#else
  return false;
#endif
}

/** The host as Halide 14 sees it, less what this CPU cannot run: Halide 14 takes AVX512-BF16 for a
    Sapphire Rapids, whose LLVM CPU also emits AVX512-FP16 (vmovw), which AMD's Zen 4 has not. */
Halide::Target runnable_host_target() {
  Halide::Target t = Halide::get_host_target();
  if (t.has_feature(Halide::Target::AVX512_SapphireRapids) && !host_has_avx512_fp16())
    t = t.without_feature(Halide::Target::AVX512_SapphireRapids);
  return t;
}

/**
 * The target of every artifact: the host, strict float math, the Halide runtime in its own shared
 * object. Found once per process: asking the CPU (cpuid) traps to the hypervisor on a VM, and
 * every launch keys its artifact with this target (8.7 us against 5.1 us for a one-instance
 * launch when asked each time, bench/README.md).
 */
const Halide::Target& artifact_target() {
  static const Halide::Target target = runnable_host_target()
                                           .with_feature(Halide::Target::StrictFloat)
                                           .with_feature(Halide::Target::NoRuntime)
                                           .with_feature(Halide::Target::NoAsserts);
  return target;
}

/** Lowers one kernel to a plan and one Halide module holding every step's function. */
class KernelBuilder {
 public:
  KernelBuilder(const ir::KernelIR& ir, std::vector<std::int64_t> pid_base, int layer_unroll_factor)
      : ir_(&ir), nest_(ir), low_(ir, pid_base), pid_base_(std::move(pid_base)), unroll_(layer_unroll_factor) {
    compile();
  }

  KernelPlan plan() const {
    KernelPlan p;
    p.steps = steps_;
    for (const Scratch& sc : scratch_) p.scratch.push_back({sc.shape, static_cast<int>(sc.type.code()), sc.type.bits()});
    p.batchable = batchable_;
    p.pid_base = pid_base_;
    return p;
  }

  /** The functions whose stores stream (StepPlan::streaming). */
  std::set<std::string> streaming_functions() const {
    std::set<std::string> out;
    for (const Step& s : steps_)
      if (s.streaming) out.insert(s.function);
    return out;
  }

  /** Every step's function in one module (one LLVM run). */
  Halide::Module module() const {
    if (modules_.empty()) return Halide::Module(fmt::format("nki_{}", sanitize(ir_->name)), target_);  // no compiled steps
    Halide::Module m = Halide::link_modules(fmt::format("nki_{}", sanitize(ir_->name)), modules_);
    // link_modules drops the flag that makes LLVM keep fp32 ops unfused (no FMA contraction).
    m.set_any_strict_float(true);
    return m;
  }

 private:
  const ir::KernelIR* ir_;
  ir::LoopNest nest_;
  Lowerer low_;
  std::vector<Step> steps_;
  std::vector<Scratch> scratch_;
  std::vector<Halide::Module> modules_;
  std::vector<int> reads_;  ///< per tile, how many ops read it
  /// Fused psum += matmul stores that do their tensor's zero fill (fill_taken_by): body index ->
  /// the loop in whose first iteration they do it, -1 every time they run.
  std::map<std::size_t, int> fresh_stores_;
  std::vector<bool> materialized_;
  std::vector<int> tile_scratch_;  ///< the scratch buffer each materialized tile was last computed into
  std::vector<std::int64_t> pid_base_;
  bool batchable_ = true;
  int unroll_ = 1;  ///< unroll factor of the outermost loops
  Halide::Target target_;
  int lanes_ = 8;

  void compile() {
    target_ = artifact_target();
    lanes_ = target_.natural_vector_size(Halide::Float(32));
    const ir::KernelIR& k = *ir_;
    if (k.grid_rank > 16) throw UserError("err_grid_rank", k.name, {}, "grids have at most 16 axes");
    // Halide indexes buffers with 32-bit integers; every address in range of a tensor is
    // below its element count, so that count bounds every extent, stride and offset.
    for (const ir::TensorDecl& t : k.tensors) {
      if (shape_elements(t.shape) > INT32_MAX) {
        throw UserError("err_tensor_too_large", k.name, t.loc,
                        fmt::format("tensor {} {} has {} elements; the halide executor indexes with 32-bit integers "
                                    "(at most {}); use the reference executor",
                                    t.name, shape_str(t.shape), shape_elements(t.shape), INT32_MAX));
      }
    }
    const std::vector<int> stores = ir::count_stores(k);
    reads_.assign(k.tiles.size(), 0);
    for (const ir::Op& op : k.body)
      for (int t : ir::tiles_read(op)) ++reads_[static_cast<std::size_t>(t)];
    materialized_ = materialized_tiles(stores);
    tile_scratch_.assign(k.tiles.size(), -1);
    const std::vector<bool>& materialized = materialized_;

    // Interleaving a core's instances is invisible only for straight-line kernels whose
    // loads read tensors nobody stores, whose tensors are stored once, unmasked.
    batchable_ = k.grid_rank > 0 && k.loops.empty();
    for (const ir::Op& op : k.body) {
      if (const auto* l = std::get_if<ir::LoadOp>(&op); l && stores[static_cast<std::size_t>(l->src.tensor)] > 0)
        batchable_ = false;
      if (const auto* s = std::get_if<ir::StoreOp>(&op); s && (!s->mask.empty() || s->accumulate || s->index_tile >= 0))
        batchable_ = false;
      if (std::holds_alternative<ir::AllocOp>(op) || std::holds_alternative<ir::RegisterOp>(op) ||
          std::holds_alternative<ir::PrintOp>(op) || std::holds_alternative<ir::CollectiveOp>(op))
        batchable_ = false;
    }
    for (int n : stores) batchable_ = batchable_ && n <= 1;
    for (bool m : materialized) batchable_ = batchable_ && !m;

    lower_ops(-1);
  }

  /** Lowers the ops directly in `loop` (-1: the kernel's top level) into steps, each nested loop with its body. */
  void lower_ops(int loop) {
    const ir::KernelIR& k = *ir_;
    const std::vector<bool>& materialized = materialized_;
    std::size_t fused_store = k.body.size();  // the store a matmul step also did (sole_accumulating_store)
    for (std::size_t i : nest_.level(loop)) {
      const ir::Op& op = k.body[i];
      if (const auto* l = std::get_if<ir::LoopOp>(&op)) {
        const std::int64_t trip = k.loops[static_cast<std::size_t>(l->loop)].trip;
        // Only outermost loops unroll, and never a dynamic one (its trip count is known when it runs).
        if (loop < 0 && !ir::is_dynamic(k.loops[static_cast<std::size_t>(l->loop)].kind) &&
            std::min<std::int64_t>(unroll_, trip) > 1) {
          lower_unrolled_loop(l->loop);
          continue;
        }
        const std::size_t head = steps_.size();
        Step s;
        s.kind = Step::Kind::loop;
        s.loop = l->loop;
        steps_.push_back(std::move(s));
        lower_ops(l->loop);
        steps_[head].end = steps_.size();
        Step close;
        close.kind = Step::Kind::loop_end;
        steps_.push_back(std::move(close));
        continue;
      }
      if (const auto* pr = std::get_if<ir::PrintOp>(&op)) {  // the executor prints the tile's scratch
        Step s;
        s.kind = Step::Kind::print;
        s.op = static_cast<int>(i);
        s.scratch = tile_scratch_.at(static_cast<std::size_t>(pr->tile));
        steps_.push_back(std::move(s));
        continue;
      }
      if (std::holds_alternative<ir::CollectiveOp>(op)) {  // the executor meets the other ranks itself
        Step s;
        s.kind = Step::Kind::collective;
        s.op = static_cast<int>(i);
        steps_.push_back(std::move(s));
        continue;
      }
      if (std::holds_alternative<ir::RegisterOp>(op)) {  // run by the executor itself, in program order
        Step s;
        s.kind = Step::Kind::reg;
        s.op = static_cast<int>(i);
        steps_.push_back(std::move(s));
        continue;
      }
      if (const auto* a = std::get_if<ir::AllocOp>(&op)) {
        if (const auto taken = fill_taken_by(i)) {
          fresh_stores_[taken->first] = taken->second;
          continue;
        }
        if (k.tensors[static_cast<std::size_t>(a->tensor)].fill) {
          Step s;
          s.kind = Step::Kind::fill;
          s.tensor = a->tensor;
          steps_.push_back(std::move(s));
        }
        continue;
      }
      if (const auto* s = std::get_if<ir::StoreOp>(&op); s && s->index_tile >= 0) {
        // A scatter (or atomic update): the executor writes the rows its index tile names.
        Step st;
        st.kind = Step::Kind::scatter;
        st.op = static_cast<int>(i);
        st.inputs = {-1 - tile_scratch_.at(static_cast<std::size_t>(s->value)),
                     -1 - tile_scratch_.at(static_cast<std::size_t>(s->index_tile))};
        steps_.push_back(std::move(st));
        continue;
      }
      if (i == fused_store) continue;  // compiled with the matmul before it
      if (const auto* s = std::get_if<ir::StoreOp>(&op)) {
        steps_.push_back(compile_store(*s));
        continue;
      }
      if (const auto* mm = std::get_if<ir::MatmulOp>(&op)) {
        if (const ir::StoreOp* acc = sole_accumulating_store(i, *mm)) {
          steps_.push_back(compile_matmul_accumulate(*mm, *acc));
          fused_store = i + 1;
          continue;
        }
      }
      const int t = ir::tile_defined(op);
      if (t < 0) continue;
      if (materialized[static_cast<std::size_t>(t)]) {
        steps_.push_back(compile_materialized(op, t));
        low_.define_from_scratch(t, -1 - steps_.back().scratch);
        tile_scratch_[static_cast<std::size_t>(t)] = steps_.back().scratch;
      } else {
        low_.define(op);
      }
    }
  }

  /** A matmul's accumulator: acc(n, m, batch) summed over k. */
  struct Contraction {
    Func acc;
    Halide::RDom k;
    Func moving;  // the widened moving operand (a stage of the caller's)
  };

  /**
   * A read of a tensor the kernel writes needs no snapshot when every op that uses its value runs
   * before anything can change the tensor (no loop boundary, no write of it in between): ops
   * computed into scratch (matmul, transpose, reduce) read it where they stand, and elementwise
   * ops of the tile's shape are inlined into their own readers, which must then run before any
   * write too. The one write allowed to use the value is the store of an update in place
   * (`acc[i] = acc[i] + x`: update_in_place), the last use. NKI's blocked kernels read their
   * matmul operands and their SBUF accumulators so.
   */
  bool read_in_place(std::size_t at, const ir::LoadOp& load) const {
    const ir::KernelIR& k = *ir_;
    // Tiles whose value is the read's (inlined from it), and the reads of them still to come.
    std::vector<bool> from_read(k.tiles.size(), false);
    from_read[static_cast<std::size_t>(load.result)] = true;
    int pending = reads_[static_cast<std::size_t>(load.result)];
    // A write of any tensor sharing the read one's storage (a reshape / view(dtype)) changes it.
    const int read = ir::storage_of(k, load.src.tensor);
    const auto same = [&](int tensor) { return ir::storage_of(k, tensor) == read; };
    for (std::size_t i = at + 1; i < k.body.size() && pending > 0; ++i) {
      const ir::Op& op = k.body[i];
      if (ir::is_loop_marker(op)) return false;
      int here = 0;
      for (int t : ir::tiles_read(op)) here += from_read[static_cast<std::size_t>(t)];
      if (const auto* s = std::get_if<ir::StoreOp>(&op); s && same(s->dst.tensor))
        return here > 0 && here == pending && update_in_place(load, *s);
      if (const auto* a = std::get_if<ir::AllocOp>(&op); a && same(a->tensor)) return false;
      if (const auto* r = std::get_if<ir::RegisterOp>(&op); r && r->kind == ir::RegisterOp::Kind::store && same(r->mem.tensor))
        return false;
      // A core_barrier or sendrecv: the other core may write any shared tensor past it.
      if (const auto* c = std::get_if<ir::CollectiveOp>(&op);
          c && (ir::meets_cores(*c) || std::any_of(c->dsts.begin(), c->dsts.end(), same) ||
                (ir::writes_metadata(*c) && same(c->metadata))))
        return false;
      if (here == 0) continue;
      if (!is_materialized_kind(op) && !std::holds_alternative<ir::StoreOp>(op)) {
        const int t = elementwise_result(op, from_read);
        if (t < 0) return false;
        from_read[static_cast<std::size_t>(t)] = true;
        pending += reads_[static_cast<std::size_t>(t)];
      }
      pending -= here;
    }
    return pending == 0;
  }

  /**
   * The tile an elementwise op (binary, activation, select) makes, when each tile of `from_read`
   * it reads has the result's shape (element i of the result reads element i of it, no broadcast);
   * else -1.
   */
  int elementwise_result(const ir::Op& op, const std::vector<bool>& from_read) const {
    const ir::KernelIR& k = *ir_;
    if (!std::holds_alternative<ir::BinaryOp>(op) && !std::holds_alternative<ir::ActivationOp>(op) &&
        !std::holds_alternative<ir::SelectOp>(op))
      return -1;
    const int t = ir::tile_defined(op);
    const Shape& shape = k.tiles[static_cast<std::size_t>(t)].shape;
    for (int r : ir::tiles_read(op))
      if (from_read[static_cast<std::size_t>(r)] && k.tiles[static_cast<std::size_t>(r)].shape != shape) return -1;
    return t;
  }

  /**
   * Whether `store` writes back exactly the elements `load` read, each once: the same tensor and
   * access, neither masked nor indirect, and distinct tile elements at distinct addresses. Its
   * value is then computed per element from that element's own value, which is what the
   * snapshot would have given it: element by element, the read comes before the write.
   */
  bool update_in_place(const ir::LoadOp& load, const ir::StoreOp& store) const {
    const ir::Access& a = load.src;
    const ir::Access& b = store.dst;
    if (a.tensor != b.tensor || a.indices != b.indices || a.shape != b.shape) return false;
    if (!load.mask.empty() || !store.mask.empty() || load.index_tile >= 0 || store.index_tile >= 0 || store.atomic)
      return false;
    const ir::TensorDecl& t = ir_->tensors[static_cast<std::size_t>(b.tensor)];
    if (t.view_of >= 0 || ir::storage_shape(t) != t.shape) return false;  // no wrapped blocks sharing memory
    std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // (|stride|, extent) of the tile's axes
    const Step placed = store_step(store, storage_strides(store));
    for (std::size_t q = 0; q + 1 < placed.out_dims.size(); ++q) {  // the last is the batch
      const auto& d = placed.out_dims[q];
      if (d.extent > 1) dims.emplace_back(std::abs(static_cast<std::int64_t>(d.stride)), d.extent);
    }
    std::sort(dims.begin(), dims.end());
    std::int64_t span = 1;  // the addresses the smaller-stride axes cover
    for (const auto& [stride, extent] : dims) {
      if (stride < span) return false;
      span = stride * extent;
    }
    return true;
  }

  /**
   * The outermost loop `l` unrolled by the factor (at most its trip count): one loop over
   * groups of `f` iterations whose body is `f` copies, copy u reading the loop variable as
   * group start + u, then a loop over the trip % f remaining iterations running copy 0's
   * code. Iterations keep their order, so results are those of the rolled loop.
   */
  void lower_unrolled_loop(int l) {
    const std::int64_t trip = ir_->loops[static_cast<std::size_t>(l)].trip;
    const std::int64_t f = std::min<std::int64_t>(unroll_, trip);
    const std::size_t head = steps_.size();
    Step loop;
    loop.kind = Step::Kind::loop;
    loop.loop = l;
    loop.stride = f;
    loop.trip = trip / f;
    steps_.push_back(loop);
    std::size_t copy0_begin = 0, copy0_end = 0;
    for (std::int64_t u = 0; u < f; ++u) {
      low_.set_loop_shift(l, static_cast<int>(u));
      const std::size_t first = steps_.size();
      lower_ops(l);
      for (std::size_t s = first; s < steps_.size(); ++s) {
        if (steps_[s].kind != Step::Kind::call && steps_[s].kind != Step::Kind::reg && steps_[s].kind != Step::Kind::scatter)
          continue;  // print reads no index
        steps_[s].shift_loop = l;
        steps_[s].shift = static_cast<int>(u);
      }
      if (u == 0) copy0_begin = first, copy0_end = steps_.size();
    }
    low_.set_loop_shift(l, 0);
    steps_[head].end = steps_.size();
    Step close;
    close.kind = Step::Kind::loop_end;
    steps_.push_back(close);
    if (trip % f == 0) return;
    const std::size_t tail = steps_.size();
    loop.first = trip / f * f;
    loop.stride = 1;
    loop.trip = trip % f;
    steps_.push_back(loop);
    for (std::size_t s = copy0_begin; s < copy0_end; ++s) {  // the same compiled functions, re-walked
      Step c = steps_[s];
      c.shift_loop = -1;
      c.shift = 0;
      if (c.kind == Step::Kind::loop) c.end = c.end - copy0_begin + tail + 1;
      steps_.push_back(c);
    }
    steps_[tail].end = steps_.size();
    steps_.push_back(close);
  }

  /**
   * Tiles computed into scratch at their place in the program: matmul, reduce and transpose
   * results; reads of tensors the kernel writes (a snapshot, so later writes cannot change
   * what was read); tiles used inside a deeper loop than they were made in (computed once,
   * not once per iteration); activations read by several ops and bitwise results read by more
   * than two (computed once).
   */
  std::vector<bool> materialized_tiles(const std::vector<int>& stores) const {
    const ir::KernelIR& k = *ir_;
    std::vector<bool> m(k.tiles.size(), false);
    std::vector<int> made_in(k.tiles.size(), -1);
    const std::vector<int>& uses = reads_;
    for (std::size_t i = 0; i < k.body.size(); ++i) {
      const ir::Op& op = k.body[i];
      if (ir::is_loop_marker(op)) continue;
      const int here = nest_.innermost(i);
      for (int t : ir::tiles_read(op))
        if (made_in[static_cast<std::size_t>(t)] != here) m[static_cast<std::size_t>(t)] = true;
      if (const auto* pr = std::get_if<ir::PrintOp>(&op)) m[static_cast<std::size_t>(pr->tile)] = true;  // printed from scratch
      if (const auto* st = std::get_if<ir::StoreOp>(&op); st && st->index_tile >= 0) {  // scattered from scratch
        m[static_cast<std::size_t>(st->value)] = true;
        m[static_cast<std::size_t>(st->index_tile)] = true;
      }
      const int t = ir::tile_defined(op);
      if (t < 0) continue;
      made_in[static_cast<std::size_t>(t)] = here;
      if (is_materialized_kind(op)) m[static_cast<std::size_t>(t)] = true;
      if (const auto* l = std::get_if<ir::LoadOp>(&op)) {
        const ir::TensorDecl& src = k.tensors[static_cast<std::size_t>(l->src.tensor)];
        if ((stores[static_cast<std::size_t>(l->src.tensor)] > 0 || ir::is_per_instance(src.memory)) &&
            !read_in_place(i, *l))
          m[static_cast<std::size_t>(t)] = true;
      }
    }
    for (std::size_t i = 0; i < k.body.size(); ++i) {
      if (const auto* a = std::get_if<ir::ActivationOp>(&k.body[i]);
          a && a->kind != ir::ActKind::copy && uses[static_cast<std::size_t>(a->result)] > 1)
        m[static_cast<std::size_t>(a->result)] = true;
      // A bitwise result read by several ops (a hash round: the shifts of a rotate, the next
      // round) is computed once: inlined, chains of them grow as (reads)^(depth).
      if (const auto* b = std::get_if<ir::BinaryOp>(&k.body[i]);
          b && ir::is_bitwise(b->kind) && uses[static_cast<std::size_t>(b->result)] > 2)
        m[static_cast<std::size_t>(b->result)] = true;
    }
    return m;
  }

  /** A step computing tile `t` into a new scratch buffer, at the op's place in the program. */
  Step compile_materialized(const ir::Op& op, int t) {
    const ir::TileInfo& ti = ir_->tiles[static_cast<std::size_t>(t)];
    Step step;
    step.scratch = static_cast<int>(scratch_.size());
    scratch_.push_back({ti.shape, value_type(ti.dtype)});
    const std::vector<std::int64_t> strides = row_major_strides(ti.shape);
    for (int q = static_cast<int>(ti.shape.size()) - 1; q >= 0; --q)
      step.out_dims.push_back({static_cast<int32_t>(ti.shape[static_cast<std::size_t>(q)]),
                               static_cast<int32_t>(strides[static_cast<std::size_t>(q)])});
    step.out_dims.push_back({1, static_cast<int32_t>(shape_elements(ti.shape))});  // batch: one instance

    const std::vector<Var> v = low_.vars(ti.shape.size());
    const std::vector<Expr> c = Lowerer::tile_coords(v);
    Func out(fmt::format("m{}", t));
    std::vector<Func> stages;  // computed before the output, in full
    Expr value;
    const ir::Predicate* mask = nullptr;
    Contraction contraction;  // a matmul's accumulator
    if (const auto* mm = std::get_if<ir::MatmulOp>(&op)) {
      value = matmul_value(*mm, v, stages, contraction);
      mask = &mm->mask;
    } else if (const auto* r = std::get_if<ir::ReduceOp>(&op)) {
      value = reduce_value(*r, v, stages);
      mask = &r->mask;
    } else if (const auto* sc = std::get_if<ir::ScanOp>(&op)) {
      value = scan_value(*sc, v, stages);
    } else if (const auto* q = std::get_if<ir::QuantizeMxOp>(&op)) {
      value = quantize_mx_value(*q, v, stages);
    } else if (const auto* mx = std::get_if<ir::MatmulMxOp>(&op)) {
      value = matmul_mx_value(*mx, v, stages);
    } else if (const auto* tr = std::get_if<ir::TransposeOp>(&op)) {
      value = low_.tile(tr->data)(low_.call_args({c[1], c[0]}));
    } else {
      value = low_.elementwise_value(op, c);
      std::visit([&](const auto& o) {
        if constexpr (requires { o.mask; }) mask = &o.mask;
      }, op);
    }
    value = round_value(value, ti.dtype);
    if (mask && !mask->empty()) value = Halide::select(low_.holds(*mask, c), value, Halide::cast(value.type(), 0));
    out(v) = value;
    for (Func& f : stages) f.compute_root();
    const bool blocked = contraction.acc.defined() && schedule_blocked(out, contraction, ti.shape);
    if (contraction.acc.defined() && !blocked) schedule_rows(contraction, ti.shape);
    finish(out, step, ir_->name, fmt::format("tile{}", t), blocked ? -1 : 0);
    return step;
  }

  static constexpr int kBlockRows = 8, kBlockVectors = 2;

  /** Whether a matmul result tile divides into register blocks (schedule_blocked). */
  bool blockable(const Shape& shape) const {
    return shape.size() == 2 && shape[0] % kBlockRows == 0 && shape[1] % (lanes_ * kBlockVectors) == 0;
  }

  /**
   * The register-blocked schedule of a matmul: the output in blocks of kBlockRows rows x
   * kBlockVectors vectors of columns, each block's accumulator computed at the block (so it
   * lives in registers), its update looping k outermost over the unrolled block. The sum per
   * element is still k ascending from 0.0f, one rounding per mul and per add (strict float):
   * only the order of independent elements changes. False when the tile does not divide into blocks.
   */
  bool schedule_blocked(Func& out, Contraction& c, const Shape& shape) {
    if (!blockable(shape)) return false;
    Var no("no"), ni("ni"), mo("mo"), mi("mi");
    in_blocks(out, c, out.args()[0], out.args()[1], out.args()[2], no, mo, ni, mi);
    c.acc.compute_at(out, no);
    return true;
  }

  /**
   * The blocking of schedule_blocked on a stage of the result (its pure definition, or the update
   * of a fused accumulating store) over columns `n`, rows `m` and the batch `j`: blocks of
   * kBlockRows rows x kBlockVectors vectors, unrolled, the block loops `no` then `mo` outside
   * (`mo` then `no` with `columns_outer`). The block's accumulator is made in registers: its rows
   * unrolled, its columns whole vectors, k outermost (the caller computes it at the inner block loop).
   */
  void in_blocks(Halide::Stage stage, Contraction& c, Halide::VarOrRVar n, Halide::VarOrRVar m, Halide::VarOrRVar j,
                 Halide::VarOrRVar no, Halide::VarOrRVar mo, Halide::VarOrRVar ni, Halide::VarOrRVar mi,
                 bool columns_outer = false) const {
    stage.tile(n, m, no, mo, ni, mi, lanes_ * kBlockVectors, kBlockRows);
    if (columns_outer) stage.reorder(ni, mi, mo, no, j);
    else stage.reorder(ni, mi, no, mo, j);
    stage
        .vectorize(ni, lanes_)
        .unroll(ni)
        .unroll(mi);
    const Var an = c.acc.args()[0], am = c.acc.args()[1];
    c.acc.vectorize(an, lanes_).unroll(an).unroll(am);
    c.acc.update().reorder(an, am, c.k.x).vectorize(an, lanes_).unroll(an).unroll(am);
  }

  /**
   * The store right after a matmul that accumulates its result, unmasked, into a whole fp32
   * PSUM tile (NKI's `psum[...] += nl.matmul(...)`), when nothing else reads the result and
   * the result divides into register blocks; else null. Such a pair compiles to one step
   * (compile_matmul_accumulate): each block's sum is added where it is made, instead of the
   * result being written to scratch and read back by the store.
   */
  const ir::StoreOp* sole_accumulating_store(std::size_t i, const ir::MatmulOp& mm) const {
    const ir::KernelIR& k = *ir_;
    if (i + 1 >= k.body.size() || !mm.mask.empty() || mm.transpose) return nullptr;
    const auto* s = std::get_if<ir::StoreOp>(&k.body[i + 1]);
    if (s == nullptr || s->value != mm.result || !s->accumulate || !s->mask.empty() || s->index_tile >= 0 || s->atomic)
      return nullptr;
    const ir::TileInfo& ti = k.tiles[static_cast<std::size_t>(mm.result)];
    const ir::TensorDecl& t = k.tensors[static_cast<std::size_t>(s->dst.tensor)];
    if (ti.dtype != DType::fp32 || t.dtype != DType::fp32 || t.memory != ir::Memory::psum) return nullptr;
    if (s->dst.shape != ti.shape || !blockable(ti.shape)) return nullptr;
    // Each tile element its own PSUM element (rows apart by at least a row), so the vectorized,
    // reordered update reads and writes what the serial store would. Matmul operands are SBUF
    // tiles, never this PSUM tensor, so the operands are read before any of it is written.
    const Step placed = store_step(*s, storage_strides(*s));
    if (placed.out_dims[0].stride != 1 || placed.out_dims[1].stride < placed.out_dims[0].extent) return nullptr;
    return reads_[static_cast<std::size_t>(mm.result)] == 1 ? s : nullptr;
  }

  /** Whether `op` reads or writes tensor `t` (by id: the caller has ruled out views of it). */
  static bool mentions(const ir::Op& op, int t) {
    if (const auto* l = std::get_if<ir::LoadOp>(&op)) return l->src.tensor == t;
    if (const auto* s = std::get_if<ir::StoreOp>(&op)) return s->dst.tensor == t;
    if (const auto* a = std::get_if<ir::AllocOp>(&op)) return a->tensor == t;
    if (const auto* r = std::get_if<ir::RegisterOp>(&op)) return r->mem.tensor == t;
    if (const auto* c = std::get_if<ir::CollectiveOp>(&op))
      return c->metadata == t || std::find(c->srcs.begin(), c->srcs.end(), t) != c->srcs.end() ||
             std::find(c->dsts.begin(), c->dsts.end(), t) != c->dsts.end();
    return false;
  }

  /** Whether `a` is the whole of tensor `t`: tensor dim d at the tile's coordinate d, from 0. */
  static bool whole_tensor(const ir::Access& a, const ir::TensorDecl& t) {
    if (a.shape != t.shape || a.indices.size() != t.shape.size()) return false;
    for (std::size_t d = 0; d < a.indices.size(); ++d) {
      const ir::IndexExpr& e = a.indices[d];
      const bool axis = e.terms.size() == 1 && e.terms[0] == ir::Term{{ir::Sym::Kind::axis, static_cast<int>(d)}, 1};
      if (e.constant != 0 || !(axis || (e.terms.empty() && t.shape[d] == 1))) return false;
    }
    return true;
  }

  /**
   * The fused psum += matmul store (sole_accumulating_store) that can do the zero fill of the
   * tensor allocated at body index `a` itself, adding its sums to 0.0f where it would have read
   * the fill, and the loop in whose first iteration it does so (-1: it runs once per allocation);
   * nullopt if none can. It can when it is the first op to touch the unaliased PSUM tensor after
   * the allocation and writes all of it, directly in the allocation's loop or in a static loop
   * directly inside that loop: then every value it would read in that iteration is the fill.
   * Saves writing the tile and reading it back (bench/README.md, "seventh sitting").
   */
  std::optional<std::pair<std::size_t, int>> fill_taken_by(std::size_t a) const {
    const ir::KernelIR& k = *ir_;
    const int id = std::get<ir::AllocOp>(k.body[a]).tensor;
    const ir::TensorDecl& t = k.tensors[static_cast<std::size_t>(id)];
    if (!t.fill || *t.fill != 0.0 || t.memory != ir::Memory::psum || t.placement.placed || t.view_of >= 0) return std::nullopt;
    for (const ir::TensorDecl& other : k.tensors)
      if (other.id != id && ir::storage_of(k, other.id) == id) return std::nullopt;
    const int level = nest_.innermost(a);
    for (std::size_t i = a + 1; i < k.body.size(); ++i) {
      if (level >= 0 && i >= nest_.end(level)) return std::nullopt;  // the allocation's loop ends untouched
      if (!mentions(k.body[i], id)) continue;
      const auto* s = std::get_if<ir::StoreOp>(&k.body[i]);
      const auto* mm = std::get_if<ir::MatmulOp>(&k.body[i - 1]);
      if (s == nullptr || mm == nullptr || sole_accumulating_store(i - 1, *mm) != s || !whole_tensor(s->dst, t))
        return std::nullopt;
      const int loop = nest_.innermost(i);
      if (loop == level) return std::pair{i, -1};
      const ir::LoopInfo& l = k.loops[static_cast<std::size_t>(loop)];
      if (l.parent != level || ir::is_dynamic(l.kind) || l.trip < 1) return std::nullopt;
      return std::pair{i, loop};
    }
    return std::nullopt;
  }

  /**
   * A matmul and the store accumulating it (sole_accumulating_store) as one step: the store's update
   * over the tile in register blocks, each block's accumulator computed at the block and added to
   * the PSUM values there. The same values as the two steps: the matmul's sum rounded as its
   * result tile, then added to the PSUM value and stored, element by element.
   */
  Step compile_matmul_accumulate(const ir::MatmulOp& mm, const ir::StoreOp& op) {
    const ir::TensorDecl& t = ir_->tensors[static_cast<std::size_t>(op.dst.tensor)];
    const ir::TileInfo& ti = ir_->tiles[static_cast<std::size_t>(mm.result)];
    Step step = store_step(op, storage_strides(op));
    const std::vector<Var> v = low_.vars(2);
    std::vector<Func> stages;
    Contraction c;
    Func product("product");
    // Its NaN as the sum left it: the add below makes its own NaN canonical, and a NaN added to
    // anything is a NaN whatever its payload, so canonical first or not, the stored bits agree.
    product(v) = round_value(matmul_value(mm, v, stages, c, true), ti.dtype);
    for (Func& f : stages) f.compute_root();
    Func out("stored");
    out(v) = Halide::undef(storage_type(t.dtype));
    Halide::RDom r(0, static_cast<int>(ti.shape[1]), 0, static_cast<int>(ti.shape[0]), "w");
    const std::vector<Expr> at{r.x, r.y, v.back()};
    Expr old = f32(load_value(out(at), t.dtype));
    // Where this store does the tensor's zero fill (fill_taken_by), the fill's 0.0f is what it reads.
    const auto fresh = fresh_stores_.find(static_cast<std::size_t>(body_index(op)));
    Expr first;  // true in the iteration that reads the fill
    if (fresh != fresh_stores_.end()) {
      first = fresh->second < 0 ? Halide::Internal::const_true()
                                : low_.index(ir::IndexExpr::symbol({ir::Sym::Kind::loop, fresh->second}), {}) == 0;
      old = Halide::select(first, Expr(0.0f), old);
    }
    out(at) = store_value(binary(ir::BinaryKind::add, old, f32(product(at))), t.dtype);
    Halide::RVar xo("wxo"), xi("wxi"), yo("wyo"), yi("wyi");
    // Column blocks outermost, and the moving operand widened per column block: the block's
    // columns of it (kBlockVectors vectors x K) stay in L1 while every row block reads them,
    // instead of the whole widened tile streaming from L2 for each row block (bench/README.md,
    // "Matmul": 0.89 -> 0.92 of OpenBLAS; the order alone, widened in full, was slower).
    in_blocks(out.update(), c, r.x, r.y, v.back(), xo, yo, xi, yi, true);
    c.acc.compute_at(out, yo);
    c.moving.compute_at(out, xo);
    // That iteration's code reads no PSUM (the select folds away in it); the others' keep the load.
    if (first.defined() && fresh->second >= 0) out.update().specialize(first);
    finish(out, step, ir_->name, "store", -1);
    return step;
  }

  /** The fallback: the accumulator in full, row by row, k inside a row, vectorized along the row. */
  void schedule_rows(Contraction& c, const Shape& shape) {
    const Var n = c.acc.args()[0], m = c.acc.args()[1], j = c.acc.args()[2];
    c.acc.compute_root();
    c.acc.update().reorder(n, c.k.x, m, j);
    if (shape[1] >= lanes_) c.acc.update().vectorize(n, lanes_, Halide::TailStrategy::GuardWithIf);
  }

  /**
   * result[m, n] = sum_k st[k, m] * mv[k, n] in fp32, k ascending; a NaN sum the canonical NaN,
   * unless `any_nan` (for a caller that only adds it to a value and makes that sum canonical).
   */
  Expr matmul_value(const ir::MatmulOp& op, const std::vector<Var>& v, std::vector<Func>& stages, Contraction& contraction,
                    bool any_nan = false) {
    const Shape& st = ir_->tiles[static_cast<std::size_t>(op.stationary)].shape;
    const Var n = v[0], m = v[1], j = v[2];
    Var a("a"), kk("kk");
    Func stf("stationary_f32"), mvf("moving_f32"), acc("acc");
    stf(a, kk, j) = f32(low_.tile(op.stationary)(a, kk, j));  // [K, M]: Halide (m, k)
    mvf(a, kk, j) = f32(low_.tile(op.moving)(a, kk, j));      // [K, N]: Halide (n, k)
    Halide::RDom r(0, static_cast<int>(st[0]), "k");
    // Transpose mode starts from -0.0 and adds only where the moving operand is non-zero, so an
    // identity passes every stationary value through unchanged (-0.0, infinities, NaN).
    acc(n, m, j) = Expr(op.transpose ? -0.0f : 0.0f);
    // One fused multiply-add per product (rounded once), as the interpreter's std::fma. LLVM's
    // fma intrinsic is exact whatever strict_float says, and its per-lane calls vectorize.
    const auto fma = [](Expr x, Expr y, Expr z) {
      return Halide::Internal::Call::make(Halide::Float(32), "llvm.fma.f32", {x, y, z}, Halide::Internal::Call::PureExtern);
    };
    Expr next = fma(stf(m, r, j), mvf(n, r, j), acc(n, m, j));
    if (op.stationary2 >= 0) {  // double_row: the pair's second row at the same k, after the first
      Func stf2("stationary2_f32"), mvf2("moving2_f32");
      stf2(a, kk, j) = f32(low_.tile(op.stationary2)(a, kk, j));
      mvf2(a, kk, j) = f32(low_.tile(op.moving2)(a, kk, j));
      next = fma(stf2(m, r, j), mvf2(n, r, j), next);
      stages.push_back(stf2);
      stages.push_back(mvf2);
    }
    if (op.transpose) next = Halide::select(mvf(n, r, j) != Expr(0.0f), next, acc(n, m, j));
    acc(n, m, j) = next;
    // The operands widened once per matmul, whole vectors at a time (M and N are the inner axes).
    const Shape& res = ir_->tiles[static_cast<std::size_t>(op.result)].shape;
    if (res[0] % lanes_ == 0) stf.vectorize(a, lanes_);
    if (res[1] % lanes_ == 0) mvf.vectorize(a, lanes_);
    stages.push_back(stf);
    stages.push_back(mvf);
    contraction = {acc, r, mvf};
    return any_nan ? acc(n, m, j) : canonical_nan(acc(n, m, j));
  }

  /**
   * quantize_mx: a stage holds each group's largest magnitude (any NaN or infinity makes it
   * infinite); its scale code and the packed codes come from the C++ the interpreter runs.
   */
  Expr quantize_mx_value(const ir::QuantizeMxOp& op, const std::vector<Var>& v, std::vector<Func>& stages) {
    const Var jf = v[0], row = v[1], j = v[2];
    Func x = low_.tile(op.data);
    Func amax("mx_amax");
    Var gf("gf"), g("g");
    Halide::RDom r(0, ir::mx::kPacked, 0, ir::mx::kGroupPartitions, "mx_group");
    Expr a = f32(x(gf * ir::mx::kPacked + r.x, g * ir::mx::kGroupPartitions + r.y, j));
    const Expr inf = Expr(std::numeric_limits<float>::infinity());
    amax(gf, g, j) = Halide::maximum(Halide::select(Halide::is_nan(a) || Halide::is_inf(a), inf, Halide::abs(a)));
    stages.push_back(amax);
    const Expr fmt_arg = Expr(static_cast<int32_t>(op.format));
    const ir::TileInfo& ti = ir_->tiles[static_cast<std::size_t>(op.result)];
    if (op.scale) {
      Expr code = call_extern(Halide::UInt(8), "nki_mx_scale", {fmt_arg, amax(jf, row, j)});
      return ti.dtype == DType::uint8 ? Halide::cast(Halide::Float(32), code) : load_value(code, DType::fp8_e8m0fnu);
    }
    Expr code = call_extern(Halide::UInt(8), "nki_mx_scale", {fmt_arg, amax(jf, row / ir::mx::kGroupPartitions, j)});
    std::vector<Expr> args{fmt_arg, code};
    for (int i = 0; i < ir::mx::kPacked; ++i) args.push_back(f32(x(jf * ir::mx::kPacked + i, row, j)));
    return Halide::cast(Halide::Float(64), call_extern(Halide::UInt(32), "nki_mx_pack", args));
  }

  /** nc_matmul_mx: dequantized operands as stages, then k ascending, the 4 values inner, one fma each. */
  Expr matmul_mx_value(const ir::MatmulMxOp& op, const std::vector<Var>& v, std::vector<Func>& stages) {
    const std::int64_t K = ir_->tiles[static_cast<std::size_t>(op.stationary)].shape[0];
    const Var n = v[0], m = v[1], j = v[2];
    Var i("i"), a("a"), kk("kk");
    auto dequantized = [&](int data, int scale, const char* name) {
      const DType dt = ir_->tiles[static_cast<std::size_t>(data)].dtype;
      const DType sdt = ir_->tiles[static_cast<std::size_t>(scale)].dtype;
      Expr sv = low_.tile(scale)(a, kk / ir::mx::kGroupPartitions, j);
      Expr code = sdt == DType::uint8 ? Halide::cast(Halide::UInt(8), sv)
                                      : call_extern(Halide::UInt(8), "nki_f32_to_fp8", {Expr(fp8_format(sdt)), f32(sv)});
      Expr word = Halide::cast(Halide::UInt(32), low_.tile(data)(a, kk, j));
      Func f(name);
      f(i, a, kk, j) = call_extern(Halide::Float(32), "nki_mx_dequantize",
                                   {Expr(static_cast<int32_t>(dt)), word, Halide::cast(Halide::Int(32), i), code});
      stages.push_back(f);
      return f;
    };
    Func stf = dequantized(op.stationary, op.stationary_scale, "mx_stationary");
    Func mvf = dequantized(op.moving, op.moving_scale, "mx_moving");
    Func acc("mx_acc");
    Halide::RDom r(0, ir::mx::kPacked, 0, static_cast<int>(K), "mx_k");
    acc(n, m, j) = Expr(0.0f);
    acc(n, m, j) = Halide::Internal::Call::make(Halide::Float(32), "llvm.fma.f32",
                                                {stf(r.x, m, r.y, j), mvf(r.x, n, r.y, j), acc(n, m, j)},
                                                Halide::Internal::Call::PureExtern);
    stages.push_back(acc);
    return canonical_nan(acc(n, m, j));
  }

  /**
   * tensor_tensor_scan: an update walking the free axis in order, each element from the
   * one before (fp32 carry, as the interpreter), vectorized across partitions (independent).
   */
  Expr scan_value(const ir::ScanOp& op, const std::vector<Var>& v, std::vector<Func>& stages) {
    const Shape& sh = ir_->tiles[static_cast<std::size_t>(op.result)].shape;  // [P, F]
    const Var f = v[0], p = v[1], j = v[2];
    Func carry("scan");
    Halide::RDom r(0, static_cast<int>(sh[1]), "i");
    carry(f, p, j) = Expr(0.0f);
    Expr a = f32(low_.tile(op.data0)(r.x, p, j));
    Expr b = f32(low_.tile(op.data1)(r.x, p, j));
    Expr init = f32(low_.operand(op.initial, {Expr(p), Expr(0)}));
    Expr prev = Halide::select(r.x == 0, init, carry(Halide::max(r.x - 1, 0), p, j));
    Expr x = op.reverse0 ? binary(op.op0, prev, a) : binary(op.op0, a, prev);
    carry(r.x, p, j) = op.reverse1 ? binary(op.op1, b, x) : binary(op.op1, x, b);
    if (sh[0] % lanes_ == 0) {
      carry.vectorize(p, lanes_);
      carry.update().reorder(p, r.x, j).vectorize(p, lanes_);
    }
    stages.push_back(carry);
    return carry(f, p, j);
  }

  /** A reduction over free axes in row-major order, starting from the first element (as the interpreter). */
  Expr reduce_value(const ir::ReduceOp& op, const std::vector<Var>& v, std::vector<Func>& stages) {
    const Shape& in = ir_->tiles[static_cast<std::size_t>(op.data)].shape;
    const std::vector<Expr> oc = Lowerer::tile_coords(v);
    std::vector<Halide::Range> ranges;  // innermost first: the last reduced axis
    for (auto it = op.axes.rbegin(); it != op.axes.rend(); ++it)
      ranges.emplace_back(0, static_cast<int>(in[static_cast<std::size_t>(*it)]));
    Halide::RDom r(ranges, "r");
    auto input_at = [&](const std::vector<Expr>& red) {  // red: per reduced axis, in op.axes order
      std::vector<Expr> ic;
      std::size_t o = 0, q = 0;
      for (std::size_t d = 0; d < in.size(); ++d) {
        if (q < op.axes.size() && op.axes[q] == static_cast<int>(d)) {
          ic.push_back(red[q++]);
          if (op.keepdims) ++o;
        } else {
          ic.push_back(oc[o++]);
        }
      }
      return f32(low_.tile(op.data)(low_.call_args(ic)));
    };
    std::vector<Expr> first(op.axes.size(), Expr(0)), walk;
    for (std::size_t q = 0; q < op.axes.size(); ++q) walk.push_back(r[static_cast<int>(op.axes.size() - 1 - q)]);
    Expr not_first = Halide::Internal::const_false();
    for (int q = 0; q < r.dimensions(); ++q) not_first = not_first || r[q] != 0;
    r.where(not_first);
    const std::size_t rank = v.size() - 1;
    const Shape out_shape = ir_->tiles[static_cast<std::size_t>(op.result)].shape;
    // One row-major walk folding f(x) into an accumulator that starts from f(first element).
    auto fold = [&](const char* name, ir::BinaryKind combine, const std::function<Expr(Expr)>& f) {
      Func acc(name);
      acc(v) = f(input_at(first));
      acc(v) = binary_raw(combine, acc(v), f(input_at(walk)));
      // Rows are independent and each row's walk is serial: vectorize across a vector of rows (the
      // partition axis), the walk outside it, so no element's order changes but the add latency of
      // one row no longer bounds the loop.
      if (rank >= 1 && out_shape[0] % lanes_ == 0) {
        const Var rows = v[rank - 1];
        std::vector<Halide::VarOrRVar> order{rows};
        for (int q = 0; q < r.dimensions(); ++q) order.emplace_back(r[q]);
        for (std::size_t q = 0; q + 1 < rank; ++q) order.emplace_back(v[q]);
        order.emplace_back(v[rank]);
        acc.vectorize(rows, lanes_);
        acc.update().reorder(order).vectorize(rows, lanes_);
      }
      stages.push_back(acc);
      return acc;
    };
    std::int64_t n = 1;
    for (int a : op.axes) n *= in[static_cast<std::size_t>(a)];
    const Expr count(static_cast<float>(n));
    auto same = [](Expr x) { return x; };
    Expr result;
    switch (op.kind) {
      case ir::ReduceKind::sum: result = fold("acc", ir::BinaryKind::add, same)(v); break;
      case ir::ReduceKind::mean: result = fold("acc", ir::BinaryKind::add, same)(v) / count; break;
      case ir::ReduceKind::max: result = fold("acc", ir::BinaryKind::maximum, same)(v); break;
      case ir::ReduceKind::min: result = fold("acc", ir::BinaryKind::minimum, same)(v); break;
      case ir::ReduceKind::prod: result = fold("acc", ir::BinaryKind::multiply, same)(v); break;
      case ir::ReduceKind::all: {
        // The first element counts by its truth value too (NaN is true).
        auto truth = [](Expr x) { return Halide::select(x != 0.0f || Halide::is_nan(x), Expr(1.0f), Expr(0.0f)); };
        result = fold("acc", ir::BinaryKind::logical_and, truth)(v);
        break;
      }
      case ir::ReduceKind::var: {
        // numpy's two passes, as the interpreter: the mean, then the mean of squared deviations from it.
        Func total = fold("acc", ir::BinaryKind::add, same);
        const Expr mean = total(v) / count;
        Func squares = fold("acc_sq", ir::BinaryKind::add, [&](Expr x) {
          Expr d = x - mean;
          return d * d;
        });
        result = squares(v) / count;
        break;
      }
    }
    return canonical_nan(result);
  }

  /**
   * Whether a plain store's writes may bypass the caches (StepPlan::streaming): into an HBM tensor
   * too large to stay in a host cache (kStreamingBytes), in whole 64-byte lines that start on line
   * boundaries for every instance and loop iteration (x86's streaming stores need aligned
   * vectors; HBM blocks are 64-byte aligned). Proven from the access: the tile's first element,
   * its rows and the batch step are multiples of 64 bytes whatever the program ids and loop
   * variables are. `tstride`: storage_strides(op).
   */
  bool streams(const ir::StoreOp& op, const ir::TensorDecl& t, const std::vector<std::int64_t>& tstride,
               const Step& step) const {
    constexpr std::int64_t kLine = 64;
    const std::int64_t bytes = dtype_bytes(t.dtype);
    if (t.memory != ir::Memory::shared_hbm || t.view_of >= 0 || t.fill) return false;
    if (shape_elements(t.shape) * bytes < kStreamingBytes) return false;
    if (step.out_dims[0].stride != 1 || (step.out_dims[0].extent * bytes) % kLine != 0) return false;
    for (std::size_t q = 1; q < step.out_dims.size(); ++q)
      if ((step.out_dims[q].stride * bytes) % kLine != 0) return false;
    for (std::size_t d = 0; d < op.dst.indices.size(); ++d) {
      const ir::IndexExpr& e = op.dst.indices[d];
      const std::int64_t unit = tstride[d] * bytes;
      if ((e.constant * unit) % kLine != 0) return false;
      for (const ir::Term& term : e.terms) {
        const ir::Sym::Kind k = term.sym.kind;
        if (k == ir::Sym::Kind::axis) continue;  // the tile's own coordinates: the rows checked above
        if (k != ir::Sym::Kind::program_id && k != ir::Sym::Kind::loop && k != ir::Sym::Kind::rank) return false;
        if ((term.coeff * unit) % kLine != 0) return false;
      }
    }
    return true;
  }

  /** The strides of the storage a store writes (OnChipLayout). */
  const std::vector<std::int64_t>& storage_strides(const ir::StoreOp& op) const {
    return low_.layout().strides(op.dst.tensor);
  }

  /**
   * The step of a store, its output placed: where the tile's elements and the instances' tiles
   * land. `tstride`: storage_strides(op).
   */
  Step store_step(const ir::StoreOp& op, const std::vector<std::int64_t>& tstride) const {
    const std::size_t rank = op.dst.shape.size();
    // The view's stride along tile dim q: sum over tensor dims d of stride_d * coeff(axis q in index d).
    Step step;
    step.store = body_index(op);
    for (int q = static_cast<int>(rank) - 1; q >= 0; --q) {
      std::int64_t stride = 0;
      for (std::size_t d = 0; d < op.dst.indices.size(); ++d) {
        const ir::IndexExpr& e = op.dst.indices[d];
        if (!e.shape.empty() && e.shape[static_cast<std::size_t>(q)] > 1)
          stride += tstride[d] * e.coeff_of({ir::Sym::Kind::axis, q});
      }
      step.out_dims.push_back({static_cast<int32_t>(op.dst.shape[static_cast<std::size_t>(q)]), static_cast<int32_t>(stride)});
    }
    // The batch dim: one instance further along the last grid axis moves the store by this much.
    std::int64_t batch_stride = 0;
    for (std::size_t d = 0; d < op.dst.indices.size() && ir_->grid_rank > 0; ++d)
      batch_stride += tstride[d] * op.dst.indices[d].coeff_of({ir::Sym::Kind::program_id, ir_->grid_rank - 1});
    step.out_dims.push_back({1, static_cast<int32_t>(batch_stride)});
    return step;
  }

  Step compile_store(const ir::StoreOp& op) {
    const ir::TensorDecl& t = ir_->tensors[static_cast<std::size_t>(op.dst.tensor)];
    const std::size_t rank = op.dst.shape.size();
    const ir::TileInfo& vi = ir_->tiles[static_cast<std::size_t>(op.value)];
    const std::vector<Var> v = low_.vars(rank);
    const std::vector<Expr> c = Lowerer::tile_coords(v);
    Func out("stored");
    const std::vector<std::int64_t>& tstride = storage_strides(op);
    Step step = store_step(op, tstride);

    auto value_at = [&](const std::vector<Expr>& at) {
      std::vector<Expr> b;
      for (std::size_t d = 0; d < vi.shape.size(); ++d) b.push_back(vi.shape[d] == 1 ? Expr(0) : at[d]);
      return low_.tile(op.value)(low_.call_args(b));
    };
    // A bf16 tile into a bf16 tensor: its values are bf16 already, so only their bits move.
    const auto stored = [&](Expr value) {
      return vi.dtype == DType::bf16 && t.dtype == DType::bf16 ? bf16_bits_of_exact(value) : store_value(value, t.dtype);
    };
    if (op.mask.empty() && !op.accumulate) {
      out(v) = stored(value_at(c));
      step.streaming = streams(op, t, tstride, step);
      finish(out, step, ir_->name, "store", 0);
      return step;
    }
    // Masked or accumulating: the output keeps what is there; an update writes where the mask holds.
    std::vector<Halide::Range> ranges;
    for (std::size_t q = rank; q-- > 0;) ranges.emplace_back(0, static_cast<int>(op.dst.shape[q]));
    Halide::RDom r(ranges, "w");
    std::vector<Expr> rc;  // tile order
    for (std::size_t q = 0; q < rank; ++q) rc.push_back(r[static_cast<int>(rank - 1 - q)]);
    if (!op.mask.empty()) r.where(low_.holds(op.mask, rc));
    out(v) = Halide::undef(storage_type(t.dtype));
    std::vector<Expr> at = low_.call_args(rc);
    at.back() = v.back();
    Expr value = value_at(rc);
    if (op.accumulate) {
      Expr old = f32(load_value(out(at), t.dtype));
      value = binary(ir::BinaryKind::add, old, f32(value));
    }
    out(at) = op.accumulate ? store_value(value, t.dtype) : stored(value);
    finish(out, step, ir_->name, "store", static_cast<int>(rank));
    return step;
  }

  /**
   * Constrains the output to step.out_dims, schedules, compiles, and fills step.fn and
   * step.inputs. `update_dims` > 0: the output is written by an update over that many RVars.
   */
  void finish(Func& out, Step& step, const std::string& kernel, const std::string& what, int update_dims) {
    const std::size_t rank = step.out_dims.size() - 1;
    Halide::OutputImageParam ob = out.output_buffer();
    if (step.streaming) ob.set_host_alignment(64);  // streams() proved it: aligned vector stores
    for (std::size_t q = 0; q < rank; ++q)
      ob.dim(static_cast<int>(q)).set_bounds(0, step.out_dims[q].extent).set_stride(step.out_dims[q].stride);
    ob.dim(static_cast<int>(rank)).set_min(0).set_stride(step.out_dims[rank].stride);

    // Schedule: serial over the tile (parallelism comes from cores), vectorized along the innermost axis.
    // update_dims < 0: the caller scheduled the output.
    if (update_dims == 0) {
      const Var x0 = out.args()[0];
      if (rank >= 2) {  // loop order: tile axis 0, batch, the other tile axes
        std::vector<Halide::VarOrRVar> order{x0, low_.batch()};
        for (std::size_t q = 1; q < rank; ++q) order.emplace_back(out.args()[q]);
        out.reorder(order);
      }
      if (step.out_dims[0].extent >= lanes_ && step.out_dims[0].extent % lanes_ == 0) out.vectorize(x0, lanes_);
    }

    // The buffers this pipeline reads (fused tiles may reach inputs registered for earlier steps).
    std::vector<Halide::Argument> args;
    Halide::Pipeline pipeline(out);
    for (const Halide::Argument& a : pipeline.infer_arguments()) {
      if (!a.is_buffer()) continue;
      bool found = false;
      for (auto& [key, p] : low_.inputs()) {
        if (p.name() != a.name) continue;
        args.emplace_back(p);
        step.inputs.push_back(key);
        found = true;
      }
      if (!found) throw InternalError(fmt::format("{}: pipeline {} reads an unknown buffer {}", kernel, what, a.name));
    }
    for (const auto& p : low_.pids()) args.emplace_back(p);
    args.emplace_back(low_.rank());
    for (const auto& p : low_.loops()) args.emplace_back(p);
    if (args.size() + 1 > kMaxStepArgs) {
      throw UserError("err_too_many_tensors", kernel, {},
                      fmt::format("a step of the kernel reads {} buffers, {} program ids, the rank and {} loop "
                                  "variables; the compiled executor passes at most {} arguments",
                                  step.inputs.size(), low_.pids().size(), low_.loops().size(),
                                  kMaxStepArgs - 1));
    }
    step.function = fmt::format("nki_{}_{}_{}", sanitize(kernel), what, steps_.size());
    modules_.push_back(pipeline.compile_to_module(args, step.function, target_));
  }

  int body_index(const ir::StoreOp& op) const {
    for (std::size_t i = 0; i < ir_->body.size(); ++i)
      if (const auto* s = std::get_if<ir::StoreOp>(&ir_->body[i]); s == &op) return static_cast<int>(i);
    throw InternalError(fmt::format("{}: store not in the kernel body", ir_->name));
  }

  static std::string sanitize(const std::string& s) {
    std::string out;
    for (char ch : s) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    return out;
  }
};

}  // namespace

namespace {
void write_object(const std::string& path, const char* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error(fmt::format("cannot create {}", path));
  const bool ok = std::fwrite(data, 1, size, f) == size;
  if (std::fclose(f) != 0 || !ok) throw std::runtime_error(fmt::format("cannot write {} (disk full?)", path));
}
}  // namespace

KernelPlan build_kernel_object(const ir::KernelIR& ir, const std::vector<std::int64_t>& pid_base,
                               int layer_unroll_factor, const std::string& object_path, std::string* lowered) {
  // Halide's lowering and LLVM share global state: build one kernel at a time.
  static std::mutex build_mutex;
  std::lock_guard lock(build_mutex);
  try {
    KernelBuilder b(ir, pid_base, layer_unroll_factor);
    KernelPlan plan = b.plan();
    Halide::Module m = b.module();
    if (lowered != nullptr) {  // the steps as the executor walks them, then Halide's lowered statements
      std::ostringstream text;
      text << plan_outline(plan) << "\n" << m;
      *lowered = text.str();
    }
    // Compiled in memory and written by us: LLVM aborts the process when its own file output
    // fails (a full disk), where a checked write can report it.
    const std::vector<char> object = compile_with_streaming_stores(m, b.streaming_functions(), "stored");
    write_object(object_path, object.data(), object.size());
    return plan;
  } catch (const Halide::Error& e) {  // a kernel the validator accepted must compile
    throw InternalError(fmt::format("{}: Halide could not compile the kernel: {}", ir.name, e.what()));
  }
}

const std::string& artifact_target_string() {
  static const std::string target = artifact_target().to_string();
  return target;
}

std::string halide_version() {
  return NKI_HALIDE_VERSION;
}

void build_halide_runtime_object(const std::string& object_path) {
  static std::mutex build_mutex;
  std::lock_guard lock(build_mutex);
  Halide::compile_standalone_runtime(object_path, artifact_target());
}

}  // namespace nki
