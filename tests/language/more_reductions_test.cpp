/** \file Reductions prod, var, all (axes, keepdims, dtype, mask) and the composites nl::softmax and nl::rms_norm. */
#include "lang_support.h"

namespace nl = nki::language;
using lt::rd;
using nki::DType;

namespace {

/** prod (kind 0), all (1) or var (2) of `v` in row-major order, fp32, from the first element. */
float host_fold(int kind, const std::vector<float>& v) {
  const float n = static_cast<float>(v.size());
  if (kind == 0) {
    float acc = v[0];
    for (std::size_t i = 1; i < v.size(); ++i) acc = lt::fmul(acc, v[i]);
    return lt::canon(acc);
  }
  if (kind == 1) {
    for (float x : v)
      if (x == 0.0f) return 0.0f;  // NaN != 0: true
    return 1.0f;
  }
  float total = v[0];
  for (std::size_t i = 1; i < v.size(); ++i) total = lt::fadd(total, v[i]);
  const float mean = total / n;
  float sq = 0.0f;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const float d = v[i] - mean;
    sq = i == 0 ? lt::fmul(d, d) : lt::fadd(sq, lt::fmul(d, d));
  }
  return lt::canon(sq / n);
}

}  // namespace

TEST_CASE("prod, all and var over axis 1 of a 2-D tile, and over axes 1 and 2 of a 3-D tile") {
  // var keeps the reduced axes whatever keepdims says (NKI); prod and all drop them unless keepdims.
  const nki::Kernel k = nki::jit("more_reduce", [](nl::tensor a, nl::tensor c) {
    const std::int64_t p = a.shape()[0];
    auto o_prod = nl::ndarray({p}, a.dtype(), nl::shared_hbm, "prod");
    auto o_all = nl::ndarray({p, 1}, a.dtype(), nl::shared_hbm, "all");
    auto o_var = nl::ndarray({p, 1}, a.dtype(), nl::shared_hbm, "var");
    auto o_var3 = nl::ndarray({p, 1, 1}, nl::float32, nl::shared_hbm, "var3");
    auto o_prod3 = nl::ndarray({p, c.shape()[1]}, nl::float32, nl::shared_hbm, "prod3");
    auto x = nl::load(a.all());
    auto v = nl::var(x, 1);
    CHECK(v.shape() == nki::Shape{p, 1});
    nl::store(o_prod.all(), nl::prod(x, 1));
    nl::store(o_all.all(), nl::all(x, 1, {.keepdims = true}));
    nl::store(o_var.all(), v);
    auto y = nl::load(c.all());
    nl::store(o_var3.all(), nl::var(y, {1, 2}, {.dtype = nl::float32}));
    nl::store(o_prod3.all(), nl::prod(y, 2, {.dtype = nl::float32}));
    return std::make_tuple(o_prod, o_all, o_var, o_var3, o_prod3);
  });
  for (DType dt : {DType::fp32, DType::bf16, DType::fp16}) {
    CAPTURE(nki::dtype_name(dt));
    const std::int64_t p = 128, f = 20, aa = 3, bb = 7;
    std::vector<float> vals = test::random_floats(static_cast<std::size_t>(p * f), 120, 0.5f, 1.6f);
    for (std::int64_t r = 0; r < p; r += 9) vals[static_cast<std::size_t>(r * f + r % f)] = 0.0f;  // some rows hold a 0
    vals[static_cast<std::size_t>(3 * f + 4)] = lt::qnan();                                    // row 3: NaN (true for all)
    vals[static_cast<std::size_t>(5 * f + 1)] = -std::numeric_limits<float>::infinity();
    auto a = lt::make({p, f}, dt, vals);
    auto c = lt::make({p, aa, bb}, dt, test::random_floats(static_cast<std::size_t>(p * aa * bb), 121, -2.0f, 2.0f));
    const auto av = a.to_floats(), cv = c.to_floats();
    const auto np = static_cast<std::size_t>(p);
    std::vector<double> w_prod(np), w_all(np), w_var(np), w_var3(np), w_prod3(static_cast<std::size_t>(p * aa));
    for (std::int64_t r = 0; r < p; ++r) {
      const std::vector<float> row(av.begin() + r * f, av.begin() + (r + 1) * f);
      w_prod[static_cast<std::size_t>(r)] = host_fold(0, row);
      w_all[static_cast<std::size_t>(r)] = host_fold(1, row);
      w_var[static_cast<std::size_t>(r)] = host_fold(2, row);
      const float* y = cv.data() + r * aa * bb;
      w_var3[static_cast<std::size_t>(r)] = host_fold(2, std::vector<float>(y, y + aa * bb));
      for (std::int64_t i = 0; i < aa; ++i)
        w_prod3[static_cast<std::size_t>(r * aa + i)] = host_fold(0, std::vector<float>(y + i * bb, y + (i + 1) * bb));
    }
    lt::check_both(k, lt::no_grid(), {a, c}, {w_prod, w_all, w_var, w_var3, w_prod3}, "more_reduce");
  }
}

TEST_CASE("var is numpy's population variance; all of a row without zeros is 1 (pinned values)") {
  const nki::Kernel k = nki::jit("pinned_reduce", [](nl::tensor a) {
    auto o = nl::ndarray({a.shape()[0], 3}, nl::float32, nl::shared_hbm, "o");
    auto x = nl::load(a.all());
    nl::store(o[nl::_, nl::ds(0, 1)], nl::var(x, 1, {.dtype = nl::float32}));
    nl::store(o[nl::_, nl::ds(1, 1)], nl::all(x, 1, {.dtype = nl::float32, .keepdims = true}));
    nl::store(o[nl::_, nl::ds(2, 1)], nl::prod(x, 1, {.dtype = nl::float32, .keepdims = true}));
    return o;
  });
  // Row 0: 1 2 3 4 -> var 1.25, all 1, prod 24; row 1: 2 0 -1 5 -> mean 1.5, var 5.25, all 0, prod -0.
  auto a = lt::make({2, 4}, DType::fp32, {1, 2, 3, 4, 2, 0, -1, 5});
  lt::check_both(k, lt::no_grid(), {a}, std::vector<double>{1.25, 1, 24, 5.25, 0, -0.0}, "pinned_reduce");
}

TEST_CASE("a masked prod, var and all give 0 in the masked-off rows") {
  const nki::Kernel k = nki::jit("masked_more_reduce", [](nl::tensor a) {
    auto o = nl::ndarray({a.shape()[0], 3}, nl::float32, nl::shared_hbm, "o");
    auto ip = nl::arange(a.shape()[0])[nl::_, nl::newaxis];
    auto x = nl::load(a.all());
    const nl::reduce_options opt{.dtype = nl::float32, .mask = ip >= 7, .keepdims = true};
    nl::store(o[nl::_, nl::ds(0, 1)], nl::prod(x, 1, opt));
    nl::store(o[nl::_, nl::ds(1, 1)], nl::var(x, 1, opt));
    nl::store(o[nl::_, nl::ds(2, 1)], nl::all(x, 1, opt));
    return o;
  });
  const std::int64_t p = 40, f = 9;
  auto a = lt::make({p, f}, DType::fp32, test::random_floats(static_cast<std::size_t>(p * f), 122, -1.5f, 1.5f));
  const auto av = a.to_floats();
  std::vector<double> want(static_cast<std::size_t>(p * 3));
  for (std::int64_t r = 0; r < p; ++r) {
    const std::vector<float> row(av.begin() + r * f, av.begin() + (r + 1) * f);
    for (int kind = 0; kind < 3; ++kind)
      want[static_cast<std::size_t>(r * 3 + kind)] = r < 7 ? 0.0 : host_fold(kind == 0 ? 0 : kind == 1 ? 2 : 1, row);
  }
  lt::check_both(k, lt::no_grid(), {a}, want, "masked_more_reduce");
}

namespace {

/** Host softmax of one row: max, exp(x - max), sum, divide, in fp32; the result rounded to `dt`. */
void host_softmax(const float* x, std::int64_t n, DType dt, double* out) {
  float m = x[0];
  for (std::int64_t c = 1; c < n; ++c) m = std::isnan(m) ? m : std::isnan(x[c]) ? x[c] : (m >= x[c] ? m : x[c]);
  std::vector<float> e(static_cast<std::size_t>(n));
  for (std::int64_t c = 0; c < n; ++c) e[static_cast<std::size_t>(c)] = std::exp(x[c] - m);
  float s = e[0];
  for (std::int64_t c = 1; c < n; ++c) s = lt::fadd(s, e[static_cast<std::size_t>(c)]);
  for (std::int64_t c = 0; c < n; ++c) out[c] = rd(lt::canon(e[static_cast<std::size_t>(c)] / s), dt);
}

}  // namespace

TEST_CASE("nl::softmax over the last axis (default) and over axis 1 keeps fp32 steps and rounds the result once") {
  const nki::Kernel k = nki::jit("nl_softmax", [](nl::tensor a) {
    auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "o2");
    auto x = nl::load(a.all());
    nl::store(o1.all(), nl::softmax(x));
    nl::store(o2.all(), nl::softmax(x, 1, {.dtype = nl::float32}));
    return std::make_tuple(o1, o2);
  });
  for (DType dt : {DType::fp32, DType::bf16, DType::fp16}) {
    CAPTURE(nki::dtype_name(dt));
    const std::int64_t p = 128, f = 50;
    auto vals = test::random_floats(static_cast<std::size_t>(p * f), 123, -8.0f, 8.0f);
    vals[7] = std::numeric_limits<float>::infinity();  // row 0: inf - inf is NaN
    vals[static_cast<std::size_t>(2 * f + 3)] = 60.0f;  // row 2: one dominant value
    auto a = lt::make({p, f}, dt, vals);
    const auto av = a.to_floats();
    std::vector<double> w1(av.size()), w2(av.size());
    for (std::int64_t r = 0; r < p; ++r) {
      host_softmax(av.data() + r * f, f, dt, w1.data() + r * f);
      host_softmax(av.data() + r * f, f, DType::fp32, w2.data() + r * f);
    }
    lt::check_both(k, lt::no_grid(), {a}, {w1, w2}, "nl_softmax");
  }
}

TEST_CASE("nl::softmax over both free axes of a 3-D tile") {
  const nki::Kernel k = nki::jit("nl_softmax_3d", [](nl::tensor a) {
    auto o = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "o");
    nl::store(o.all(), nl::softmax(nl::load(a.all()), {1, 2}));
    return o;
  });
  const std::int64_t p = 64, aa = 4, bb = 6;
  auto a = lt::make({p, aa, bb}, DType::fp32, test::random_floats(static_cast<std::size_t>(p * aa * bb), 124));
  const auto av = a.to_floats();
  std::vector<double> want(av.size());
  for (std::int64_t r = 0; r < p; ++r) host_softmax(av.data() + r * aa * bb, aa * bb, DType::fp32, want.data() + r * aa * bb);
  lt::check_both(k, lt::no_grid(), {a}, want, "nl_softmax_3d");
}

TEST_CASE("nl::rms_norm is x / sqrt(sum(x^2) / n + epsilon) * w with a [P, F] or [P, 1] weight") {
  const nki::Kernel k = nki::jit("nl_rms_norm", [](nl::tensor a, nl::tensor w) {
    auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "o2");
    auto x = nl::load(a.all());
    auto wt = nl::load(w.all());
    const std::int64_t f = a.shape()[1];
    nl::store(o1.all(), nl::rms_norm(x, wt, 1, f));
    nl::store(o2.all(), nl::rms_norm(x, nl::load(w[nl::_, nl::ds(0, 1)]), 1, 2 * f, {.epsilon = 0.5, .dtype = nl::float32}));
    return std::make_tuple(o1, o2);
  });
  for (DType dt : {DType::fp32, DType::bf16, DType::fp16}) {
    CAPTURE(nki::dtype_name(dt));
    const std::int64_t p = 96, f = 48;
    const auto n = static_cast<std::size_t>(p * f);
    auto vals = test::random_floats(n, 125, -3.0f, 3.0f);
    for (std::int64_t c = 0; c < f; ++c) vals[static_cast<std::size_t>(4 * f + c)] = 0.0f;  // row 4: all zeros
    auto a = lt::make({p, f}, dt, vals);
    auto w = lt::make({p, f}, dt, test::random_floats(n, 126, 0.5f, 1.5f));
    const auto av = a.to_floats(), wv = w.to_floats();
    std::vector<double> w1(n), w2(n);
    auto rms_row = [&](std::int64_t r, float count, float eps) {
      float ss = 0.0f;
      for (std::int64_t c = 0; c < f; ++c) {
        const float x = av[static_cast<std::size_t>(r * f + c)];
        ss = c == 0 ? lt::fmul(x, x) : lt::fadd(ss, lt::fmul(x, x));
      }
      return std::sqrt(lt::fadd(ss / count, eps));
    };
    for (std::int64_t r = 0; r < p; ++r) {
      const float rms1 = rms_row(r, static_cast<float>(f), static_cast<float>(1e-6));
      const float rms2 = rms_row(r, static_cast<float>(2 * f), 0.5f);
      for (std::int64_t c = 0; c < f; ++c) {
        const auto x = static_cast<std::size_t>(r * f + c);
        w1[x] = lt::fmul(av[x] / rms1, wv[x]);
        w2[x] = lt::fmul(av[x] / rms2, wv[static_cast<std::size_t>(r * f)]);
      }
    }
    lt::check_both(k, lt::no_grid(), {a, w}, {w1, w2}, "nl_rms_norm");
  }
}

TEST_CASE("var over the partition axis is err_unsupported_reduction_axis; softmax of a scalar err_scalar_only_operation") {
  const char* kFile = "tests/language/more_reductions_test.cpp";
  static int line = 0;
  auto a = lt::make({16, 8}, DType::fp32, test::random_floats(128, 127));
  const nki::Kernel k1 = nki::jit("var_axis0", [](nl::tensor t) {
    auto out = nl::ndarray({1, 8}, nl::float32, nl::shared_hbm, "out");
    line = __LINE__ + 1;
    nl::store(out.all(), nl::var(nl::load(t.all()), 0));
    return out;
  });
  const std::string msg_k1 = test::user_error_of([&] { k1(a); });
  CHECK(msg_k1 ==
        fmt::format("var_axis0 ({}:{}): err_unsupported_reduction_axis: nl::var over axis 0 of a tile of shape [16,8]: "
                    "axis 0 is the partition dimension; reductions run over free axes (1..1)",
                    kFile, line));
  const nki::Kernel k3 = nki::jit("softmax_scalar", [](nl::tensor t) {
    auto out = nl::ndarray(t.shape(), nl::float32, nl::shared_hbm, "out");
    line = __LINE__ + 1;
    nl::store(out.all(), nl::softmax(2.0));
    return out;
  });
  const std::string msg_k3 = test::user_error_of([&] { k3(a); });
  CHECK(msg_k3 ==
        fmt::format("softmax_scalar ({}:{}): err_scalar_only_operation: nl::softmax: x must be a tile, got a scalar",
                    kFile, line));
}
