/** \file isa::iota (affine expressions as values), nl::where and isa::affine_select. */
#include "lang_support.h"

namespace nl = nki::language;
using lt::rd;
using nki::DType;

TEST_CASE("isa::iota gives the value of an affine expression of partition, free index and program id") {
  // o = iota(pid * 1000 + p * F - 3 * f + 7, dt) for tiles [P, F].
  for (DType dt : {DType::int32, DType::fp32, DType::int16, DType::bf16, DType::uint8}) {
    CAPTURE(nki::dtype_name(dt));
    const nki::Kernel k = nki::jit("iota", [dt](nl::tensor a) {
      const std::int64_t p = a.shape()[0], f = a.shape()[1];
      auto out = nl::ndarray({nl::num_programs(0) * p, f}, dt, nl::shared_hbm, "out");
      auto g = nl::mgrid(p, f);
      auto v = nki::isa::iota(nl::program_id(0) * 1000 + g.p * f - 3 * g.x + 7, dt);
      CHECK(v.dtype() == dt);
      nl::store(out[nl::program_id(0) * p + g.p, g.x], v);
      return out;
    });
    for (nki::Shape s : {nki::Shape{128, 16}, nki::Shape{10, 3}}) {
      CAPTURE(nki::shape_str(s));
      auto a = lt::make(s, DType::fp32, std::vector<float>(static_cast<std::size_t>(s[0] * s[1]), 0.0f));
      std::vector<double> want(static_cast<std::size_t>(3 * s[0] * s[1]));
      for (std::int64_t pid = 0; pid < 3; ++pid)
        for (std::int64_t p = 0; p < s[0]; ++p)
          for (std::int64_t f = 0; f < s[1]; ++f)
            want[static_cast<std::size_t>((pid * s[0] + p) * s[1] + f)] =
                static_cast<double>(pid * 1000 + p * s[1] - 3 * f + 7);  // rounded / saturated into dt by the check
      lt::check_both(k, lt::grid1(3), {a}, want, "iota");
    }
  }
}

TEST_CASE("nl::where selects elementwise by a tile condition, with tile and scalar branches") {
  // o1 = where(x > y, x, y); o2 = where(x < 0, 0, x) (scalar branch); o3 = where(c, 1.5, -2) (both scalars, bf16 out)
  const nki::Kernel k = nki::jit("where", [](nl::tensor a, nl::tensor b) {
    auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o2");
    auto o3 = nl::ndarray(a.shape(), nl::bfloat16, nl::shared_hbm, "o3");
    auto x = nl::load(a.all());
    auto y = nl::load(b.all());
    nl::store(o1.all(), nl::where(nl::greater(x, y), x, y));
    nl::store(o2.all(), nl::where(nl::less(x, 0.0f), 0.0f, x));
    nl::store(o3.all(), nl::where(nl::copy(y, {.dtype = nl::bool_}), 1.5f, -2, {.dtype = nl::bfloat16}));
    return std::make_tuple(o1, o2, o3);
  });
  for (DType dt : {DType::fp32, DType::bf16, DType::int32}) {
    for (nki::Shape s : {nki::Shape{128, 30}, nki::Shape{6, 6}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const auto n = static_cast<std::size_t>(s[0] * s[1]);
      auto a = lt::make(s, dt, lt::random_ints(n, 131, -9, 9));
      auto b = lt::make(s, dt, lt::random_ints(n, 132, -2, 2));
      const auto av = a.to_floats(), bv = b.to_floats();
      std::vector<double> w1(n), w2(n), w3(n);
      for (std::size_t x = 0; x < n; ++x) {
        w1[x] = av[x] > bv[x] ? av[x] : bv[x];
        w2[x] = av[x] < 0.0f ? 0.0 : av[x];
        w3[x] = bv[x] != 0.0f ? 1.5 : -2.0;
      }
      lt::check_both(k, lt::no_grid(), {a, b}, {w1, w2, w3}, "where");
    }
  }
}

TEST_CASE("isa::affine_select: a causal mask p >= f keeps x, elsewhere a fill value") {
  // o1 = affine_select(i * 128 + p >= f, x, -inf) per row tile i; o2 = affine_select(f - p != 3, x, 9)
  const nki::Kernel k = nki::jit("affine_select", [](nl::tensor a) {
    const std::int64_t rows = a.shape()[0], f = a.shape()[1];
    auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o2");
    auto g = nl::mgrid(128, f);
    for (auto i : nl::affine_range(rows / 128)) {
      auto x = nl::load(a[i * 128 + g.p, g.x]);
      auto causal = nki::isa::affine_select(i * 128 + g.p >= g.x, x, -std::numeric_limits<float>::infinity());
      nl::store(o1[i * 128 + g.p, g.x], causal);
      nl::store(o2[i * 128 + g.p, g.x], nki::isa::affine_select(g.x - g.p != 3, x, 9));
    }
    return std::make_tuple(o1, o2);
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    for (nki::Shape s : {nki::Shape{128, 128}, nki::Shape{256, 40}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const auto n = static_cast<std::size_t>(s[0] * s[1]);
      auto a = lt::make(s, dt, test::random_floats(n, 133));
      const auto av = a.to_floats();
      std::vector<double> w1(n), w2(n);
      for (std::int64_t r = 0; r < s[0]; ++r)
        for (std::int64_t c = 0; c < s[1]; ++c) {
          const auto x = static_cast<std::size_t>(r * s[1] + c);
          w1[x] = r >= c ? av[x] : -std::numeric_limits<double>::infinity();
          w2[x] = c - (r % 128) != 3 ? av[x] : 9.0;
        }
      lt::check_both(k, lt::no_grid(), {a}, {w1, w2}, "affine_select");
    }
  }
}
