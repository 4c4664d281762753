/**
 * \file Instructions that reduce as they go (reduce_res): isa::activation with reduce_op,
 * isa::activation_reduce, isa::tensor_scalar_reduce, isa::exponential. The reduction is over the
 * fp32 results, before they are rounded to the output dtype.
 */
#include <random>

#include "lang_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using lt::rd;
using nki::DType;

namespace {

/** Row-major fp32 sum of a row, from 0 (what the registers do after reset_reduce). */
float row_sum(const std::vector<float>& v) {
  float acc = 0.0f;
  for (float x : v) acc = lt::fadd(acc, x);
  return acc;
}

float f32_exp(float x) { return lt::canon(std::exp(x)); }

}  // namespace

TEST_CASE("isa::activation with reduce_op add sums the fp32 activated values into reduce_res; the output is rounded") {
  // o = exp(x * 0.5 + bias) in dt; s[p] = sum over f of the fp32 values (a [P, 1] SBUF window).
  const nki::Kernel k = nki::jit("activation_sum", [](nl::tensor a, nl::tensor b) {
    auto o = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o");
    auto s = nl::ndarray({a.shape()[0], 1}, nl::float32, nl::shared_hbm, "s");
    auto sums = nl::ndarray({nl::par_dim(a.shape()[0]), 1}, nl::float32, nl::sbuf, "sums");
    auto x = nl::load(a.all());
    auto bias = nl::load(b.all());
    auto e = isa::activation(nl::exp, x, bias, 0.5,
                             {.reduce_op = nl::add, .reduce_res = sums[nl::_, nl::_], .reduce_cmd = isa::reduce_cmd::reset_reduce});
    nl::store(o.all(), e);
    nl::store(s.all(), sums);
    return std::make_tuple(o, s);
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    for (nki::Shape sh : {nki::Shape{128, 64}, nki::Shape{5, 3}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(sh));
      const std::int64_t p = sh[0], f = sh[1];
      auto a = lt::make(sh, dt, test::random_floats(static_cast<std::size_t>(p * f), 301, -3.0f, 3.0f));
      auto b = lt::make({p, 1}, DType::fp32, test::random_floats(static_cast<std::size_t>(p), 302, -1.0f, 1.0f));
      const auto av = a.to_floats(), bv = b.to_floats();
      std::vector<double> wo(static_cast<std::size_t>(p * f)), ws(static_cast<std::size_t>(p));
      for (std::int64_t r = 0; r < p; ++r) {
        std::vector<float> row;
        for (std::int64_t c = 0; c < f; ++c) {
          const float v = f32_exp(lt::fadd(lt::fmul(av[static_cast<std::size_t>(r * f + c)], 0.5f), bv[static_cast<std::size_t>(r)]));
          row.push_back(v);
          wo[static_cast<std::size_t>(r * f + c)] = v;  // rounded to dt by the check
        }
        ws[static_cast<std::size_t>(r)] = row_sum(row);  // the unrounded values
      }
      lt::check_both(k, lt::no_grid(), {a, b}, {wo, ws}, "activation reduce");
    }
  }
}

TEST_CASE("isa::activation_reduce is activation with reset_reduce; a [P] window takes the sum too") {
  const nki::Kernel k = nki::jit("activation_reduce", [](nl::tensor a) {
    const std::int64_t p = a.shape()[0];
    auto o = nl::ndarray(a.shape(), nl::bfloat16, nl::shared_hbm, "o");
    auto s = nl::ndarray({p, 2}, nl::float32, nl::shared_hbm, "s");
    auto sums = nl::ndarray({nl::par_dim(p), 2}, nl::float32, nl::sbuf, "sums");
    auto x = nl::load(a.all());
    nl::store(o.all(), isa::activation_reduce(nl::tanh, x, nl::add, sums[nl::_, 1], 0.25, 1.0, {.dtype = nl::bfloat16}));
    sums[nl::_, 0] = isa::tensor_reduce(nl::add, x, 1);  // the plain sum beside it
    nl::store(s.all(), sums);
    return std::make_tuple(o, s);
  });
  const std::int64_t p = 64, f = 40;
  auto a = lt::make({p, f}, DType::fp32, test::random_floats(static_cast<std::size_t>(p * f), 311, -2.0f, 2.0f));
  const auto av = a.to_floats();
  std::vector<double> wo(static_cast<std::size_t>(p * f)), ws(static_cast<std::size_t>(p * 2));
  for (std::int64_t r = 0; r < p; ++r) {
    std::vector<float> act, raw;
    for (std::int64_t c = 0; c < f; ++c) {
      const float x = av[static_cast<std::size_t>(r * f + c)];
      const float v = lt::canon(std::tanh(lt::fadd(x, 0.25f)));
      act.push_back(v);
      raw.push_back(x);
      wo[static_cast<std::size_t>(r * f + c)] = v;
    }
    float first = raw[0];  // tensor_reduce starts from the first element
    for (std::size_t c = 1; c < raw.size(); ++c) first = lt::fadd(first, raw[c]);
    ws[static_cast<std::size_t>(r * 2)] = first;
    ws[static_cast<std::size_t>(r * 2 + 1)] = row_sum(act);
  }
  lt::check_both(k, lt::no_grid(), {a}, {wo, ws}, "activation_reduce");
}

TEST_CASE("isa::tensor_scalar_reduce: data op0 operand0, and max / min / add of the fp32 results into reduce_res") {
  // o1 = x * 1.0 with its row max; o2 = x - col (bf16 out) with its row min, negated; o3 = x + 2 with its row sum.
  const nki::Kernel k = nki::jit("tensor_scalar_reduce", [](nl::tensor a, nl::tensor colt) {
    const std::int64_t p = a.shape()[0];
    auto o1 = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), nl::bfloat16, nl::shared_hbm, "o2");
    auto o3 = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "o3");
    auto r = nl::ndarray({p, 3}, nl::float32, nl::shared_hbm, "r");
    auto red = nl::ndarray({nl::par_dim(p), 3}, nl::float32, nl::sbuf, "red");
    auto x = nl::load(a.all());
    auto col = nl::load(colt.all());
    nl::store(o1.all(), isa::tensor_scalar_reduce(x, nl::multiply, 1.0, nl::maximum, red[nl::_, nl::ds(0, 1)]));
    nl::store(o2.all(), isa::tensor_scalar_reduce(x, nl::subtract, col, nl::minimum, red[nl::_, nl::ds(1, 1)],
                                                  {.dtype = nl::bfloat16, .reduce_res_negate = true}));
    nl::store(o3.all(), isa::tensor_scalar_reduce(x, nl::add, 2, nl::add, red[nl::_, 2]));
    nl::store(r.all(), red);
    return std::make_tuple(o1, o2, o3, r);
  });
  std::mt19937 rng(321);
  for (int trial = 0; trial < 4; ++trial) {  // random shapes and values
    const std::int64_t p = std::uniform_int_distribution<std::int64_t>(1, 128)(rng);
    const std::int64_t f = std::uniform_int_distribution<std::int64_t>(1, 300)(rng);
    CAPTURE(p);
    CAPTURE(f);
    auto a = lt::make({p, f}, DType::fp32, test::random_floats(static_cast<std::size_t>(p * f), 322 + trial));
    auto colt = lt::make({p, 1}, DType::fp32, test::random_floats(static_cast<std::size_t>(p), 330 + trial));
    const auto av = a.to_floats(), cv = colt.to_floats();
    const auto n = static_cast<std::size_t>(p * f);
    std::vector<double> w1(n), w2(n), w3(n), wr(static_cast<std::size_t>(p * 3));
    for (std::int64_t row = 0; row < p; ++row) {
      float mx = -INFINITY, mn = INFINITY, sum = 0.0f;
      for (std::int64_t c = 0; c < f; ++c) {
        const std::size_t i = static_cast<std::size_t>(row * f + c);
        const float v1 = av[i], v2 = av[i] - cv[static_cast<std::size_t>(row)], v3 = lt::fadd(av[i], 2.0f);
        w1[i] = v1;
        w2[i] = v2;
        w3[i] = v3;
        mx = std::max(mx, v1);
        mn = std::min(mn, v2);  // the fp32 value, not the bf16 output
        sum = lt::fadd(sum, v3);
      }
      wr[static_cast<std::size_t>(row * 3)] = mx;
      wr[static_cast<std::size_t>(row * 3 + 1)] = -mn;
      wr[static_cast<std::size_t>(row * 3 + 2)] = sum;
    }
    lt::check_both(k, lt::no_grid(), {a, colt}, {w1, w2, w3, wr}, "tensor_scalar_reduce");
  }
}

TEST_CASE("isa::exponential: exp(src - max_value) with a scalar or a [P, 1] max, and its row sum") {
  const nki::Kernel k = nki::jit("exponential", [](nl::tensor a, nl::tensor mt) {
    const std::int64_t p = a.shape()[0];
    auto o1 = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), nl::bfloat16, nl::shared_hbm, "o2");
    auto s = nl::ndarray({p, 1}, nl::float32, nl::shared_hbm, "s");
    auto sums = nl::ndarray({nl::par_dim(p), 1}, nl::float32, nl::sbuf, "sums");
    auto x = nl::load(a.all());
    auto m = nl::load(mt.all());
    nl::store(o1.all(), isa::exponential(x, 1.5));
    nl::store(o2.all(), isa::exponential(x, m, {.dtype = nl::bfloat16, .reduce_res = sums[nl::_, nl::_],
                                                .reduce_cmd = isa::reduce_cmd::reset_reduce}));
    nl::store(s.all(), sums);
    return std::make_tuple(o1, o2, s);
  });
  const std::int64_t p = 32, f = 77;
  auto a = lt::make({p, f}, DType::fp32, test::random_floats(static_cast<std::size_t>(p * f), 341, -4.0f, 4.0f));
  auto mt = lt::make({p, 1}, DType::fp32, test::random_floats(static_cast<std::size_t>(p), 342, 0.0f, 4.0f));
  const auto av = a.to_floats(), mv = mt.to_floats();
  const auto n = static_cast<std::size_t>(p * f);
  std::vector<double> w1(n), w2(n), ws(static_cast<std::size_t>(p));
  for (std::int64_t r = 0; r < p; ++r) {
    std::vector<float> row;
    for (std::int64_t c = 0; c < f; ++c) {
      const std::size_t i = static_cast<std::size_t>(r * f + c);
      w1[i] = f32_exp(av[i] - 1.5f);
      const float v = f32_exp(av[i] - mv[static_cast<std::size_t>(r)]);
      w2[i] = v;
      row.push_back(v);
    }
    ws[static_cast<std::size_t>(r)] = row_sum(row);
  }
  lt::check_both(k, lt::no_grid(), {a, mt}, {w1, w2, ws}, "exponential");
}
