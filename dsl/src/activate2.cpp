/**
 * \file isa::activate2 traced as its stages: the tensor-scalar ops (fp32 binary ops), the
 * activation, and the optional reduction. The activation is the Scalar-engine instruction; the
 * tensor-scalar ops and the reduction are marked fused into it, so the cost model charges one
 * instruction.
 */
#include <fmt/format.h>

#include "nki/isa_activate2.h"
#include "nki/language.h"
#include "nki/trace.h"

namespace nki::isa {

namespace {

using K = ir::BinaryKind;

/** Marks the op that just made `r` as running on the Scalar engine, fused (or not) into the instruction. */
nl::tile on_scalar(Trace& t, const nl::tile& r, bool fused = true) {
  if (t.ir().body.empty() || ir::tile_defined(t.ir().body.back()) != r.id()) return r;
  std::visit(
      [&](auto& o) {
        if constexpr (requires { o.engine; }) o.engine = ir::Engine::scalar;
        if constexpr (requires { o.fused; }) o.fused = fused;
      },
      t.ir().body.back());
  return r;
}

const char* alu_name(const std::optional<nl::binary_fn>& op) { return op ? ir::binary_name(op->kind) : "bypass"; }

/** The six (op0, op1) pairs of the tensor-scalar stage. */
bool supported_pair(const std::optional<nl::binary_fn>& op0, const std::optional<nl::binary_fn>& op1) {
  if (!op0) return !op1;
  if (op0->kind == K::multiply) return !op1 || op1->kind == K::add || op1->kind == K::subtract;
  return (op0->kind == K::add || op0->kind == K::subtract) && !op1;
}

/** imm is a scalar or a [P, 1] tile. */
void check_imm(Trace& t, const nl::operand& imm, std::int64_t partitions, const char* role, const SourceLoc& loc) {
  if (imm.is_scalar()) return;
  const Shape& s = tile_info(t, imm.tile_id).shape;
  if (s[0] != partitions) {
    t.fail("err_num_partition_mismatch", loc,
           fmt::format("isa::activate2: {} {} has {} partitions; the data has {}", role, shape_str(s), s[0], partitions));
  }
  if (shape_elements(s) != partitions) {
    t.fail("err_free_dim_mismatch", loc,
           fmt::format("isa::activate2: {} is a scalar or a [{}, 1] tile, got {}", role, partitions, shape_str(s)));
  }
}

/** One tensor-scalar step in fp32: x op imm, or imm op x when reversed. */
nl::tile step(Trace& t, const nl::binary_fn& op, const nl::operand& x, const nl::operand& imm, bool reverse,
              const std::source_location& sl) {
  const nl::op_options fp32{.dtype = DType::fp32};
  return on_scalar(t, reverse ? op(imm, x, fp32, sl) : op(x, imm, fp32, sl));
}

}  // namespace

nl::tile activate2(const nl::unary_fn& op, const nl::operand& data, const nl::operand& imm0, const nl::operand& imm1,
                   const std::optional<nl::binary_fn>& op0_arg, const std::optional<nl::binary_fn>& op1_arg,
                   const activate2_options& o, std::source_location sl) {
  Trace& t = Trace::current("activate2", sl);
  // nl::bypass and std::nullopt both switch a stage off.
  const auto stage = [](const std::optional<nl::binary_fn>& f) {
    return f && f->kind == ir::BinaryKind::bypass ? std::nullopt : f;
  };
  const std::optional<nl::binary_fn> op0 = stage(op0_arg), op1 = stage(op1_arg);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* name = "isa::activate2";
  if (data.is_scalar()) t.fail("err_scalar_only_operation", loc, "isa::activate2 needs a tile operand, got a scalar");
  const ir::TileInfo d = tile_info(t, data.tile_id);  // a copy: tracing adds tiles
  const std::int64_t p = d.shape[0];
  const DType out = o.dtype.value_or(d.dtype);
  if (op1 && !op0) {
    t.fail("err_unsupported_alu_op", loc,
           fmt::format("{}: op1 {} needs op0: with op0 bypass the tensor-scalar stage is off", name, alu_name(op1)));
  }
  if ((o.reverse0 && !op0) || (o.reverse1 && !op1)) {
    t.fail("err_unsupported_alu_op", loc,
           fmt::format("{}: reverse{} needs op{} set; it is bypass", name, o.reverse0 && !op0 ? 0 : 1,
                       o.reverse0 && !op0 ? 0 : 1));
  }
  if (!supported_pair(op0, op1)) {
    t.fail("err_unsupported_alu_op", loc,
           fmt::format("{}: op0 {} with op1 {}; the pairs are (multiply, add), (multiply, subtract), (multiply, "
                       "bypass), (add, bypass), (subtract, bypass) and (bypass, bypass)",
                       name, alu_name(op0), alu_name(op1)));
  }
  check_imm(t, imm0, p, "imm0", loc);
  check_imm(t, imm1, p, "imm1", loc);
  check_imm(t, o.relu_param, p, "relu_param", loc);
  if (!imm0.is_scalar() && !imm1.is_scalar()) {
    const DType a = tile_info(t, imm0.tile_id).dtype;
    const DType b = tile_info(t, imm1.tile_id).dtype;
    if (a != b) {
      t.fail("err_unsupported_dtype", loc,
             fmt::format("{}: imm0 is {} and imm1 {}; tiles of immediates have one dtype", name, dtype_name(a),
                         dtype_name(b)));
    }
  }
  const bool param = !o.relu_param.is_scalar() || o.relu_param.scalar != 0.0;
  if (param && op.kind != ir::ActKind::relu) {
    t.fail("err_unsupported_activation", loc,
           fmt::format("{}: relu_param is the slope of nl::relu below zero; {} takes no parameter", name,
                       ir::act_name(op.kind)));
  }
  const bool reduces = o.reduce_op || o.reduce_res;
  if (o.reduce_res && !o.reduce_op) {
    t.fail("err_invalid_reduce_res", loc, fmt::format("{}: reduce_res without reduce_op: nothing to reduce", name));
  }
  if (o.reduce_op) {
    const K k = o.reduce_op->kind;
    if (k != K::add && k != K::maximum && k != K::minimum && k != K::abs_max && k != K::abs_min) {
      t.fail("err_unsupported_reduction_op", loc,
             fmt::format("{} reduces with add, maximum, minimum, abs_max or abs_min; got reduce_op {}", name,
                         ir::binary_name(k)));
    }
    if (o.reduce_cmd != reduce_cmd::reset_reduce) {
      t.fail("err_unsupported_reduce_cmd", loc,
             fmt::format("{} with reduce_op: only reduce_cmd reset_reduce (registers reset, this instruction's values "
                         "reduced) is supported; state kept across instructions is not",
                         name));
    }
  } else if (o.reduce_cmd != reduce_cmd::idle) {
    t.fail("err_unsupported_reduce_cmd", loc,
           fmt::format("{}: a reduce_cmd other than idle needs reduce_op and reduce_res", name));
  }

  // Stage 1: (data op0 imm0) op1 imm1 in fp32, each step rounded to fp32 as the engine does.
  nl::operand x = data;
  if (op0) x = step(t, *op0, x, imm0, o.reverse0, sl);
  if (op1) x = step(t, *op1, x, imm1, o.reverse1, sl);
  // Stage 2: the activation, the instruction itself (fp32 when a reduction reads it).
  const DType act_dtype = reduces ? DType::fp32 : out;
  nl::tile f = param ? on_scalar(t, nl::prelu(x, o.relu_param, {.dtype = act_dtype}, sl), false)
                     : activation(op, x, 0.0, 1.0, {.dtype = act_dtype}, sl);
  if (!reduces) return f;
  // Stage 3: the reduction of the fp32 activated values into reduce_res.
  if (o.reduce_res) {
    const K k = o.reduce_op->kind;
    const nl::reduce_options r{.dtype = DType::fp32, .keepdims = true};
    nl::tile src = f;
    if (k == K::abs_max || k == K::abs_min) src = on_scalar(t, nl::abs(f, {.dtype = DType::fp32}, sl));
    nl::axes free(1);  // every free axis: one value per partition
    for (int a = 2; a < static_cast<int>(d.shape.size()); ++a) free.list.push_back(a);
    nl::tile red = k == K::add                          ? nl::sum(src, free, r, sl)
                   : k == K::maximum || k == K::abs_max ? nl::max(src, free, r, sl)
                                                        : nl::min(src, free, r, sl);
    on_scalar(t, red);
    nl::access w = *o.reduce_res;
    w = red;
  }
  if (out == DType::fp32) return f;
  return on_scalar(t, nl::copy(f, {.dtype = out}, sl));
}

}  // namespace nki::isa
