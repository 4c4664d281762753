/**
 * \file isa::tensor_copy (every engine, dtype conversion), isa::reciprocal, isa::tensor_reduce in
 * NKI's argument order with negate, and the Vector engine's nc_transpose: values on both executors.
 */
#include <random>

#include "lang_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using lt::rd;
using nki::DType;

TEST_CASE("isa::tensor_copy copies on the Vector, Scalar and GpSimd engines; with a dtype it rounds once") {
  // o4 reads a PSUM tile: x transposed twice (the Tensor engine reads SBUF, so the first copy moves it there).
  const nki::Kernel k = nki::jit("tensor_copy", [](nl::tensor a) {
    auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), nl::bfloat16, nl::shared_hbm, "o2");
    auto o3 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o3");
    auto o4 = nl::ndarray(a.shape(), nl::float16, nl::shared_hbm, "o4");
    auto x = nl::load(a.all());
    auto t = isa::tensor_copy(isa::nc_transpose(x), {.engine = isa::vector_engine});  // SBUF [F, P]
    auto back = isa::nc_transpose(t);                                                  // PSUM [P, F]
    nl::store(o1.all(), isa::tensor_copy(x, {.engine = isa::vector_engine}));
    nl::store(o2.all(), isa::tensor_copy(x, {.dtype = nl::bfloat16, .engine = isa::scalar_engine}));
    nl::store(o3.all(), isa::tensor_copy(x, {.engine = isa::gpsimd_engine}));
    nl::store(o4.all(), isa::tensor_copy(back, {.dtype = nl::float16, .engine = isa::scalar_engine}));
    return std::make_tuple(o1, o2, o3, o4);
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    CAPTURE(nki::dtype_name(dt));
    const std::int64_t p = 96, f = 80;
    auto a = lt::make({p, f}, dt, test::random_floats(static_cast<std::size_t>(p * f), 501, -100.0f, 100.0f));
    const auto av = a.to_floats();
    const std::vector<double> w(av.begin(), av.end());  // each output rounds these to its dtype, once
    lt::check_both(k, lt::no_grid(), {a}, {w, w, w, w}, "tensor_copy");
  }
}

TEST_CASE("isa::reciprocal is 1 / x in fp32, specials included") {
  const nki::Kernel k = nki::jit("reciprocal", [](nl::tensor a) {
    auto o = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o");
    auto o16 = nl::ndarray(a.shape(), nl::bfloat16, nl::shared_hbm, "o16");
    auto x = nl::load(a.all());
    nl::store(o.all(), isa::reciprocal(x));
    nl::store(o16.all(), isa::reciprocal(x, {.dtype = nl::bfloat16}));
    return std::make_tuple(o, o16);
  });
  std::vector<float> v = test::random_floats(64 * 33, 511, -50.0f, 50.0f);
  v[0] = 0.0f;
  v[1] = -0.0f;
  v[2] = INFINITY;
  v[3] = lt::qnan();
  v[4] = 1e-30f;
  auto a = lt::make({64, 33}, DType::fp32, v);
  std::vector<double> w(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) w[i] = lt::canon(1.0f / v[i]);
  lt::check_both(k, lt::no_grid(), {a}, {w, w}, "reciprocal");
}

TEST_CASE("isa::tensor_reduce(op, data, axis, {negate, keepdims}) reduces the last free axes, negated on request") {
  // data [P, 3, F]: o1 = max over axis 2 (keepdims), negated; o2 = sum over axes (1, 2), no keepdims.
  const nki::Kernel k = nki::jit("tensor_reduce_nki", [](nl::tensor a) {
    const std::int64_t p = a.shape()[0], f = a.shape()[2];
    auto o1 = nl::ndarray({p, 3, 1}, nl::float32, nl::shared_hbm, "o1");
    auto o2 = nl::ndarray({p}, nl::float32, nl::shared_hbm, "o2");
    auto x = nl::load(a.all());
    (void)f;
    nl::store(o1.all(), isa::tensor_reduce(nl::maximum, x, 2, {.negate = true, .keepdims = true}));
    nl::store(o2.all(), isa::tensor_reduce(nl::add, x, {1, 2}));
    return std::make_tuple(o1, o2);
  });
  std::mt19937 rng(521);
  for (int trial = 0; trial < 3; ++trial) {  // random shapes and values
    const std::int64_t p = std::uniform_int_distribution<std::int64_t>(1, 128)(rng);
    const std::int64_t f = std::uniform_int_distribution<std::int64_t>(1, 70)(rng);
    CAPTURE(p);
    CAPTURE(f);
    auto a = lt::make({p, 3, f}, DType::fp32, test::random_floats(static_cast<std::size_t>(p * 3 * f), 522 + trial));
    const auto av = a.to_floats();
    std::vector<double> w1(static_cast<std::size_t>(p * 3)), w2(static_cast<std::size_t>(p));
    for (std::int64_t r = 0; r < p; ++r) {
      float sum = 0.0f;
      bool first = true;
      for (std::int64_t j = 0; j < 3; ++j) {
        float mx = -INFINITY;
        for (std::int64_t c = 0; c < f; ++c) {
          const float x = av[static_cast<std::size_t>((r * 3 + j) * f + c)];
          mx = std::max(mx, x);
          sum = first ? x : lt::fadd(sum, x);
          first = false;
        }
        w1[static_cast<std::size_t>(r * 3 + j)] = -mx;
      }
      w2[static_cast<std::size_t>(r)] = sum;
    }
    lt::check_both(k, lt::no_grid(), {a}, {w1, w2}, "tensor_reduce NKI order");
  }
}

TEST_CASE("isa::nc_transpose on the Vector engine: [P <= 32, F <= 32] into SBUF, exact") {
  const nki::Kernel k = nki::jit("vector_transpose", [](nl::tensor a) {
    auto o = nl::ndarray({a.shape()[1], a.shape()[0]}, a.dtype(), nl::shared_hbm, "o");
    auto x = nl::load(a.all());
    auto t = isa::nc_transpose(x, {.engine = isa::vector_engine});
    CHECK(t.shape() == nki::Shape{a.shape()[1], a.shape()[0]});
    nl::store(o.all(), nl::exp(t, {.dtype = a.dtype()}));  // an SBUF tile: usable directly
    return o;
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    CAPTURE(nki::dtype_name(dt));
    auto a = lt::make({32, 20}, dt, test::random_floats(32 * 20, 531, -3.0f, 3.0f));
    const auto av = a.to_floats();
    std::vector<double> w(32 * 20);
    for (int r = 0; r < 32; ++r)
      for (int c = 0; c < 20; ++c) w[static_cast<std::size_t>(c * 32 + r)] = lt::canon(std::exp(av[static_cast<std::size_t>(r * 20 + c)]));
    lt::check_both(k, lt::no_grid(), {a}, w, "vector transpose");
  }
}
