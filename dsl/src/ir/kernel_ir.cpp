/** \file Names and fp32 semantics of the IR's enumerations; what each op reads and defines. */
#include "nki/ir/kernel_ir.h"

#include <cmath>
#include <limits>

namespace nki::ir {

const char* memory_name(Memory m) {
  switch (m) {
    case Memory::hbm_input: return "hbm_input";
    case Memory::shared_hbm: return "shared_hbm";
    case Memory::private_hbm: return "private_hbm";
    case Memory::sbuf: return "sbuf";
    case Memory::psum: return "psum";
    case Memory::constant_hbm: return "constant_hbm";
  }
  return "?";
}

const char* engine_name(Engine e) {
  switch (e) {
    case Engine::unknown: return "unknown";
    case Engine::tensor: return "tensor";
    case Engine::vector: return "vector";
    case Engine::scalar: return "scalar";
    case Engine::gpsimd: return "gpsimd";
  }
  return "?";
}

const char* binary_name(BinaryKind k) {
  switch (k) {
    case BinaryKind::add: return "add";
    case BinaryKind::subtract: return "subtract";
    case BinaryKind::multiply: return "multiply";
    case BinaryKind::divide: return "divide";
    case BinaryKind::maximum: return "maximum";
    case BinaryKind::minimum: return "minimum";
    case BinaryKind::power: return "power";
    case BinaryKind::equal: return "equal";
    case BinaryKind::not_equal: return "not_equal";
    case BinaryKind::greater: return "greater";
    case BinaryKind::greater_equal: return "greater_equal";
    case BinaryKind::less: return "less";
    case BinaryKind::less_equal: return "less_equal";
    case BinaryKind::logical_and: return "logical_and";
    case BinaryKind::logical_or: return "logical_or";
  }
  return "?";
}

const char* act_name(ActKind k) {
  switch (k) {
    case ActKind::copy: return "copy";
    case ActKind::exp: return "exp";
    case ActKind::log: return "log";
    case ActKind::tanh: return "tanh";
    case ActKind::sigmoid: return "sigmoid";
    case ActKind::relu: return "relu";
    case ActKind::gelu: return "gelu";
    case ActKind::sqrt: return "sqrt";
    case ActKind::rsqrt: return "rsqrt";
    case ActKind::reciprocal: return "reciprocal";
    case ActKind::abs: return "abs";
    case ActKind::negative: return "negative";
    case ActKind::square: return "square";
  }
  return "?";
}

const char* reduce_name(ReduceKind k) {
  switch (k) {
    case ReduceKind::sum: return "sum";
    case ReduceKind::max: return "max";
    case ReduceKind::min: return "min";
    case ReduceKind::mean: return "mean";
  }
  return "?";
}

const char* loop_kind_name(LoopKind k) { return k == LoopKind::affine ? "affine_range" : "sequential_range"; }

namespace {
float canonical(float r) { return std::isnan(r) ? std::numeric_limits<float>::quiet_NaN() : r; }

float apply_binary_raw(BinaryKind k, float a, float b) {
  switch (k) {
    case BinaryKind::add: return a + b;
    case BinaryKind::subtract: return a - b;
    case BinaryKind::multiply: return a * b;
    case BinaryKind::divide: return a / b;
    // numpy.maximum / numpy.minimum: a NaN operand propagates; otherwise a >= b ? a : b.
    case BinaryKind::maximum: return std::isnan(a) ? a : std::isnan(b) ? b : (a >= b ? a : b);
    case BinaryKind::minimum: return std::isnan(a) ? a : std::isnan(b) ? b : (a <= b ? a : b);
    case BinaryKind::power: return std::pow(a, b);
    case BinaryKind::equal: return a == b ? 1.0f : 0.0f;
    case BinaryKind::not_equal: return a != b ? 1.0f : 0.0f;
    case BinaryKind::greater: return a > b ? 1.0f : 0.0f;
    case BinaryKind::greater_equal: return a >= b ? 1.0f : 0.0f;
    case BinaryKind::less: return a < b ? 1.0f : 0.0f;
    case BinaryKind::less_equal: return a <= b ? 1.0f : 0.0f;
    case BinaryKind::logical_and: return (a != 0.0f && b != 0.0f) ? 1.0f : 0.0f;
    case BinaryKind::logical_or: return (a != 0.0f || b != 0.0f) ? 1.0f : 0.0f;
  }
  return 0.0f;
}
}  // namespace

float apply_binary(BinaryKind k, float a, float b) {
  // IEEE leaves the payload of a NaN result open (and compilers may swap commutative operands):
  // every NaN result is the canonical quiet NaN, so both executors agree bit for bit.
  return canonical(apply_binary_raw(k, a, b));
}

float apply_activation(ActKind k, float x) {
  switch (k) {
    case ActKind::copy: return x;  // data moves as it is (NaN payloads included)
    case ActKind::exp: return canonical(std::exp(x));
    case ActKind::log: return canonical(std::log(x));
    case ActKind::tanh: return canonical(std::tanh(x));
    case ActKind::sigmoid: return canonical(1.0f / (1.0f + std::exp(-x)));
    case ActKind::relu: return canonical(x > 0.0f || std::isnan(x) ? x : 0.0f);  // max(x, 0): +0 for x <= 0
    case ActKind::gelu: {
      // x * Phi(x) with Phi(x) = (1 + erf(x / sqrt 2)) / 2, erf from its std::erf in float.
      const float phi = 0.5f * (1.0f + std::erf(x * 0.70710678118654752f));
      return canonical(x * phi);
    }
    case ActKind::sqrt: return canonical(std::sqrt(x));
    case ActKind::rsqrt: return canonical(1.0f / std::sqrt(x));
    case ActKind::reciprocal: return canonical(1.0f / x);
    case ActKind::abs: return canonical(std::fabs(x));
    case ActKind::negative: return canonical(-x);
    case ActKind::square: return canonical(x * x);
  }
  return x;
}

namespace {
void add_tile(std::vector<int>& out, const Operand& o) {
  if (!o.is_scalar()) out.push_back(o.tile);
}
struct Reads {
  std::vector<int> out;
  void operator()(const LoadOp&) {}
  void operator()(const StoreOp& op) { out.push_back(op.value); }
  void operator()(const AllocOp&) {}
  void operator()(const ActivationOp& op) { add_tile(out, op.data), add_tile(out, op.scale), add_tile(out, op.bias); }
  void operator()(const BinaryOp& op) { add_tile(out, op.lhs), add_tile(out, op.rhs); }
  void operator()(const SelectOp& op) { add_tile(out, op.cond), add_tile(out, op.on_true), add_tile(out, op.on_false); }
  void operator()(const IotaOp&) {}
  void operator()(const ReduceOp& op) { out.push_back(op.data); }
  void operator()(const MatmulOp& op) { out.push_back(op.stationary), out.push_back(op.moving); }
  void operator()(const TransposeOp& op) { out.push_back(op.data); }
  void operator()(const LoopOp&) {}
  void operator()(const LoopEndOp&) {}
  void operator()(const std::monostate&) {}
};
}  // namespace

std::vector<int> tiles_read(const Op& op) {
  Reads r;
  std::visit(r, op);
  return r.out;
}

int tile_defined(const Op& op) {
  return std::visit(
      [](const auto& o) -> int {
        if constexpr (requires { o.result; }) return o.result;
        else return -1;
      },
      op);
}

}  // namespace nki::ir
