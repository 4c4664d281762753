/** \file Allocation: ndarray, zeros, ones, full and *_like in sbuf, psum, private_hbm and shared_hbm. */
#include "lang_support.h"

namespace nl = nki::language;
using lt::rd;
using nki::DType;

namespace {
/** Three outputs: zeros, ones and full(5 + 2/3) of dtype dt, stored as they are. */
void fills_case(std::initializer_list<DType> dtypes) {
  for (DType dt : dtypes) {
    CAPTURE(nki::dtype_name(dt));
    const nki::Kernel k = nki::jit("fills", [dt](nl::tensor a) {
      const std::int64_t p = a.shape()[0], f = a.shape()[1];
      auto o0 = nl::ndarray({p, f}, dt, nl::shared_hbm, "o0");
      auto o1 = nl::ndarray({p, f}, dt, nl::shared_hbm, "o1");
      auto o2 = nl::ndarray({p, f}, dt, nl::shared_hbm, "o2");
      auto z = nl::zeros({p, f}, dt, nl::sbuf, "z");
      auto o = nl::ones({p, f}, dt, nl::sbuf, "o");
      auto v = nl::full({p, f}, 2.0 / 3.0 + 5.0, dt, nl::sbuf, "v");
      nl::store(o0.all(), z.all());
      nl::store(o1.all(), o.all());
      nl::store(o2.all(), v.all());
      return std::make_tuple(o0, o1, o2);
    });
    for (nki::Shape s : {nki::Shape{128, 8}, nki::Shape{5, 3}}) {
      CAPTURE(nki::shape_str(s));
      auto a = lt::make(s, DType::fp32, std::vector<float>(static_cast<std::size_t>(s[0] * s[1]), 0.0f));
      const auto n = static_cast<std::size_t>(s[0] * s[1]);
      lt::check_both(k, lt::no_grid(), {a},
                     {std::vector<double>(n, 0.0), std::vector<double>(n, 1.0),
                      std::vector<double>(n, nki::round_to_dtype(2.0 / 3.0 + 5.0, dt))},
                     "fills");
    }
  }
}
}  // namespace

TEST_CASE("zeros, ones and full in SBUF start with their value rounded to the dtype, fp32") { fills_case({DType::fp32}); }
TEST_CASE("zeros, ones and full in SBUF start with their value rounded to the dtype, bf16") { fills_case({DType::bf16}); }
TEST_CASE("zeros, ones and full in SBUF start with their value rounded to the dtype, fp16") { fills_case({DType::fp16}); }
TEST_CASE("zeros, ones and full in SBUF start with their value rounded to the dtype, int32") { fills_case({DType::int32}); }
TEST_CASE("zeros, ones and full in SBUF start with their value rounded to the dtype, uint8") { fills_case({DType::uint8}); }
TEST_CASE("zeros, ones and full in SBUF start with their value rounded to the dtype, fp8_e4m3") {
  fills_case({DType::fp8_e4m3});
}

namespace {
void likes_case(std::initializer_list<DType> dtypes) {
  const nki::Kernel k = nki::jit("likes", [](nl::tensor a) {
    auto x = nl::load(a.all());
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto z = nl::zeros_like(x);
    auto o = nl::ones_like(x);
    auto v = nl::full_like(x, -1.75);
    auto w = nl::ndarray_like(x);
    w[nl::_, nl::_] = x;
    // out = ((w + z) * o) - v  =  x + 1.75, each op rounded to the dtype
    nl::store(out.all(), (w.all() + z.all()) * o.all() - v.all());
    return out;
  });
  for (DType dt : dtypes) {
    for (nki::Shape s : {nki::Shape{128, 32}, nki::Shape{7, 9}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const auto n = static_cast<std::size_t>(s[0] * s[1]);
      auto a = lt::make(s, dt, test::random_floats(n, 41));
      const auto av = a.to_floats();
      std::vector<double> want(n);
      for (std::size_t x = 0; x < n; ++x) want[x] = rd(av[x] + 1.75f, dt);
      lt::check_both(k, lt::no_grid(), {a}, want, "likes");
    }
  }
}
}  // namespace

TEST_CASE("zeros_like, ones_like, full_like and ndarray_like take the shape and dtype of a tile, fp32") {
  likes_case({DType::fp32});
}
TEST_CASE("zeros_like, ones_like, full_like and ndarray_like take the shape and dtype of a tile, fp16") {
  likes_case({DType::fp16});
}
TEST_CASE("zeros_like, ones_like, full_like and ndarray_like take the shape and dtype of a tile, bf16") {
  likes_case({DType::bf16});
}

TEST_CASE("a PSUM buffer from zeros and full, read through nl::copy into SBUF") {
  const nki::Kernel k = nki::jit("psum_fill", [](nl::tensor a) {
    const std::int64_t p = a.shape()[0], f = a.shape()[1];
    auto out = nl::ndarray({p, f}, nl::float32, nl::shared_hbm, "out");
    auto z = nl::zeros({p, f}, nl::float32, nl::psum, "z");
    auto c = nl::full({p, f}, 0.1, nl::float32, nl::psum, "c");
    z.all() += nl::load(a.all());  // PSUM accumulation of a plain tile: fp32 add onto 0
    auto s = nl::copy(z.all()) + nl::copy(c.all());
    nl::store(out.all(), s);
    return out;
  });
  for (nki::Shape s : {nki::Shape{128, 512}, nki::Shape{64, 10}}) {
    CAPTURE(nki::shape_str(s));
    const auto n = static_cast<std::size_t>(s[0] * s[1]);
    auto a = lt::make(s, DType::fp32, test::random_floats(n, 42));
    const auto av = a.to_floats();
    std::vector<double> want(n);
    for (std::size_t x = 0; x < n; ++x) want[x] = lt::fadd(lt::fadd(0.0f, av[x]), 0.1f);
    lt::check_both(k, lt::no_grid(), {a}, want, "psum_fill");
  }
}

TEST_CASE("a private_hbm scratch tensor: stored, loaded back transposed-free, per instance") {
  // Each instance writes its tile * pid + 1 into private HBM and reads it back; instances do not share it.
  const nki::Kernel k = nki::jit("private_scratch", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto scratch = nl::ndarray({128, a.shape()[1]}, a.dtype(), nl::private_hbm, "scratch");
    auto g = nl::mgrid(128, a.shape()[1]);
    auto row = nl::program_id(0) * 128 + g.p;
    auto x = nl::load(a[row, g.x]);
    nl::store(scratch[g.p, g.x], x + 1);
    nl::store(out[row, g.x], nl::load(scratch[g.p, g.x]) * 2);
    return out;
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    CAPTURE(nki::dtype_name(dt));
    const nki::Shape s{512, 24};
    auto a = lt::make(s, dt, test::random_floats(512 * 24, 43));
    const auto av = a.to_floats();
    std::vector<double> want(av.size());
    for (std::size_t x = 0; x < av.size(); ++x) want[x] = rd(rd(av[x] + 1.0f, dt) * 2.0f, dt);
    lt::check_both(k, lt::grid1(4), {a}, want, "private_scratch grid 4");
    lt::check_both(k, nki::GridSpec{{nl::nc(2) * 2}}, {a}, want, "private_scratch nc(2)*2");
  }
}

TEST_CASE("an SBUF allocation inside a loop is filled again on every iteration") {
  // acc = full(10) inside the loop; acc += x; so every tile is x + 10, never a running sum.
  const nki::Kernel k = nki::jit("refill", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    auto g = nl::mgrid(128, a.shape()[1]);
    for (auto i : nl::sequential_range(a.shape()[0] / 128)) {
      auto acc = nl::full({128, a.shape()[1]}, 10.0, nl::float32, nl::sbuf, "acc");
      acc[g.p, g.x] = acc[g.p, g.x] + nl::load(a[i * 128 + g.p, g.x]);
      nl::store(out[i * 128 + g.p, g.x], acc[g.p, g.x]);
    }
    return out;
  });
  auto a = lt::make({384, 16}, DType::fp32, test::random_floats(384 * 16, 44));
  const auto av = a.to_floats();
  std::vector<double> want(av.size());
  for (std::size_t x = 0; x < av.size(); ++x) want[x] = lt::fadd(10.0f, av[x]);
  lt::check_both(k, lt::no_grid(), {a}, want, "refill");
}

TEST_CASE("zeros in shared_hbm: elements no instance stores read as zero") {
  // Only the first half of the columns is stored; the rest keeps the zeros the allocation put there.
  const nki::Kernel k = nki::jit("shared_zeros", [](nl::tensor a) {
    auto out = nl::zeros(a.shape(), a.dtype(), nl::shared_hbm, "out");
    const std::int64_t half = a.shape()[1] / 2;
    nl::store(out[nl::_, nl::ds(0, half)], nl::load(a[nl::_, nl::ds(0, half)]));
    return out;
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    CAPTURE(nki::dtype_name(dt));
    auto a = lt::make({64, 16}, dt, test::random_floats(64 * 16, 45));
    const auto av = a.to_floats();
    std::vector<double> want(av.size());
    for (std::size_t x = 0; x < av.size(); ++x) want[x] = (x % 16) < 8 ? av[x] : 0.0;
    lt::check_both(k, lt::no_grid(), {a}, want, "shared_zeros");
  }
}
