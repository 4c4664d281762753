/** \file Reductions sum/max/min/mean over free axes (row-major order from the first element, fp32), tensor_reduce, softmax. */
#include "lang_support.h"

namespace nl = nki::language;
using lt::rd;
using nki::DType;

namespace {

float host_max(float a, float b) { return std::isnan(a) ? a : std::isnan(b) ? b : (a >= b ? a : b); }
float host_min(float a, float b) { return std::isnan(a) ? a : std::isnan(b) ? b : (a <= b ? a : b); }

/** Reduces `v` (row-major, in order) with kind 0 sum, 1 max, 2 min, 3 mean, in fp32 from the first element. */
float host_reduce(int kind, const std::vector<float>& v) {
  float acc = v[0];
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (kind == 0 || kind == 3) acc = lt::fadd(acc, v[i]);
    if (kind == 1) acc = host_max(acc, v[i]);
    if (kind == 2) acc = host_min(acc, v[i]);
  }
  if (kind == 3) acc = acc / static_cast<float>(v.size());
  return lt::canon(acc);
}

}  // namespace

namespace {
void reduce_rows_case(DType dt) {
  const nki::Kernel k = nki::jit("reduce_rows", [](nl::tensor a) {
    const std::int64_t p = a.shape()[0];
    auto o_sum = nl::ndarray({p, 1}, a.dtype(), nl::shared_hbm, "sum");
    auto o_max = nl::ndarray({p, 1}, a.dtype(), nl::shared_hbm, "max");
    auto o_min = nl::ndarray({p, 1}, a.dtype(), nl::shared_hbm, "min");
    auto o_mean = nl::ndarray({p, 1}, a.dtype(), nl::shared_hbm, "mean");
    auto x = nl::load(a.all());
    auto s = nl::sum(x, 1, {.keepdims = true});
    CHECK(s.shape() == nki::Shape{p, 1});
    auto m = nl::max(x, 1);
    CHECK(m.shape() == nki::Shape{p});
    nl::store(o_sum.all(), s);
    nl::store(o_max.all(), nl::copy(nl::max(x, 1, {.keepdims = true})));
    nl::store(o_min.all(), nl::min(x, {1}, {.keepdims = true}));
    nl::store(o_mean.all(), nl::mean(x, 1, {.keepdims = true}));
    return std::make_tuple(o_sum, o_max, o_min, o_mean);
  });
  {
    for (nki::Shape s : {nki::Shape{128, 512}, nki::Shape{5, 1}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      auto vals = test::random_floats(static_cast<std::size_t>(s[0] * s[1]), 81, -10.0f, 10.0f);
      if (s[1] > 2) vals[static_cast<std::size_t>(2 * s[1] + 1)] = lt::qnan();  // row 2 has a NaN: it wins
      vals[0] = -0.0f;
      auto a = lt::make(s, dt, vals);
      const auto av = a.to_floats();
      std::vector<std::vector<double>> want(4, std::vector<double>(static_cast<std::size_t>(s[0])));
      for (std::int64_t r = 0; r < s[0]; ++r) {
        std::vector<float> row(av.begin() + r * s[1], av.begin() + (r + 1) * s[1]);
        for (int kind = 0; kind < 4; ++kind) want[static_cast<std::size_t>(kind)][static_cast<std::size_t>(r)] = host_reduce(kind, row);
      }
      lt::check_both(k, lt::no_grid(), {a}, want, "reduce_rows");
    }
  }
}
}  // namespace

TEST_CASE("sum, max, min and mean over axis 1 with and without keepdims, fp32") { reduce_rows_case(DType::fp32); }
TEST_CASE("sum, max, min and mean over axis 1 with and without keepdims, bf16") { reduce_rows_case(DType::bf16); }
TEST_CASE("sum, max, min and mean over axis 1 with and without keepdims, fp16") { reduce_rows_case(DType::fp16); }

TEST_CASE("reductions of a 3-D tile over axis 1, axis 2 and both, in row-major order") {
  // x [P, A, B]: s12 = sum over (a, b) row-major -> [P, 1, 1]; s2 = max over b -> [P, A]; s1 = sum over a -> [P, B].
  const nki::Kernel k = nki::jit("reduce_3d", [](nl::tensor a) {
    const std::int64_t p = a.shape()[0], aa = a.shape()[1], bb = a.shape()[2];
    auto o12 = nl::ndarray({p, 1, 1}, nl::float32, nl::shared_hbm, "o12");
    auto o2 = nl::ndarray({p, aa}, nl::float32, nl::shared_hbm, "o2");
    auto o1 = nl::ndarray({p, bb}, nl::float32, nl::shared_hbm, "o1");
    auto x = nl::load(a.all());
    nl::store(o12.all(), nl::sum(x, {1, 2}, {.dtype = nl::float32, .keepdims = true}));
    nl::store(o2.all(), nl::max(x, 2, {.dtype = nl::float32}));
    nl::store(o1.all(), nl::sum(x, 1, {.dtype = nl::float32}));
    return std::make_tuple(o12, o2, o1);
  });
  for (DType dt : {DType::bf16, DType::fp32}) {
    CAPTURE(nki::dtype_name(dt));
    const std::int64_t p = 96, aa = 5, bb = 12;
    auto a = lt::make({p, aa, bb}, dt, test::random_floats(static_cast<std::size_t>(p * aa * bb), 82));
    const auto av = a.to_floats();
    std::vector<double> w12(static_cast<std::size_t>(p)), w2(static_cast<std::size_t>(p * aa)), w1(static_cast<std::size_t>(p * bb));
    for (std::int64_t r = 0; r < p; ++r) {
      const float* x = av.data() + r * aa * bb;
      w12[static_cast<std::size_t>(r)] = host_reduce(0, std::vector<float>(x, x + aa * bb));
      for (std::int64_t i = 0; i < aa; ++i)
        w2[static_cast<std::size_t>(r * aa + i)] = host_reduce(1, std::vector<float>(x + i * bb, x + (i + 1) * bb));
      for (std::int64_t j = 0; j < bb; ++j) {
        std::vector<float> col;
        for (std::int64_t i = 0; i < aa; ++i) col.push_back(x[i * bb + j]);
        w1[static_cast<std::size_t>(r * bb + j)] = host_reduce(0, col);
      }
    }
    lt::check_both(k, lt::no_grid(), {a}, {w12, w2, w1}, "reduce_3d");
  }
}

namespace {
void tensor_reduce_case(DType dt) {
  const nki::Kernel k = nki::jit("tensor_reduce", [](nl::tensor a) {
    const std::int64_t p = a.shape()[0];
    auto o = nl::ndarray({p, 3}, a.dtype(), nl::shared_hbm, "o");
    auto x = nl::load(a.all());
    nl::store(o[nl::_, nl::ds(0, 1)], nki::isa::tensor_reduce(x, nl::add, 1, true));
    nl::store(o[nl::_, nl::ds(1, 1)], nki::isa::tensor_reduce(x, nl::maximum, 1, true));
    nl::store(o[nl::_, nl::ds(2, 1)], nki::isa::tensor_reduce(x, nl::minimum, {1}, true));
    return o;
  });
  {
    for (nki::Shape s : {nki::Shape{128, 64}, nki::Shape{30, 7}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      auto a = lt::make(s, dt, test::random_floats(static_cast<std::size_t>(s[0] * s[1]), 83));
      const auto av = a.to_floats();
      std::vector<double> want(static_cast<std::size_t>(s[0] * 3));
      for (std::int64_t r = 0; r < s[0]; ++r) {
        std::vector<float> row(av.begin() + r * s[1], av.begin() + (r + 1) * s[1]);
        for (int kind = 0; kind < 3; ++kind) want[static_cast<std::size_t>(r * 3 + kind)] = host_reduce(kind, row);
      }
      lt::check_both(k, lt::no_grid(), {a}, want, "tensor_reduce");
    }
  }
}
}  // namespace

TEST_CASE("isa::tensor_reduce with add, maximum and minimum equals sum, max and min, fp32") { tensor_reduce_case(DType::fp32); }
TEST_CASE("isa::tensor_reduce with add, maximum and minimum equals sum, max and min, bf16") { tensor_reduce_case(DType::bf16); }

TEST_CASE("a masked reduction computes only the rows its mask holds for") {
  const nki::Kernel k = nki::jit("masked_reduce", [](nl::tensor a) {
    auto o = nl::full({a.shape()[0], 1}, -7.0, nl::float32, nl::shared_hbm, "o");
    auto ip = nl::arange(a.shape()[0])[nl::_, nl::newaxis];
    auto x = nl::load(a.all());
    nl::store(o.all(), nl::sum(x, 1, {.dtype = nl::float32, .mask = ip >= 5, .keepdims = true}), {.mask = ip >= 5});
    return o;
  });
  auto a = lt::make({64, 20}, DType::fp32, test::random_floats(64 * 20, 84));
  const auto av = a.to_floats();
  std::vector<double> want(64);
  for (std::int64_t r = 0; r < 64; ++r)
    want[static_cast<std::size_t>(r)] = r < 5 ? -7.0f : host_reduce(0, std::vector<float>(av.begin() + r * 20, av.begin() + (r + 1) * 20));
  lt::check_both(k, lt::no_grid(), {a}, want, "masked_reduce");
}

namespace {

/** Softmax over rows: max, exp(x - max), sum, divide; rows tiled by 128. */
nki::Kernel softmax() {
  return nki::jit("softmax", [](nl::tensor a) {
    const std::int64_t rows = a.shape()[0], f = a.shape()[1];
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(f)[nl::newaxis, nl::_];
    for (auto i : nl::affine_range(rows / 128)) {
      auto x = nl::load(a[i * 128 + ip, jf]);
      auto m = nl::max(x, 1, {.keepdims = true});
      auto e = nl::exp(nl::subtract(x, m));
      auto s = nl::sum(e, 1, {.keepdims = true});
      nl::store(out[i * 128 + ip, jf], nl::divide(e, s));
    }
    return out;
  });
}

}  // namespace

static void softmax_case(DType dt) {
  const nki::Kernel k = softmax();
  {
    for (nki::Shape s : {nki::Shape{128, 64}, nki::Shape{256, 300}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      auto a = lt::make(s, dt, test::random_floats(static_cast<std::size_t>(s[0] * s[1]), 85, -6.0f, 6.0f));
      const auto av = a.to_floats();
      std::vector<double> want(av.size());
      for (std::int64_t r = 0; r < s[0]; ++r) {
        const float* x = av.data() + r * s[1];
        const float m = rd(host_reduce(1, std::vector<float>(x, x + s[1])), dt);
        std::vector<float> e(static_cast<std::size_t>(s[1]));
        for (std::int64_t c = 0; c < s[1]; ++c) e[static_cast<std::size_t>(c)] = rd(std::exp(rd(x[c] - m, dt)), dt);
        const float sum = rd(host_reduce(0, e), dt);
        for (std::int64_t c = 0; c < s[1]; ++c)
          want[static_cast<std::size_t>(r * s[1] + c)] = rd(e[static_cast<std::size_t>(c)] / sum, dt);
      }
      lt::check_both(k, lt::no_grid(), {a}, want, "softmax");
    }
  }
}

TEST_CASE("softmax over rows (max, exp(x - max), sum, divide) matches the host, fp32") { softmax_case(DType::fp32); }
TEST_CASE("softmax over rows (max, exp(x - max), sum, divide) matches the host, bf16") { softmax_case(DType::bf16); }
