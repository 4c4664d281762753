/** \file Unary activations (libm float functions, canonical NaN) and isa::activation(op, data, bias, scale). */
#include "lang_support.h"

namespace nl = nki::language;
using lt::rd;
using nki::DType;

namespace {

/** The host's fp32 activation. */
float host_act(const std::string& name, float x) {
  float r = 0.0f;
  if (name == "exp") r = std::exp(x);
  if (name == "log") r = std::log(x);
  if (name == "tanh") r = std::tanh(x);
  if (name == "sigmoid") r = 1.0f / (1.0f + std::exp(-x));
  if (name == "relu") r = std::isnan(x) ? x : (x > 0.0f ? x : 0.0f);  // max(x, 0): negatives and -0 give +0
  if (name == "gelu") r = x * (0.5f * (1.0f + std::erf(x * 0.70710678118654752f)));
  if (name == "sqrt") r = std::sqrt(x);
  if (name == "rsqrt") r = 1.0f / std::sqrt(x);
  if (name == "reciprocal") r = 1.0f / x;
  if (name == "abs") r = std::fabs(x);
  if (name == "negative") r = -x;
  if (name == "square") r = x * x;
  return lt::canon(r);
}

std::vector<float> with_specials(std::vector<float> v) {
  const float inf = std::numeric_limits<float>::infinity();
  const float s[] = {0.0f, -0.0f, inf, -inf, lt::qnan(), 1.0f, -1.0f, 1e-30f, -3.0f, 88.0f, 89.0f, -104.0f, 20.0f, 0.5f};
  for (std::size_t i = 0; i < std::size(s); ++i) v[i * 3] = s[i];
  return v;
}

}  // namespace

namespace {
void activations_case(std::initializer_list<std::pair<const char*, nl::unary_fn>> ops) {
  lt::check_unary_ops("act", ops, with_specials(test::random_floats(128 * 24, 91, -6.0f, 6.0f)), host_act);
}
}  // namespace

TEST_CASE("unary activations match their host float functions, specials included: exp, log, tanh, sigmoid") {
  activations_case({{"exp", nl::exp}, {"log", nl::log}, {"tanh", nl::tanh}, {"sigmoid", nl::sigmoid}});
}
TEST_CASE("unary activations match their host float functions, specials included: relu, gelu, sqrt, rsqrt") {
  activations_case({{"relu", nl::relu}, {"gelu", nl::gelu}, {"sqrt", nl::sqrt}, {"rsqrt", nl::rsqrt}});
}
TEST_CASE("unary activations match their host float functions, specials included: abs, negative, reciprocal, square") {
  activations_case({{"abs", nl::abs}, {"negative", nl::negative}, {"reciprocal", nl::reciprocal}, {"square", nl::square}});
}

TEST_CASE("an activation with a dtype option rounds once into that dtype") {
  const nki::Kernel k = nki::jit("act_dtype", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::bfloat16, nl::shared_hbm, "out");
    nl::store(out.all(), nl::tanh(nl::load(a.all()), {.dtype = nl::bfloat16}));
    return out;
  });
  auto a = lt::make({64, 40}, DType::fp32, test::random_floats(64 * 40, 92, -3.0f, 3.0f));
  const auto av = a.to_floats();
  std::vector<double> want(av.size());
  for (std::size_t x = 0; x < av.size(); ++x) want[x] = rd(std::tanh(av[x]), DType::bf16);
  lt::check_both(k, lt::no_grid(), {a}, want, "act_dtype");
}

TEST_CASE("isa::activation computes op(data * scale + bias) in fp32 with scalar and [P, 1] bias and scale") {
  // o1: exp(x * 0.5 + (-1)); o2: tanh(x * s_col + b_col); o3: relu(x * 2 + b_col); o4: copy with scale only.
  const nki::Kernel k = nki::jit("isa_activation", [](nl::tensor a, nl::tensor sb) {
    auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o2");
    auto o3 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o3");
    auto o4 = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "o4");
    auto x = nl::load(a.all());
    auto s_col = nl::load(sb[nl::_, nl::ds(0, 1)]);
    auto b_col = nl::load(sb[nl::_, nl::ds(1, 1)]);
    nl::store(o1.all(), nki::isa::activation(nl::exp, x, -1.0, 0.5));
    nl::store(o2.all(), nki::isa::activation(nl::tanh, x, b_col, s_col));
    nl::store(o3.all(), nki::isa::activation(nl::relu, x, b_col, 2.0));
    nl::store(o4.all(), nki::isa::activation(nl::negative, x, 0.0, s_col, {.dtype = nl::float32}));
    return std::make_tuple(o1, o2, o3, o4);
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    for (std::int64_t p : {128, 37}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(p);
      const std::int64_t f = 33;
      auto a = lt::make({p, f}, dt, test::random_floats(static_cast<std::size_t>(p * f), 93, -3.0f, 3.0f));
      auto sb = lt::make({p, 2}, dt, test::random_floats(static_cast<std::size_t>(p * 2), 94, -2.0f, 2.0f));
      const auto av = a.to_floats(), sv = sb.to_floats();
      const auto n = static_cast<std::size_t>(p * f);
      std::vector<double> w1(n), w2(n), w3(n), w4(n);
      for (std::int64_t r = 0; r < p; ++r) {
        const float sc = sv[static_cast<std::size_t>(r * 2)], bi = sv[static_cast<std::size_t>(r * 2 + 1)];
        for (std::int64_t c = 0; c < f; ++c) {
          const auto x = static_cast<std::size_t>(r * f + c);
          w1[x] = host_act("exp", lt::fadd(lt::fmul(av[x], 0.5f), -1.0f));
          w2[x] = host_act("tanh", lt::fadd(lt::fmul(av[x], sc), bi));
          w3[x] = host_act("relu", lt::fadd(lt::fmul(av[x], 2.0f), bi));
          w4[x] = host_act("negative", lt::fadd(lt::fmul(av[x], sc), 0.0f));
        }
      }
      lt::check_both(k, lt::no_grid(), {a, sb}, {w1, w2, w3, w4}, "isa_activation");
    }
  }
}
