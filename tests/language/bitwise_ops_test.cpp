/** \file bitwise_and/or/xor, left_shift, right_shift and invert on integer tiles, exact over every integer type. */
#include "lang_support.h"

namespace nl = nki::language;
using nki::DType;

namespace {

/** Host: the op in the integer type `dt` (numpy semantics), written with the C++ type itself. */
template <class T>
double host_bits_t(const std::string& name, double a, double b) {
  using W = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
  const T x = static_cast<T>(static_cast<W>(static_cast<std::int64_t>(a)));
  const T y = static_cast<T>(static_cast<W>(static_cast<std::int64_t>(b)));
  constexpr int bits = sizeof(T) * 8;
  const std::int64_t count = static_cast<std::int64_t>(y);
  T r{};
  if (name == "bitwise_and") r = static_cast<T>(x & y);
  if (name == "bitwise_or") r = static_cast<T>(x | y);
  if (name == "bitwise_xor") r = static_cast<T>(x ^ y);
  if (name == "invert") r = static_cast<T>(~x);
  if (name == "left_shift") r = (count >= 0 && count < bits) ? static_cast<T>(static_cast<std::uint64_t>(x) << count) : T{0};
  if (name == "right_shift") {
    if (count >= 0 && count < bits) r = static_cast<T>(x >> count);
    else r = (x < 0) ? static_cast<T>(-1) : T{0};
  }
  return static_cast<double>(r);
}

double host_bits(const std::string& name, DType dt, double a, double b) {
  switch (dt) {
    case DType::int8: return host_bits_t<std::int8_t>(name, a, b);
    case DType::int16: return host_bits_t<std::int16_t>(name, a, b);
    case DType::int32: return host_bits_t<std::int32_t>(name, a, b);
    case DType::uint8: return host_bits_t<std::uint8_t>(name, a, b);
    case DType::uint16: return host_bits_t<std::uint16_t>(name, a, b);
    case DType::uint32: return host_bits_t<std::uint32_t>(name, a, b);
    default: FAIL("not an integer dtype"); return 0;
  }
}

/** Values spanning the whole range of `dt`, its extremes included. */
std::vector<double> full_range(std::size_t n, DType dt, std::uint32_t seed) {
  const bool sign = nki::is_signed_integer(dt);
  const int bits = nki::dtype_bytes(dt) * 8;
  const double lo = sign ? -std::ldexp(1.0, bits - 1) : 0.0;
  const double hi = sign ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> d(static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi));
  std::vector<double> v(n);
  for (double& x : v) x = static_cast<double>(d(rng));
  const double s[] = {lo, hi, 0, 1, sign ? -1.0 : hi - 1, lo + 1};
  for (std::size_t i = 0; i < std::size(s); ++i) v[i * 7] = s[i];
  return v;
}

/** Shift counts: mostly in range, some at and past the width, some negative for signed types. */
std::vector<double> shift_counts(std::size_t n, DType dt, std::uint32_t seed) {
  const int bits = nki::dtype_bytes(dt) * 8;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(nki::is_signed_integer(dt) ? -2 : 0, bits + 2);
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return v;
}

nki::Tensor make_values(const nki::Shape& s, DType dt, const std::vector<double>& v) {
  return nki::Tensor::from_values(nki::sim::Device::default_device(), s, dt, v);
}

constexpr DType kIntegers[] = {DType::int8, DType::int16, DType::int32, DType::uint8, DType::uint16, DType::uint32};

}  // namespace

TEST_CASE("bitwise_and, bitwise_or, bitwise_xor: tile with tile, [P, 1] tile and integer scalar, every integer type") {
  for (auto [name_c, op] : std::initializer_list<std::pair<const char*, nl::binary_fn>>{
           {"bitwise_and", nl::bitwise_and}, {"bitwise_or", nl::bitwise_or}, {"bitwise_xor", nl::bitwise_xor}}) {
    const std::string name = name_c;
    CAPTURE(name);
    const nki::Kernel k = nki::jit(std::string("bits_") + name, [op](nl::tensor a, nl::tensor b) {
      auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
      auto o2 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o2");
      auto o3 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o3");
      auto x = nl::load(a.all());
      nl::store(o1.all(), op(x, nl::load(b.all())));
      nl::store(o2.all(), op(x, nl::load(b[nl::_, nl::ds(0, 1)])));
      nl::store(o3.all(), op(x, 0x5a));
      return std::make_tuple(o1, o2, o3);
    });
    for (DType dt : kIntegers) {
      CAPTURE(nki::dtype_name(dt));
      const std::int64_t p = 64, f = 24;
      const auto n = static_cast<std::size_t>(p * f);
      const auto av = full_range(n, dt, 110), bv = full_range(n, dt, 111);
      std::vector<double> w1(n), w2(n), w3(n);
      for (std::int64_t r = 0; r < p; ++r)
        for (std::int64_t c = 0; c < f; ++c) {
          const auto x = static_cast<std::size_t>(r * f + c);
          w1[x] = host_bits(name, dt, av[x], bv[x]);
          w2[x] = host_bits(name, dt, av[x], bv[static_cast<std::size_t>(r * f)]);
          w3[x] = host_bits(name, dt, av[x], 0x5a);
        }
      lt::check_both(k, lt::no_grid(), {make_values({p, f}, dt, av), make_values({p, f}, dt, bv)}, {w1, w2, w3}, name);
    }
  }
}

TEST_CASE("left_shift and right_shift: counts past the width shift everything out; right shifts of signed types fill with the sign") {
  for (auto [name_c, op] : std::initializer_list<std::pair<const char*, nl::binary_fn>>{
           {"left_shift", nl::left_shift}, {"right_shift", nl::right_shift}}) {
    const std::string name = name_c;
    CAPTURE(name);
    const nki::Kernel k = nki::jit(std::string("bits_") + name, [op](nl::tensor a, nl::tensor b) {
      auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
      auto o2 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o2");
      nl::store(o1.all(), op(nl::load(a.all()), nl::load(b.all())));
      nl::store(o2.all(), op(nl::load(a.all()), 3));
      return std::make_tuple(o1, o2);
    });
    for (DType dt : kIntegers) {
      CAPTURE(nki::dtype_name(dt));
      const std::int64_t p = 32, f = 40;
      const auto n = static_cast<std::size_t>(p * f);
      const auto av = full_range(n, dt, 112), bv = shift_counts(n, dt, 113);
      std::vector<double> w1(n), w2(n);
      for (std::size_t x = 0; x < n; ++x) {
        w1[x] = host_bits(name, dt, av[x], bv[x]);
        w2[x] = host_bits(name, dt, av[x], 3);
      }
      lt::check_both(k, lt::no_grid(), {make_values({p, f}, dt, av), make_values({p, f}, dt, bv)}, {w1, w2}, name);
    }
  }
}

TEST_CASE("invert flips every bit of the result's integer type; dtype= computes in that type, as numpy") {
  const nki::Kernel k = nki::jit("bits_invert", [](nl::tensor a) {
    auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), nl::int32, nl::shared_hbm, "o2");
    nl::store(o1.all(), nl::invert(nl::load(a.all())));
    nl::store(o2.all(), nl::invert(nl::load(a.all()), {.dtype = nl::int32}));
    return std::make_tuple(o1, o2);
  });
  for (DType dt : kIntegers) {
    CAPTURE(nki::dtype_name(dt));
    const std::int64_t p = 128, f = 8;
    const auto n = static_cast<std::size_t>(p * f);
    const auto av = full_range(n, dt, 114);
    std::vector<double> w1(n), w2(n);
    for (std::size_t x = 0; x < n; ++x) {
      w1[x] = host_bits("invert", dt, av[x], 0);
      w2[x] = host_bits("invert", DType::int32, av[x], 0);
    }
    lt::check_both(k, lt::no_grid(), {make_values({p, f}, dt, av)}, {w1, w2}, "invert");
  }
}

TEST_CASE("bitwise ops: pinned values (uint8 and int8 wrap, arithmetic right shift)") {
  using nki::ir::BinaryKind;
  using nki::ir::apply_bitwise;
  CHECK(apply_bitwise(BinaryKind::left_shift, DType::uint8, 200, 1) == 144);
  CHECK(apply_bitwise(BinaryKind::left_shift, DType::int8, 64, 1) == -128);
  CHECK(apply_bitwise(BinaryKind::right_shift, DType::int8, -128, 3) == -16);
  CHECK(apply_bitwise(BinaryKind::right_shift, DType::int16, -5, 40) == -1);
  CHECK(apply_bitwise(BinaryKind::right_shift, DType::uint32, 4294967295.0, 31) == 1);
  CHECK(apply_bitwise(BinaryKind::left_shift, DType::int32, 1, 32) == 0);
  CHECK(apply_bitwise(BinaryKind::bitwise_xor, DType::uint16, 0x00ff, -1) == 0xff00);
  CHECK(apply_bitwise(BinaryKind::bitwise_and, DType::int32, 2147483647.0, -2147483648.0) == 0);
  CHECK(apply_bitwise(BinaryKind::bitwise_or, DType::int32, 2147483647.0, -2147483648.0) == -1);
}
