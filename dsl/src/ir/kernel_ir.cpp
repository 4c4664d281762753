/** \file Names and fp32 semantics of the IR's enumerations; what each op reads and defines. */
#include "nki/ir/kernel_ir.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdint>
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
    case BinaryKind::logical_xor: return "logical_xor";
    case BinaryKind::bitwise_and: return "bitwise_and";
    case BinaryKind::bitwise_or: return "bitwise_or";
    case BinaryKind::bitwise_xor: return "bitwise_xor";
    case BinaryKind::left_shift: return "left_shift";
    case BinaryKind::right_shift: return "right_shift";
    case BinaryKind::abs_max: return "abs_max";
    case BinaryKind::abs_min: return "abs_min";
    case BinaryKind::fmod: return "fmod";
    case BinaryKind::mod: return "mod";
    case BinaryKind::prelu: return "prelu";
    case BinaryKind::average: return "average";
    case BinaryKind::bypass: return "bypass";
  }
  return "?";
}

bool is_bitwise(BinaryKind k) {
  return k == BinaryKind::bitwise_and || k == BinaryKind::bitwise_or || k == BinaryKind::bitwise_xor ||
         k == BinaryKind::left_shift || k == BinaryKind::right_shift;
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
    case ActKind::sin: return "sin";
    case ActKind::cos: return "cos";
    case ActKind::tan: return "tan";
    case ActKind::arctan: return "arctan";
    case ActKind::floor: return "floor";
    case ActKind::ceil: return "ceil";
    case ActKind::trunc: return "trunc";
    case ActKind::sign: return "sign";
    case ActKind::erf: return "erf";
    case ActKind::erf_dx: return "erf_dx";
    case ActKind::silu: return "silu";
    case ActKind::silu_dx: return "silu_dx";
    case ActKind::gelu_dx: return "gelu_dx";
    case ActKind::gelu_apprx_tanh: return "gelu_apprx_tanh";
    case ActKind::gelu_apprx_sigmoid: return "gelu_apprx_sigmoid";
    case ActKind::gelu_apprx_sigmoid_dx: return "gelu_apprx_sigmoid_dx";
    case ActKind::mish: return "mish";
    case ActKind::softplus: return "softplus";
  }
  return "?";
}

const char* reduce_name(ReduceKind k) {
  switch (k) {
    case ReduceKind::sum: return "sum";
    case ReduceKind::max: return "max";
    case ReduceKind::min: return "min";
    case ReduceKind::mean: return "mean";
    case ReduceKind::prod: return "prod";
    case ReduceKind::var: return "var";
    case ReduceKind::all: return "all";
  }
  return "?";
}

const char* loop_kind_name(LoopKind k) {
  switch (k) {
    case LoopKind::affine: return "affine_range";
    case LoopKind::sequential: return "sequential_range";
    case LoopKind::dynamic: return "dynamic_range";
    case LoopKind::while_loop: return "while_loop";
  }
  return "?";
}

namespace {
float canonical(float r) { return std::isnan(r) ? std::numeric_limits<float>::quiet_NaN() : r; }
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
/** log(1 + e^x) without overflow: x + log1p(e^-x) for x > 0. */
float softplus(float x) { return x > 0.0f ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

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
    case BinaryKind::logical_xor: return ((a != 0.0f) != (b != 0.0f)) ? 1.0f : 0.0f;
    case BinaryKind::bitwise_and:
    case BinaryKind::bitwise_or:
    case BinaryKind::bitwise_xor:
    case BinaryKind::left_shift:
    case BinaryKind::right_shift: return static_cast<float>(apply_bitwise(k, DType::int32, a, b));
    // A NaN operand gives NaN (as maximum does); otherwise the larger (smaller) magnitude, rhs on a tie.
    case BinaryKind::abs_max: return std::isnan(a) || std::isnan(b) ? a + b : (std::fabs(a) > std::fabs(b) ? a : b);
    case BinaryKind::abs_min: return std::isnan(a) || std::isnan(b) ? a + b : (std::fabs(a) < std::fabs(b) ? a : b);
    case BinaryKind::fmod: return std::fmod(a, b);
    case BinaryKind::mod: {
      // numpy's float remainder: fmod, moved into rhs's sign; a zero remainder takes rhs's sign.
      float r = std::fmod(a, b);
      if (b == 0.0f) return r;
      if (r != 0.0f) {
        if ((b < 0.0f) != (r < 0.0f)) r += b;
      } else {
        r = std::copysign(0.0f, b);
      }
      return r;
    }
    case BinaryKind::prelu: return a > 0.0f ? a : a * b;
    case BinaryKind::average: return (a + b) * 0.5f;
    case BinaryKind::bypass: return a;
  }
  return 0.0f;
}

/** `v` (an integer value) wrapped into the two's complement range of the integer type `t`. */
std::int64_t wrap(std::int64_t v, DType t) {
  const int bits = dtype_bytes(t) * 8;
  const std::uint64_t mask = bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
  const std::uint64_t u = static_cast<std::uint64_t>(v) & mask;
  if (!is_signed_integer(t) || bits >= 64) return static_cast<std::int64_t>(u);
  const std::uint64_t sign = 1ULL << (bits - 1);
  return static_cast<std::int64_t>(u ^ sign) - static_cast<std::int64_t>(sign);
}
}  // namespace

double apply_bitwise(BinaryKind k, DType t, double a, double b) {
  // Operands are integers (the language refuses float ones); a NaN or fraction cannot reach here.
  const std::int64_t x = wrap(static_cast<std::int64_t>(a), t);
  const std::int64_t y = wrap(static_cast<std::int64_t>(b), t);
  const std::int64_t bits = dtype_bytes(t) * 8;
  std::int64_t r = 0;
  switch (k) {
    case BinaryKind::bitwise_and: r = x & y; break;
    case BinaryKind::bitwise_or: r = x | y; break;
    case BinaryKind::bitwise_xor: r = x ^ y; break;
    // numpy: a count outside [0, bits) shifts every bit out.
    case BinaryKind::left_shift:
      r = (y >= 0 && y < bits) ? static_cast<std::int64_t>(static_cast<std::uint64_t>(x) << y) : 0;
      break;
    case BinaryKind::right_shift: r = (y >= 0 && y < bits) ? x >> y : (x < 0 ? -1 : 0); break;
    default: return 0.0;
  }
  return static_cast<double>(wrap(r, t));
}

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
    case ActKind::sin: return canonical(std::sin(x));
    case ActKind::cos: return canonical(std::cos(x));
    case ActKind::tan: return canonical(std::tan(x));
    case ActKind::arctan: return canonical(std::atan(x));
    case ActKind::floor: return canonical(std::floor(x));
    case ActKind::ceil: return canonical(std::ceil(x));
    case ActKind::trunc: return canonical(std::trunc(x));
    // numpy.sign: -1, +0 (for both zeros), 1; NaN stays NaN.
    case ActKind::sign: return canonical(x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x == 0.0f ? 0.0f : x);
    case ActKind::erf: return canonical(std::erf(x));
    case ActKind::erf_dx: return canonical(1.12837916709551257f * std::exp(-(x * x)));  // 2 / sqrt(pi) * e^(-x^2)
    case ActKind::silu: return canonical(x * sigmoid(x));
    case ActKind::silu_dx: {
      const float s = sigmoid(x);
      return canonical(s * (1.0f + x * (1.0f - s)));
    }
    case ActKind::gelu_dx: {
      // Phi(x) + x * phi(x): the normal CDF plus x times its density e^(-x^2/2) / sqrt(2 pi).
      const float cdf = 0.5f * (1.0f + std::erf(x * 0.70710678118654752f));
      const float pdf = 0.398942280401432678f * std::exp(-0.5f * (x * x));
      return canonical(cdf + x * pdf);
    }
    case ActKind::gelu_apprx_tanh: {
      const float inner = 0.797884560802865355f * (x + 0.044715f * (x * x * x));  // sqrt(2 / pi) (x + 0.044715 x^3)
      return canonical(0.5f * x * (1.0f + std::tanh(inner)));
    }
    case ActKind::gelu_apprx_sigmoid: return canonical(x * sigmoid(1.702f * x));
    case ActKind::gelu_apprx_sigmoid_dx: {
      const float s = sigmoid(1.702f * x);
      return canonical(s + 1.702f * x * (s * (1.0f - s)));
    }
    case ActKind::mish: return canonical(x * std::tanh(softplus(x)));
    case ActKind::softplus: return canonical(softplus(x));
  }
  return x;
}

namespace {
void add_tile(std::vector<int>& out, const Operand& o) {
  if (!o.is_scalar()) out.push_back(o.tile);
}
struct Reads {
  std::vector<int> out;
  void operator()(const LoadOp& op) {
    if (op.index_tile >= 0) out.push_back(op.index_tile);
  }
  void operator()(const StoreOp& op) {
    out.push_back(op.value);
    if (op.index_tile >= 0) out.push_back(op.index_tile);
  }
  void operator()(const AllocOp&) {}
  void operator()(const ActivationOp& op) { add_tile(out, op.data), add_tile(out, op.scale), add_tile(out, op.bias); }
  void operator()(const BinaryOp& op) { add_tile(out, op.lhs), add_tile(out, op.rhs); }
  void operator()(const SelectOp& op) { add_tile(out, op.cond), add_tile(out, op.on_true), add_tile(out, op.on_false); }
  void operator()(const IotaOp&) {}
  void operator()(const ReduceOp& op) { out.push_back(op.data); }
  void operator()(const MatmulOp& op) {
    out.push_back(op.stationary), out.push_back(op.moving);
    if (op.stationary2 >= 0) out.push_back(op.stationary2), out.push_back(op.moving2);
  }
  void operator()(const TransposeOp& op) { out.push_back(op.data); }
  void operator()(const ScanOp& op) { out.push_back(op.data0), out.push_back(op.data1), add_tile(out, op.initial); }
  void operator()(const ViewOp& op) { out.push_back(op.data); }
  void operator()(const RegisterOp&) {}
  void operator()(const PrintOp& op) { out.push_back(op.tile); }
  void operator()(const QuantizeMxOp& op) { out.push_back(op.data); }
  void operator()(const MatmulMxOp& op) {
    out.push_back(op.stationary), out.push_back(op.moving), out.push_back(op.stationary_scale),
        out.push_back(op.moving_scale);
  }
  void operator()(const GatherOp& op) {
    out.push_back(op.data);
    if (op.indices >= 0) out.push_back(op.indices);
    add_tile(out, op.fallback);
  }
  void operator()(const CollectiveOp&) {}
  void operator()(const LoopOp&) {}
  void operator()(const LoopEndOp&) {}
  void operator()(const std::monostate&) {}
};
}  // namespace

const char* collective_name(CollectiveOp::Kind k) {
  switch (k) {
    case CollectiveOp::Kind::all_reduce: return "all_reduce";
    case CollectiveOp::Kind::all_gather: return "all_gather";
    case CollectiveOp::Kind::reduce_scatter: return "reduce_scatter";
    case CollectiveOp::Kind::all_to_all: return "all_to_all";
    case CollectiveOp::Kind::permute: return "collective_permute";
    case CollectiveOp::Kind::permute_implicit: return "collective_permute_implicit";
    case CollectiveOp::Kind::permute_implicit_reduce: return "collective_permute_implicit_reduce";
    case CollectiveOp::Kind::all_gather_v: return "all_gather_v";
    case CollectiveOp::Kind::all_to_all_v: return "all_to_all_v";
    case CollectiveOp::Kind::core_barrier: return "core_barrier";
    case CollectiveOp::Kind::sendrecv: return "sendrecv";
  }
  return "?";
}

const char* dge_mode_name(DgeMode m) {
  switch (m) {
    case DgeMode::unknown: return "unknown";
    case DgeMode::swdge: return "swdge";
    case DgeMode::hwdge: return "hwdge";
    case DgeMode::none: return "none";
  }
  return "?";
}

std::string gather_out_of_bound_message(const GatherOp& op, std::int64_t index, std::int64_t limit) {
  return fmt::format("{}: index {} is outside [0, {}), the elements of a partition of the data (oob_mode.error; "
                     "oob_mode.skip leaves such elements unchanged)",
                     op.label, index, limit);
}

std::string indirect_out_of_bound_message(const std::string& name, int dim, std::int64_t index, std::int64_t limit) {
  return fmt::format("an indirect access of tensor {} takes index {} on dimension {}, outside [0, {}) (oob_mode.error; "
                     "oob_mode.skip skips such rows)",
                     name, index, dim, limit);
}

std::string scatter_duplicate_message(const TensorDecl& t, const std::vector<std::int64_t>& idx, std::int64_t first,
                                      std::int64_t second) {
  return fmt::format("partitions {} and {} of one scatter both write element [{}] of tensor {} {}: the last partition's "
                     "value stays; give each partition its own row, or use nl::atomic_rmw to accumulate",
                     first, second, fmt::join(idx, ","), t.name, shape_str(t.shape));
}

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
