/** \file logical_xor, logical_not, abs_max, abs_min, fmod, mod and prelu against host computations. */
#include "lang_support.h"

#include "nki/ir/passes.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
using nki::DType;

namespace {

bool truth(float x) { return x != 0.0f; }  // NaN is true

float host_binary(const std::string& name, float a, float b) {
  float r = 0.0f;
  if (name == "logical_xor") r = truth(a) != truth(b) ? 1.0f : 0.0f;
  if (name == "abs_max") r = (std::isnan(a) || std::isnan(b)) ? lt::qnan() : (std::fabs(b) >= std::fabs(a) ? b : a);
  if (name == "abs_min") r = (std::isnan(a) || std::isnan(b)) ? lt::qnan() : (std::fabs(b) <= std::fabs(a) ? b : a);
  if (name == "fmod") r = std::fmod(a, b);
  if (name == "mod") {
    r = std::fmod(a, b);
    if (r == 0.0f) r = std::copysign(0.0f, b);
    else if (std::signbit(r) != std::signbit(b)) r = r + b;
  }
  if (name == "prelu") r = a > 0.0f ? a : a * b;
  return lt::canon(r);
}

std::vector<float> specials_into(std::vector<float> v, std::size_t offset) {
  const float inf = std::numeric_limits<float>::infinity();
  const float s[] = {0.0f, -0.0f, inf, -inf, lt::qnan(), 1.0f, -1.0f, 3.0f, -3.0f, 7.0f, -7.0f, 0.5f, -2.0f, 2.0f};
  for (std::size_t i = 0; i < std::size(s); ++i) v[(i * 5 + offset) % v.size()] = s[i];
  return v;
}

void binary_case(std::initializer_list<std::pair<const char*, nl::binary_fn>> ops) {
  for (auto [name_c, op] : ops) {
    const std::string name = name_c;
    CAPTURE(name);
    // o1: tile op tile; o2: tile op [P, 1] tile (broadcast along the free dim); o3: tile op scalar.
    const nki::Kernel k = nki::jit(std::string("bin_") + name, [op](nl::tensor a, nl::tensor b) {
      auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
      auto o2 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o2");
      auto o3 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o3");
      auto x = nl::load(a.all());
      auto y = nl::load(b.all());
      auto col = nl::load(b[nl::_, nl::ds(0, 1)]);
      nl::store(o1.all(), op(x, y));
      nl::store(o2.all(), op(x, col));
      nl::store(o3.all(), op(x, -2.5));
      return std::make_tuple(o1, o2, o3);
    });
    for (DType dt : {DType::fp32, DType::bf16, DType::fp16}) {
      CAPTURE(nki::dtype_name(dt));
      const std::int64_t p = 96, f = 20;
      const auto n = static_cast<std::size_t>(p * f);
      auto a = lt::make({p, f}, dt, specials_into(lt::random_ints(n, 98, -9, 9), 0));
      auto b = lt::make({p, f}, dt, specials_into(test::random_floats(n, 99, -6.0f, 6.0f), 2));
      const auto av = a.to_floats(), bv = b.to_floats();
      std::vector<double> w1(n), w2(n), w3(n);
      for (std::int64_t r = 0; r < p; ++r)
        for (std::int64_t c = 0; c < f; ++c) {
          const auto x = static_cast<std::size_t>(r * f + c);
          w1[x] = host_binary(name, av[x], bv[x]);
          w2[x] = host_binary(name, av[x], bv[static_cast<std::size_t>(r * f)]);
          w3[x] = host_binary(name, av[x], -2.5f);
        }
      lt::check_both(k, lt::no_grid(), {a, b}, {w1, w2, w3}, std::string("binary ") + name);
    }
  }
}

}  // namespace

TEST_CASE("logical_xor, abs_max, abs_min match the host over tiles, [P, 1] tiles and scalars") {
  binary_case({{"logical_xor", nl::logical_xor}, {"abs_max", nl::abs_max}, {"abs_min", nl::abs_min}});
}

TEST_CASE("fmod and mod match the host over tiles, [P, 1] tiles and scalars") {
  binary_case({{"fmod", nl::fmod}, {"mod", nl::mod}});
}

TEST_CASE("fmod takes the dividend's sign, mod the divisor's; abs_max and abs_min give y on a tie") {
  using nki::ir::BinaryKind;
  using nki::ir::apply_binary;
  CHECK(apply_binary(BinaryKind::fmod, -7.0f, 3.0f) == -1.0f);
  CHECK(apply_binary(BinaryKind::mod, -7.0f, 3.0f) == 2.0f);
  CHECK(apply_binary(BinaryKind::mod, 7.0f, -3.0f) == -2.0f);
  CHECK(std::signbit(apply_binary(BinaryKind::mod, 6.0f, -3.0f)));
  CHECK(apply_binary(BinaryKind::abs_max, -5.0f, 3.0f) == -5.0f);
  CHECK(apply_binary(BinaryKind::abs_max, 1.0f, -1.0f) == -1.0f);
  CHECK(apply_binary(BinaryKind::abs_min, 5.0f, -3.0f) == -3.0f);
  CHECK(apply_binary(BinaryKind::abs_min, 1.0f, -1.0f) == -1.0f);
  CHECK(apply_binary(BinaryKind::logical_xor, 2.0f, 0.0f) == 1.0f);
  CHECK(apply_binary(BinaryKind::logical_xor, 2.0f, -1.0f) == 0.0f);
}

TEST_CASE("logical_not is 1 where x is 0 and 0 elsewhere, NaN counting as true, in x's dtype") {
  const nki::Kernel k = nki::jit("logical_not", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto u8 = nl::ndarray(a.shape(), nl::uint8, nl::shared_hbm, "u8");
    auto x = nl::load(a.all());
    nl::store(out.all(), nl::logical_not(x));
    nl::store(u8.all(), nl::logical_not(x, {.dtype = nl::uint8}));
    return std::make_tuple(out, u8);
  });
  for (DType dt : {DType::fp32, DType::bf16, DType::int32, DType::uint8}) {
    CAPTURE(nki::dtype_name(dt));
    const std::int64_t p = 32, f = 16;
    const auto n = static_cast<std::size_t>(p * f);
    std::vector<float> v = lt::random_ints(n, 100, 0, 2);
    if (nki::is_float(dt)) v[3] = lt::qnan(), v[4] = -0.0f;
    auto a = lt::make({p, f}, dt, v);
    const auto av = a.to_floats();
    std::vector<double> want(n);
    for (std::size_t x = 0; x < n; ++x) want[x] = (av[x] == 0.0f) ? 1.0 : 0.0;
    lt::check_both(k, lt::no_grid(), {a}, {want, want}, "logical_not");
  }
}

TEST_CASE("prelu is x for x > 0 and alpha * x otherwise, alpha a scalar or a [P, 1] tile") {
  const nki::Kernel k = nki::jit("prelu", [](nl::tensor a, nl::tensor al) {
    auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o2");
    auto x = nl::load(a.all());
    nl::store(o1.all(), nl::prelu(x, 0.25));
    nl::store(o2.all(), nl::prelu(x, nl::load(al.all())));
    return std::make_tuple(o1, o2);
  });
  for (DType dt : {DType::fp32, DType::bf16, DType::fp16}) {
    CAPTURE(nki::dtype_name(dt));
    const std::int64_t p = 128, f = 30;
    const auto n = static_cast<std::size_t>(p * f);
    auto a = lt::make({p, f}, dt, specials_into(test::random_floats(n, 101, -4.0f, 4.0f), 1));
    auto al = lt::make({p, 1}, dt, test::random_floats(static_cast<std::size_t>(p), 102, 0.0f, 0.5f));
    const auto av = a.to_floats(), alv = al.to_floats();
    std::vector<double> w1(n), w2(n);
    for (std::int64_t r = 0; r < p; ++r)
      for (std::int64_t c = 0; c < f; ++c) {
        const auto x = static_cast<std::size_t>(r * f + c);
        w1[x] = host_binary("prelu", av[x], 0.25f);
        w2[x] = host_binary("prelu", av[x], alv[static_cast<std::size_t>(r)]);
      }
    lt::check_both(k, lt::no_grid(), {a, al}, {w1, w2}, "prelu");
  }
}

TEST_CASE("the IR text names the new ops (it is the compile cache's key)") {
  const nki::Kernel k = nki::jit(
      "printed_ops",
      [](nl::tensor a, nl::tensor b) {
        auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
        auto bits = nl::ndarray(b.shape(), nl::int32, nl::shared_hbm, "bits");
        auto red = nl::ndarray({a.shape()[0], 1}, nl::float32, nl::shared_hbm, "red");
        auto x = nl::load(a.all());
        nl::store(out.all(), nl::mod(nl::prelu(nl::mish(x), 0.5), 3.0));
        nl::store(bits.all(), nl::right_shift(nl::invert(nl::load(b.all())), 1));
        nl::store(red.all(), nl::var(x, 1));
        return std::make_tuple(out, bits, red);
      },
      {"a", "b"});
  const auto ir = k.trace({{8, 16}, {8, 16}}, {DType::fp32, DType::int32}, nki::GridSpec{})->ir;
  const std::string text = nki::ir::print(*ir);
  CAPTURE(text);
  for (const char* word : {"= mish %t", "= prelu %t", "= mod %t", "= bitwise_xor %t", "= right_shift %t", "= reduce_var %t"})
    CHECK(text.find(word) != std::string::npos);
}
