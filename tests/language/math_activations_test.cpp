/** \file The math and activation functions beyond exp/tanh/...: sin ... softplus, against host float formulas. */
#include "lang_support.h"

namespace nl = nki::language;
using nki::DType;

namespace {

float sigm(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float soft_plus(float x) { return x > 0.0f ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

/** The host's fp32 value of each function, written from its definition (docs/reference.md). */
float host_math(const std::string& name, float x) {
  float r = 0.0f;
  if (name == "sin") r = std::sin(x);
  if (name == "cos") r = std::cos(x);
  if (name == "tan") r = std::tan(x);
  if (name == "arctan") r = std::atan(x);
  if (name == "floor") r = std::floor(x);
  if (name == "ceil") r = std::ceil(x);
  if (name == "trunc") r = std::trunc(x);
  if (name == "sign") r = std::isnan(x) ? x : (x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f));
  if (name == "erf") r = std::erf(x);
  if (name == "erf_dx") r = 1.12837916709551257f * std::exp(-(x * x));
  if (name == "silu") r = x * sigm(x);
  if (name == "silu_dx") r = sigm(x) * (1.0f + x * (1.0f - sigm(x)));
  if (name == "gelu_dx")
    r = 0.5f * (1.0f + std::erf(x * 0.70710678118654752f)) + x * (0.398942280401432678f * std::exp(-0.5f * (x * x)));
  if (name == "gelu_apprx_tanh") r = 0.5f * x * (1.0f + std::tanh(0.797884560802865355f * (x + 0.044715f * (x * x * x))));
  if (name == "gelu_apprx_sigmoid") r = x * sigm(1.702f * x);
  if (name == "gelu_apprx_sigmoid_dx") {
    const float s = sigm(1.702f * x);
    r = s + 1.702f * x * (s * (1.0f - s));
  }
  if (name == "mish") r = x * std::tanh(soft_plus(x));
  if (name == "softplus") r = soft_plus(x);
  return lt::canon(r);
}

std::vector<float> with_specials(std::vector<float> v) {
  const float inf = std::numeric_limits<float>::infinity();
  const float s[] = {0.0f, -0.0f, inf,   -inf, lt::qnan(), 1.0f, -1.0f, 1e-30f, -3.0f, 88.0f, 89.0f,
                     -104.0f, 20.0f, 0.5f, 2.5f, -2.5f, 3.7f, -3.7f, 1e8f, -1e-8f, 1.5707964f, 40.0f};
  for (std::size_t i = 0; i < std::size(s); ++i) v[i * 3] = s[i];
  return v;
}

void math_case(std::initializer_list<std::pair<const char*, nl::unary_fn>> ops) {
  lt::check_unary_ops("math", ops, with_specials(test::random_floats(128 * 24, 95, -6.0f, 6.0f)), host_math);
}

}  // namespace

TEST_CASE("math functions match the host, specials included: sin, cos, tan, arctan") {
  math_case({{"sin", nl::sin}, {"cos", nl::cos}, {"tan", nl::tan}, {"arctan", nl::arctan}});
}
TEST_CASE("math functions match the host, specials included: floor, ceil, trunc, sign") {
  math_case({{"floor", nl::floor}, {"ceil", nl::ceil}, {"trunc", nl::trunc}, {"sign", nl::sign}});
}
TEST_CASE("math functions match the host, specials included: erf, erf_dx, softplus, mish") {
  math_case({{"erf", nl::erf}, {"erf_dx", nl::erf_dx}, {"softplus", nl::softplus}, {"mish", nl::mish}});
}
TEST_CASE("math functions match the host, specials included: silu, silu_dx, gelu_dx") {
  math_case({{"silu", nl::silu}, {"silu_dx", nl::silu_dx}, {"gelu_dx", nl::gelu_dx}});
}
TEST_CASE("math functions match the host, specials included: gelu_apprx_tanh, gelu_apprx_sigmoid, gelu_apprx_sigmoid_dx") {
  math_case({{"gelu_apprx_tanh", nl::gelu_apprx_tanh},
             {"gelu_apprx_sigmoid", nl::gelu_apprx_sigmoid},
             {"gelu_apprx_sigmoid_dx", nl::gelu_apprx_sigmoid_dx}});
}

TEST_CASE("math functions: known values (sign of both zeros, rounding of halves, softplus far out)") {
  // Pinned by hand rather than by a formula, so a wrong formula on both sides still fails.
  CHECK(host_math("sign", -0.0f) == 0.0f);
  CHECK(!std::signbit(nki::ir::apply_activation(nki::ir::ActKind::sign, -0.0f)));
  CHECK(nki::ir::apply_activation(nki::ir::ActKind::sign, -7.5f) == -1.0f);
  CHECK(nki::ir::apply_activation(nki::ir::ActKind::floor, -2.5f) == -3.0f);
  CHECK(nki::ir::apply_activation(nki::ir::ActKind::ceil, -2.5f) == -2.0f);
  CHECK(nki::ir::apply_activation(nki::ir::ActKind::trunc, -2.5f) == -2.0f);
  CHECK(nki::ir::apply_activation(nki::ir::ActKind::softplus, 100.0f) == 100.0f);
  CHECK(nki::ir::apply_activation(nki::ir::ActKind::softplus, -200.0f) == 0.0f);
  CHECK(nki::ir::apply_activation(nki::ir::ActKind::silu, 0.0f) == 0.0f);
  CHECK(nki::ir::apply_activation(nki::ir::ActKind::gelu_dx, 0.0f) == 0.5f);
  CHECK(nki::ir::apply_activation(nki::ir::ActKind::erf_dx, 0.0f) == doctest::Approx(1.1283791670955126));
  CHECK(nki::ir::apply_activation(nki::ir::ActKind::mish, 1.0f) == doctest::Approx(0.8650983882673103).epsilon(1e-6));
  CHECK(nki::ir::apply_activation(nki::ir::ActKind::gelu_apprx_tanh, 1.0f) == doctest::Approx(0.8411919906082768).epsilon(1e-6));
  CHECK(nki::ir::apply_activation(nki::ir::ActKind::gelu_apprx_sigmoid, 1.0f) == doctest::Approx(0.8457957659328212).epsilon(1e-6));
}

TEST_CASE("a math function through isa::activation computes op(data * scale + bias); dtype= rounds once") {
  const nki::Kernel k = nki::jit("math_isa_activation", [](nl::tensor a, nl::tensor b) {
    auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), nl::bfloat16, nl::shared_hbm, "o2");
    auto x = nl::load(a.all());
    auto bias = nl::load(b.all());  // [P, 1]
    nl::store(o1.all(), nki::isa::activation(nl::silu, x, bias, 0.5));
    nl::store(o2.all(), nl::sin(x, {.dtype = nl::bfloat16}));
    return std::make_tuple(o1, o2);
  });
  const std::int64_t p = 64, f = 40;
  auto a = lt::make({p, f}, DType::fp32, test::random_floats(static_cast<std::size_t>(p * f), 96, -5.0f, 5.0f));
  auto b = lt::make({p, 1}, DType::fp32, test::random_floats(static_cast<std::size_t>(p), 97, -1.0f, 1.0f));
  const auto av = a.to_floats(), bv = b.to_floats();
  std::vector<double> w1(av.size()), w2(av.size());
  for (std::int64_t r = 0; r < p; ++r)
    for (std::int64_t c = 0; c < f; ++c) {
      const auto x = static_cast<std::size_t>(r * f + c);
      w1[x] = host_math("silu", lt::fadd(lt::fmul(av[x], 0.5f), bv[static_cast<std::size_t>(r)]));
      w2[x] = lt::rd(host_math("sin", av[x]), DType::bf16);
    }
  lt::check_both(k, lt::no_grid(), {a, b}, {w1, w2}, "math_isa_activation");
}
