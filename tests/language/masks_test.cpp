/**
 * \file Masks on load, store and compute ops; a partial last row tile; rmsnorm with rows not a
 * multiple of 128. Masked-off elements of a result are undefined (NKI does not compute them), so
 * every kernel here stores under the same mask and the rest of the output keeps its fill.
 */
#include "lang_support.h"

namespace nl = nki::language;
using lt::rd;
using nki::DType;

TEST_CASE("a masked load reads only where the mask holds; stored under the same mask, the rest keeps the fill") {
  // mask: p < rows_on & f >= 3 & f != 5
  const nki::Kernel k = nki::jit("masked_load", [](nl::tensor a) {
    auto out = nl::full(a.shape(), -7.0, a.dtype(), nl::shared_hbm, "out");
    auto g = nl::mgrid(a.shape()[0], a.shape()[1]);
    auto on = (g.p < 50) & (g.x >= 3) & (g.x != 5);
    auto x = nl::load(a[g.p, g.x], {.mask = on});
    nl::store(out[g.p, g.x], x, {.mask = on});
    return out;
  });
  for (DType dt : {DType::fp32, DType::bf16, DType::int32}) {
    for (nki::Shape s : {nki::Shape{128, 16}, nki::Shape{64, 7}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const auto n = static_cast<std::size_t>(s[0] * s[1]);
      auto a = lt::make(s, dt, lt::random_ints(n, 51, -100, 100));
      const auto av = a.to_floats();
      std::vector<double> want(n);
      for (std::int64_t p = 0; p < s[0]; ++p)
        for (std::int64_t f = 0; f < s[1]; ++f) {
          const auto x = static_cast<std::size_t>(p * s[1] + f);
          want[x] = (p < 50 && f >= 3 && f != 5) ? av[x] : -7.0;
        }
      lt::check_both(k, lt::no_grid(), {a}, want, "masked_load");
    }
  }
}

TEST_CASE("a masked store leaves the elements where the mask is off as they were") {
  // First store -7 everywhere, then store x only where p >= 10 & f <= p (a lower triangle below row 10).
  const nki::Kernel k = nki::jit("masked_store", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto g = nl::mgrid(a.shape()[0], a.shape()[1]);
    auto x = nl::load(a[g.p, g.x]);
    nl::store(out[g.p, g.x], nl::full_like(x, -7.0).all());
    nl::store(out[g.p, g.x], x, {.mask = (g.p >= 10) & (g.x <= g.p)});
    return out;
  });
  for (DType dt : {DType::fp32, DType::fp16}) {
    for (nki::Shape s : {nki::Shape{128, 128}, nki::Shape{40, 24}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const auto n = static_cast<std::size_t>(s[0] * s[1]);
      auto a = lt::make(s, dt, test::random_floats(n, 52));
      const auto av = a.to_floats();
      std::vector<double> want(n);
      for (std::int64_t p = 0; p < s[0]; ++p)
        for (std::int64_t f = 0; f < s[1]; ++f) {
          const auto x = static_cast<std::size_t>(p * s[1] + f);
          want[x] = (p >= 10 && f <= p) ? av[x] : -7.0;
        }
      lt::check_both(k, lt::no_grid(), {a}, want, "masked_store");
    }
  }
}

TEST_CASE("masked compute ops compute only inside the mask: binary, activation, tensor_scalar, select") {
  const nki::Kernel k = nki::jit("masked_compute", [](nl::tensor a, nl::tensor b) {
    auto o1 = nl::full(a.shape(), -7.0, a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::full(a.shape(), -7.0, a.dtype(), nl::shared_hbm, "o2");
    auto o3 = nl::full(a.shape(), -7.0, a.dtype(), nl::shared_hbm, "o3");
    auto o4 = nl::full(a.shape(), -7.0, a.dtype(), nl::shared_hbm, "o4");
    auto g = nl::mgrid(a.shape()[0], a.shape()[1]);
    auto x = nl::load(a[g.p, g.x]);
    auto y = nl::load(b[g.p, g.x]);
    auto m = (g.x < g.p + 2) & (g.p != 3);
    nl::store(o1[g.p, g.x], nl::add(x, y, {.mask = m}), {.mask = m});
    nl::store(o2[g.p, g.x], nl::exp(x, {.mask = m}), {.mask = m});
    nl::store(o3[g.p, g.x], nki::isa::tensor_scalar(x, nl::multiply, 3.0, nl::add, 1.0, {.mask = m}), {.mask = m});
    nl::store(o4[g.p, g.x], nl::where(nl::greater(x, y), x, y, {.mask = m}), {.mask = m});
    return std::make_tuple(o1, o2, o3, o4);
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    for (nki::Shape s : {nki::Shape{128, 32}, nki::Shape{9, 13}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const auto n = static_cast<std::size_t>(s[0] * s[1]);
      auto a = lt::make(s, dt, test::random_floats(n, 53, -4.0f, 4.0f));
      auto b = lt::make(s, dt, test::random_floats(n, 54, -4.0f, 4.0f));
      const auto av = a.to_floats(), bv = b.to_floats();
      std::vector<double> w1(n), w2(n), w3(n), w4(n);
      for (std::int64_t p = 0; p < s[0]; ++p)
        for (std::int64_t f = 0; f < s[1]; ++f) {
          const auto x = static_cast<std::size_t>(p * s[1] + f);
          const bool on = f < p + 2 && p != 3;
          w1[x] = on ? rd(av[x] + bv[x], dt) : -7.0;
          w2[x] = on ? rd(std::exp(av[x]), dt) : -7.0;
          w3[x] = on ? rd(lt::fadd(lt::fmul(av[x], 3.0f), 1.0f), dt) : -7.0;
          w4[x] = on ? (av[x] > bv[x] ? av[x] : bv[x]) : -7.0;
        }
      lt::check_both(k, lt::no_grid(), {a, b}, {w1, w2, w3, w4}, "masked_compute");
    }
  }
}

TEST_CASE("a partial last row tile: loop-variable masks on load and store") {
  // rows not a multiple of 128: ceil(rows / 128) tiles, the last one masked with i * 128 + p < rows.
  const nki::Kernel k = nki::jit("partial_tile", [](nl::tensor a) {
    const std::int64_t rows = a.shape()[0], f = a.shape()[1];
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(f)[nl::newaxis, nl::_];
    for (auto i : nl::affine_range((rows + 127) / 128)) {
      auto in = i * 128 + ip < rows;
      auto x = nl::load(a[i * 128 + ip, jf], {.mask = in});
      nl::store(out[i * 128 + ip, jf], nl::negative(x) * x, {.mask = in});
    }
    return out;
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    for (std::int64_t rows : {1, 100, 300}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(rows);
      const std::int64_t f = 12;
      auto a = lt::make({rows, f}, dt, test::random_floats(static_cast<std::size_t>(rows * f), 55));
      const auto av = a.to_floats();
      std::vector<double> want(av.size());
      for (std::size_t x = 0; x < av.size(); ++x) want[x] = rd(-av[x] * av[x], dt);
      lt::check_both(k, lt::no_grid(), {a}, want, "partial_tile");
    }
  }
}

namespace {

/** The NKI rmsnorm tutorial kernel: out = a * rsqrt(mean(a^2)) * g, rows in masked tiles of 128. */
nki::Kernel rmsnorm() {
  return nki::jit("rmsnorm", [](nl::tensor a, nl::tensor g) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    const std::int64_t rows = a.shape()[0], d = a.shape()[1];
    auto ix = nl::arange(128)[nl::_, nl::newaxis];
    auto iy = nl::arange(d)[nl::newaxis, nl::_];
    auto g_tile = nl::load(g[0 * ix, iy]);  // g is [1, d]: every partition reads row 0
    for (auto i : nl::affine_range((rows + 127) / 128)) {
      auto in = i * 128 + ix < rows;
      auto a_tile = nl::load(a[i * 128 + ix, iy], {.mask = in});
      auto sq = nl::square(a_tile);
      auto ssum = nl::sum(sq, 1, {.keepdims = true});
      auto mean = ssum / d;
      auto rr = nl::rsqrt(mean);
      auto o = nl::multiply(a_tile, rr);
      auto og = nl::multiply(o, g_tile, {.mask = in});
      nl::store(out[i * 128 + ix, iy], og, {.mask = in});
    }
    return out;
  });
}

}  // namespace

TEST_CASE("rmsnorm with rows not a multiple of 128 matches the host row by row") {
  const nki::Kernel k = rmsnorm();
  for (DType dt : {DType::fp32, DType::bf16}) {
    for (nki::Shape s : {nki::Shape{250, 64}, nki::Shape{77, 100}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const std::int64_t rows = s[0], d = s[1];
      auto a = lt::make(s, dt, test::random_floats(static_cast<std::size_t>(rows * d), 56, -2.0f, 2.0f));
      auto g = lt::make({1, d}, dt, test::random_floats(static_cast<std::size_t>(d), 57, 0.5f, 1.5f));
      const auto av = a.to_floats(), gv = g.to_floats();
      std::vector<double> want(av.size());
      for (std::int64_t r = 0; r < rows; ++r) {
        const float* row = av.data() + r * d;
        float acc = rd(row[0] * row[0], dt);
        for (std::int64_t c = 1; c < d; ++c) acc = lt::fadd(acc, rd(row[c] * row[c], dt));
        const float ssum = rd(acc, dt);
        const float mean = rd(ssum / static_cast<float>(d), dt);
        const float rr = rd(1.0f / std::sqrt(mean), dt);
        for (std::int64_t c = 0; c < d; ++c)
          want[static_cast<std::size_t>(r * d + c)] = rd(rd(row[c] * rr, dt) * gv[static_cast<std::size_t>(c)], dt);
      }
      lt::check_both(k, lt::no_grid(), {a, g}, want, "rmsnorm");
    }
  }
}

TEST_CASE("a masked op written into an on-chip window leaves the window's masked-off elements as they were") {
  // buf[...] = nl::exp(x, mask=m): the op writes buf itself, so buf keeps its fill where m is off (also checked).
  const nki::Kernel k = nki::jit("masked_into_window", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    auto g = nl::mgrid(a.shape()[0], a.shape()[1]);
    auto buf = nl::full({a.shape()[0], a.shape()[1]}, -3.0, nl::float32, nl::sbuf, "buf");
    auto x = nl::load(a[g.p, g.x]);
    buf[g.p, g.x] = nl::exp(x, {.dtype = nl::float32, .mask = (g.x < 4) & (g.p != 1)});
    nl::store(out[g.p, g.x], buf[g.p, g.x]);
    return out;
  });
  for (nki::Shape s : {nki::Shape{128, 8}, nki::Shape{3, 5}}) {
    CAPTURE(nki::shape_str(s));
    const auto n = static_cast<std::size_t>(s[0] * s[1]);
    auto a = lt::make(s, DType::fp32, test::random_floats(n, 58, -3.0f, 3.0f));
    const auto av = a.to_floats();
    std::vector<double> want(n);
    for (std::int64_t p = 0; p < s[0]; ++p)
      for (std::int64_t f = 0; f < s[1]; ++f) {
        const auto x = static_cast<std::size_t>(p * s[1] + f);
        want[x] = (f < 4 && p != 1) ? std::exp(av[x]) : -3.0f;
      }
    const auto got = lt::check_both(k, lt::no_grid(), {a}, want, "masked_into_window");
    nki::LaunchOptions checked;
    checked.checked = true;
    CHECK(test::first_difference(k.launch({}).with(checked).run({a}).outputs[0], got[0]) == -1);
  }
}
