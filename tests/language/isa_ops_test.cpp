/** \file isa::tensor_scalar (one and two ops, fp32 intermediate), isa::memset. */
#include "lang_support.h"

namespace nl = nki::language;
using lt::rd;
using nki::DType;

namespace {
void tensor_scalar_case(std::initializer_list<DType> dtypes) {
  // o1 = x * 3 (scalar), o2 = x - col (a [P, 1] tile), o3 = (x * col) + 0.1, o4 = max(x / 7, col) in fp32 output.
  const nki::Kernel k = nki::jit("tensor_scalar", [](nl::tensor a, nl::tensor colt) {
    auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o2");
    auto o3 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o3");
    auto o4 = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "o4");
    auto x = nl::load(a.all());
    auto col = nl::load(colt.all());
    nl::store(o1.all(), nki::isa::tensor_scalar(x, nl::multiply, 3));
    nl::store(o2.all(), nki::isa::tensor_scalar(x, nl::subtract, col));
    nl::store(o3.all(), nki::isa::tensor_scalar(x, nl::multiply, col, nl::add, 0.1));
    nl::store(o4.all(), nki::isa::tensor_scalar(x, nl::divide, 7.0, nl::maximum, col, {.dtype = nl::float32}));
    return std::make_tuple(o1, o2, o3, o4);
  });
  for (DType dt : dtypes) {
    for (std::int64_t p : {128, 21}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(p);
      const std::int64_t f = 45;
      auto a = lt::make({p, f}, dt, test::random_floats(static_cast<std::size_t>(p * f), 111));
      auto colt = lt::make({p, 1}, dt, test::random_floats(static_cast<std::size_t>(p), 112));
      const auto av = a.to_floats(), cv = colt.to_floats();
      const auto n = static_cast<std::size_t>(p * f);
      std::vector<double> w1(n), w2(n), w3(n), w4(n);
      for (std::size_t x = 0; x < n; ++x) {
        const float c = cv[x / static_cast<std::size_t>(f)];
        w1[x] = av[x] * 3.0f;
        w2[x] = av[x] - c;
        w3[x] = lt::fadd(lt::fmul(av[x], c), 0.1f);
        const float q = av[x] / 7.0f;
        w4[x] = q >= c ? q : c;
      }
      lt::check_both(k, lt::no_grid(), {a, colt}, {w1, w2, w3, w4}, "tensor_scalar");
    }
  }
}
}  // namespace

TEST_CASE("isa::tensor_scalar with one op and with two ops keeps the intermediate in fp32, fp32") {
  tensor_scalar_case({DType::fp32});
}
TEST_CASE("isa::tensor_scalar with one op and with two ops keeps the intermediate in fp32, fp16") {
  tensor_scalar_case({DType::fp16});
}
TEST_CASE("isa::tensor_scalar with one op and with two ops keeps the intermediate in fp32, bf16") {
  tensor_scalar_case({DType::bf16});
}

static void memset_case(std::initializer_list<DType> dtypes) {
  // buf = x; memset(buf[:, 2:2+w], v); memset(buf[0:10, :], -1); store buf.
  const nki::Kernel k = nki::jit("memset", [](nl::tensor a) {
    const std::int64_t p = a.shape()[0], f = a.shape()[1];
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto buf = nl::ndarray({p, f}, a.dtype(), nl::sbuf, "buf");
    buf[nl::_, nl::_] = nl::load(a.all());
    nki::isa::memset(buf[nl::_, nl::ds(2, f / 2)], 1.0 / 3.0);
    nki::isa::memset(buf[nl::ds(0, 10), nl::_], -1.0);
    nl::store(out.all(), buf.all());
    return out;
  });
  for (DType dt : dtypes) {
    for (nki::Shape s : {nki::Shape{128, 20}, nki::Shape{16, 6}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const auto n = static_cast<std::size_t>(s[0] * s[1]);
      auto a = lt::make(s, dt, lt::random_ints(n, 113, -50, 50));
      const auto av = a.to_floats();
      std::vector<double> want(n);
      for (std::int64_t p = 0; p < s[0]; ++p)
        for (std::int64_t f = 0; f < s[1]; ++f) {
          const auto x = static_cast<std::size_t>(p * s[1] + f);
          want[x] = p < 10 ? -1.0 : (f >= 2 && f < 2 + s[1] / 2) ? nki::round_to_dtype(1.0 / 3.0, dt) : av[x];
        }
      lt::check_both(k, lt::no_grid(), {a}, want, "memset");
    }
  }
}

TEST_CASE("isa::memset fills a window of an SBUF array, the rest keeps what was written before, fp32 and bf16") {
  memset_case({DType::fp32, DType::bf16});
}
TEST_CASE("isa::memset fills a window of an SBUF array, the rest keeps what was written before, int16") {
  memset_case({DType::int16});
}
