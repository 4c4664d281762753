/** \file NKI promotion at kernel level: the result dtype of tile-tile and tile-scalar ops, and its values. */
#include "lang_support.h"

namespace nl = nki::language;
using lt::rd;
using nki::DType;

namespace {

/** out = a + b and a * b, in the promoted dtype (the output takes the tile's dtype). */
nki::Kernel add_mul() {
  return nki::jit("promote_pair", [](nl::tensor a, nl::tensor b) {
    auto s = nl::load(a.all()) + nl::load(b.all());
    auto m = nl::load(a.all()) * nl::load(b.all());
    auto o1 = nl::ndarray(a.shape(), s.dtype(), nl::shared_hbm, "sum");
    auto o2 = nl::ndarray(a.shape(), m.dtype(), nl::shared_hbm, "prod");
    nl::store(o1.all(), s);
    nl::store(o2.all(), m);
    return std::make_tuple(o1, o2);
  });
}

struct Pair {
  DType a, b, want;
};

void pairs_case(std::initializer_list<Pair> pairs) {
  const nki::Kernel k = add_mul();
  for (const Pair& pr : pairs) {
    CAPTURE(nki::dtype_name(pr.a));
    CAPTURE(nki::dtype_name(pr.b));
    CHECK(nki::promote(pr.a, pr.b) == pr.want);
    const nki::Shape s{128, 6};
    const bool small = pr.a == DType::boolean || pr.b == DType::boolean;
    auto a = lt::make(s, pr.a, small ? lt::random_ints(768, 141, 0, 1) : lt::random_ints(768, 141, 0, 11));
    auto b = lt::make(s, pr.b, small ? lt::random_ints(768, 142, 0, 1) : lt::random_ints(768, 142, -5, 11));
    if (pr.a == DType::fp8_e4m3 || pr.b == DType::fp8_e5m2) {  // non-integral values too
      a = lt::make(s, pr.a, test::random_floats(768, 143, -4.0f, 4.0f));
      b = lt::make(s, pr.b, test::random_floats(768, 144, -4.0f, 4.0f));
    }
    const auto av = lt::values_of(a), bv = lt::values_of(b);
    std::vector<double> ws(av.size()), wm(av.size());
    for (std::size_t x = 0; x < av.size(); ++x) {
      ws[x] = lt::fadd(static_cast<float>(av[x]), static_cast<float>(bv[x]));
      wm[x] = lt::fmul(static_cast<float>(av[x]), static_cast<float>(bv[x]));
    }
    const auto outs = lt::check_both(k, lt::no_grid(), {a, b}, {ws, wm}, "promote_pair");
    CHECK(outs[0].dtype() == pr.want);
    CHECK(outs[1].dtype() == pr.want);
  }
}

}  // namespace

TEST_CASE("tile-tile promotion pairs: float pairs, dtype of the result and exact values") {
  pairs_case({{DType::bf16, DType::fp16, DType::fp32},
              {DType::fp16, DType::bf16, DType::fp32},
              {DType::fp8_e4m3, DType::fp8_e5m2, DType::bf16},
              {DType::fp8_e5m2, DType::fp8_e4m3, DType::bf16},
              {DType::fp32, DType::bf16, DType::fp32},
              {DType::bf16, DType::bf16, DType::bf16},
              {DType::fp8_e4m3, DType::fp16, DType::fp16}});
}

TEST_CASE("tile-tile promotion pairs: integer, bool and mixed pairs, dtype of the result and exact values") {
  pairs_case({{DType::fp32, DType::int32, DType::fp32},
              {DType::bf16, DType::int8, DType::bf16},
              {DType::int32, DType::uint8, DType::int32},
              {DType::uint8, DType::int8, DType::int16},
              {DType::uint8, DType::uint16, DType::uint16},
              {DType::int8, DType::int16, DType::int16},
              {DType::boolean, DType::int8, DType::int8},
              {DType::boolean, DType::boolean, DType::boolean}});
}

TEST_CASE("tile-scalar promotion: weakly typed scalars keep the tile type, a float scalar makes ints fp32") {
  // s1 = x + 2 (int scalar), s2 = x * 0.5 (float scalar)
  const nki::Kernel k = nki::jit("promote_scalar", [](nl::tensor a) {
    auto s1 = nl::load(a.all()) + 2;
    auto s2 = nl::load(a.all()) * 0.5f;
    auto o1 = nl::ndarray(a.shape(), s1.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), s2.dtype(), nl::shared_hbm, "o2");
    nl::store(o1.all(), s1);
    nl::store(o2.all(), s2);
    return std::make_tuple(o1, o2);
  });
  struct Case {
    DType t, int_result, float_result;
  };
  for (Case c : {Case{DType::int32, DType::int32, DType::fp32}, Case{DType::uint8, DType::uint8, DType::fp32},
                 Case{DType::boolean, DType::int32, DType::fp32}, Case{DType::bf16, DType::bf16, DType::bf16},
                 Case{DType::fp8_e4m3, DType::fp8_e4m3, DType::fp8_e4m3}, Case{DType::int8, DType::int8, DType::fp32}}) {
    CAPTURE(nki::dtype_name(c.t));
    CHECK(nki::promote_scalar(c.t, false) == c.int_result);
    CHECK(nki::promote_scalar(c.t, true) == c.float_result);
    auto a = lt::make({64, 5}, c.t, c.t == DType::boolean ? lt::random_ints(320, 145, 0, 1) : lt::random_ints(320, 145, 0, 15));
    const auto av = lt::values_of(a);
    std::vector<double> w1(av.size()), w2(av.size());
    for (std::size_t x = 0; x < av.size(); ++x) {
      w1[x] = static_cast<float>(av[x]) + 2.0f;
      w2[x] = static_cast<float>(av[x]) * 0.5f;
    }
    const auto outs = lt::check_both(k, lt::no_grid(), {a}, {w1, w2}, "promote_scalar");
    CHECK(outs[0].dtype() == c.int_result);
    CHECK(outs[1].dtype() == c.float_result);
  }
}

TEST_CASE("integer results are computed in fp32 and rounded to nearest even, saturating") {
  // int8 tiles: (x * y) saturates to [-128, 127]; int32 x / 2 rounds half to even (5 / 2 -> 2, 7 / 2 -> 4).
  const nki::Kernel k = nki::jit("int_rounding", [](nl::tensor a, nl::tensor b) {
    auto o1 = nl::ndarray(a.shape(), nl::int8, nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), nl::int32, nl::shared_hbm, "o2");
    auto x = nl::load(a.all());
    nl::store(o1.all(), nl::load(a.all()) * nl::load(b.all()));
    nl::store(o2.all(), nl::divide(x, 2, {.dtype = nl::int32}));
    return std::make_tuple(o1, o2);
  });
  auto a = lt::make({32, 8}, DType::int8, lt::random_ints(256, 146, -100, 100));
  auto b = lt::make({32, 8}, DType::int8, lt::random_ints(256, 147, -5, 5));
  const auto av = lt::values_of(a), bv = lt::values_of(b);
  std::vector<double> w1(av.size()), w2(av.size());
  for (std::size_t x = 0; x < av.size(); ++x) {
    w1[x] = std::clamp(av[x] * bv[x], -128.0, 127.0);
    w2[x] = std::nearbyint(av[x] / 2.0);  // default rounding mode: nearest even
  }
  lt::check_both(k, lt::no_grid(), {a, b}, {w1, w2}, "int_rounding");
}
