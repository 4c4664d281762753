/** \file Indexing: nl::ds slices, `_` whole dimensions, integer selection, mgrid, strided and transposed index arrays. */
#include "lang_support.h"

namespace nl = nki::language;
using lt::rd;
using nki::DType;

TEST_CASE("nl::ds slices with loop-variable starts read and write sub-windows") {
  // out[r, c] = a[r, c + 8] * 3 for c < 16 (a column window at offset 8), row tiles by a loop.
  const nki::Kernel k = nki::jit("ds_window", [](nl::tensor a) {
    const std::int64_t rows = a.shape()[0];
    auto out = nl::ndarray({rows, 16}, a.dtype(), nl::shared_hbm, "out");
    for (auto i : nl::affine_range(rows / 128)) {
      auto x = nl::load(a[nl::ds(i * 128, 128), nl::ds(8, 16)]);
      nl::store(out[nl::ds(i * 128, 128), nl::_], x * 3);
    }
    return out;
  });
  for (DType dt : {DType::fp32, DType::bf16, DType::fp16}) {
    for (std::int64_t rows : {128, 256}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(rows);
      auto a = lt::make({rows, 40}, dt, test::random_floats(static_cast<std::size_t>(rows * 40), 21));
      const auto av = a.to_floats();
      std::vector<double> want(static_cast<std::size_t>(rows * 16));
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < 16; ++c)
          want[static_cast<std::size_t>(r * 16 + c)] = rd(av[static_cast<std::size_t>(r * 40 + c + 8)] * 3.0f, dt);
      lt::check_both(k, lt::no_grid(), {a}, want, "ds_window");
    }
  }
}

TEST_CASE("an integer subscript selects a plane of a 3-D tensor, slices keep the rest") {
  // a is [B, 128, F]; out[b, p, f] = a[b, p, f] + a[0, p, f] for every plane b (static_range over b).
  const nki::Kernel k = nki::jit("plane_select", [](nl::tensor a) {
    const std::int64_t planes = a.shape()[0];
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto first = nl::load(a[0, nl::_, nl::_]);
    for (std::int64_t b : nl::static_range(planes)) {
      auto x = nl::load(a[b, nl::_, nl::_]);
      nl::store(out[b, nl::_, nl::_], x + first);
    }
    return out;
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    for (nki::Shape s : {nki::Shape{2, 128, 8}, nki::Shape{3, 64, 20}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const auto n = static_cast<std::size_t>(s[0] * s[1] * s[2]);
      auto a = lt::make(s, dt, test::random_floats(n, 22));
      const auto av = a.to_floats();
      const auto plane = static_cast<std::size_t>(s[1] * s[2]);
      std::vector<double> want(n);
      for (std::size_t x = 0; x < n; ++x) want[x] = rd(av[x] + av[x % plane], dt);
      lt::check_both(k, lt::no_grid(), {a}, want, "plane_select");
    }
  }
}

TEST_CASE("a loop variable as an integer subscript walks the planes of a 3-D tensor") {
  const nki::Kernel k = nki::jit("plane_loop", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    auto g = nl::mgrid(a.shape()[1], a.shape()[2]);
    for (auto b : nl::affine_range(a.shape()[0])) {
      auto x = nl::load(a[b, g.p, g.x]);
      nl::store(out[b, g.p, g.x], nl::multiply(x, x, {.dtype = nl::float32}));
    }
    return out;
  });
  for (DType dt : {DType::fp16, DType::fp32}) {
    CAPTURE(nki::dtype_name(dt));
    const nki::Shape s{4, 32, 12};
    auto a = lt::make(s, dt, test::random_floats(4 * 32 * 12, 23));
    const auto av = a.to_floats();
    std::vector<double> want(av.size());
    for (std::size_t x = 0; x < av.size(); ++x) want[x] = av[x] * av[x];
    lt::check_both(k, lt::no_grid(), {a}, want, "plane_loop");
  }
}

TEST_CASE("mgrid indices: offsets, strides and a transposed access") {
  // a is [256, 2F]. out1 = a[128 + p, 2x] (the odd-free strided half of the second row tile),
  // out2[x, p] = a[p, x] for p < 128 and x < 64 (tile axis 0 walks tensor axis 1).
  const nki::Kernel k = nki::jit("mgrid_access", [](nl::tensor a) {
    const std::int64_t f = a.shape()[1] / 2;
    auto out1 = nl::ndarray({128, f}, a.dtype(), nl::shared_hbm, "out1");
    auto out2 = nl::ndarray({64, 128}, a.dtype(), nl::shared_hbm, "out2");
    auto g = nl::mgrid(128, f);
    nl::store(out1[g.p, g.x], nl::load(a[128 + g.p, 2 * g.x + 1]));
    auto h = nl::mgrid(128, 64);
    nl::store(out2[h.x, h.p], nl::load(a[h.p, h.x]));
    return std::make_tuple(out1, out2);
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    for (std::int64_t f : {32, 48}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(f);
      const std::int64_t w = 2 * f;
      auto a = lt::make({256, w}, dt, test::random_floats(static_cast<std::size_t>(256 * w), 24));
      const auto av = a.to_floats();
      std::vector<double> w1(static_cast<std::size_t>(128 * f)), w2(64 * 128);
      for (std::int64_t p = 0; p < 128; ++p)
        for (std::int64_t x = 0; x < f; ++x)
          w1[static_cast<std::size_t>(p * f + x)] = av[static_cast<std::size_t>((128 + p) * w + 2 * x + 1)];
      for (std::int64_t x = 0; x < 64; ++x)
        for (std::int64_t p = 0; p < 128; ++p)
          w2[static_cast<std::size_t>(x * 128 + p)] = av[static_cast<std::size_t>(p * w + x)];
      lt::check_both(k, lt::no_grid(), {a}, {w1, w2}, "mgrid_access");
    }
  }
}

TEST_CASE("the whole tensor as one tile: t.all() and trailing subscripts left out") {
  const nki::Kernel k = nki::jit("whole_tensor", [](nl::tensor a, nl::tensor b) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto x = nl::load(a.all());
    auto y = nl::load(b[nl::_]);  // trailing dimension left out: whole
    nl::store(out.all(), nl::maximum(x, y));
    return out;
  });
  for (DType dt : {DType::fp32, DType::bf16, DType::fp16}) {
    for (nki::Shape s : {nki::Shape{128, 64}, nki::Shape{17, 5}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const auto n = static_cast<std::size_t>(s[0] * s[1]);
      auto a = lt::make(s, dt, test::random_floats(n, 25));
      auto b = lt::make(s, dt, test::random_floats(n, 26));
      const auto av = a.to_floats(), bv = b.to_floats();
      std::vector<double> want(n);
      for (std::size_t x = 0; x < n; ++x) want[x] = av[x] >= bv[x] ? av[x] : bv[x];
      lt::check_both(k, lt::no_grid(), {a, b}, want, "whole_tensor");
    }
  }
}

TEST_CASE("slices of on-chip arrays: a window read and written at a free offset") {
  // buf [128, 2F] in SBUF: left half = x, right half = x * x; store the halves swapped.
  const nki::Kernel k = nki::jit("sbuf_slices", [](nl::tensor a) {
    const std::int64_t f = a.shape()[1];
    auto out = nl::ndarray({128, 2 * f}, a.dtype(), nl::shared_hbm, "out");
    auto buf = nl::ndarray({128, 2 * f}, a.dtype(), nl::sbuf, "buf");
    auto x = nl::load(a.all());
    buf[nl::_, nl::ds(0, f)] = x;
    buf[nl::_, nl::ds(f, f)] = x * x;
    nl::store(out[nl::_, nl::ds(0, f)], buf[nl::_, nl::ds(f, f)]);
    nl::store(out[nl::_, nl::ds(f, f)], buf[nl::_, nl::ds(0, f)]);
    return out;
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    for (std::int64_t f : {8, 33}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(f);
      auto a = lt::make({128, f}, dt, test::random_floats(static_cast<std::size_t>(128 * f), 27));
      const auto av = a.to_floats();
      std::vector<double> want(static_cast<std::size_t>(128 * 2 * f));
      for (std::int64_t p = 0; p < 128; ++p) {
        for (std::int64_t c = 0; c < f; ++c) {
          const float v = av[static_cast<std::size_t>(p * f + c)];
          want[static_cast<std::size_t>(p * 2 * f + c)] = rd(v * v, dt);
          want[static_cast<std::size_t>(p * 2 * f + f + c)] = v;
        }
      }
      lt::check_both(k, lt::no_grid(), {a}, want, "sbuf_slices");
    }
  }
}
