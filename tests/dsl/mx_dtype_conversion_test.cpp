/** \file tf32, fp8 e4m3fn, fp8 e8m0fnu and fp4 e2m1: every code, nearest-even rounding, saturation, NaN. */
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "nki/dtype.h"
#include "test_support.h"

namespace {

using D = nki::DType;
float f(std::uint32_t bits) { return std::bit_cast<float>(bits); }
std::uint32_t bits_of(float x) { return std::bit_cast<std::uint32_t>(x); }
constexpr float inf = std::numeric_limits<float>::infinity();

/** fp32 inputs: every exponent with assorted mantissas, both signs, and a sweep of bit patterns. */
std::vector<float> sweep() {
  std::vector<float> xs;
  for (std::uint32_t e = 0; e < 256; ++e) {
    for (std::uint32_t m : {0u, 1u, 0x7fffffu, 0x080000u, 0x0fffffu, 0x100000u, 0x100001u, 0x200000u, 0x1fffffu,
                            0x200001u, 0x300000u, 0x400000u, 0x400001u, 0x3fffffu, 0x500000u, 0x600000u, 0x600001u,
                            0x700000u, 0x7c0000u, 0x1000u, 0x0fffu, 0x1001u, 0x3000u, 0x2000u}) {
      xs.push_back(f((e << 23) | m));
      xs.push_back(f(0x80000000u | (e << 23) | m));
    }
  }
  for (std::uint32_t b = 0; b < 0xffffffffu - 40961u; b += 40961u) xs.push_back(f(b));
  return xs;
}

/**
 * An independent search for a format without infinities: the non-negative code in [0, max_code]
 * whose value is nearest to |x| (ties to the even code), so a magnitude past the largest value
 * lands on it (saturation); the sign bit `sign_bit` is set for a negative x.
 */
std::uint8_t nearest_saturating(float x, float (*to_float)(std::uint8_t), int max_code, std::uint8_t sign_bit) {
  const double a = std::fabs(static_cast<double>(x));
  const std::uint8_t sign = std::signbit(x) ? sign_bit : 0;
  // At or past the largest value it is the nearest (and double distances to huge x would tie).
  if (a >= to_float(static_cast<std::uint8_t>(max_code))) return static_cast<std::uint8_t>(max_code | sign);
  std::uint8_t code = 0;
  double best = std::fabs(to_float(0) - a);
  for (int c = 1; c <= max_code; ++c) {
    const double d = std::fabs(to_float(static_cast<std::uint8_t>(c)) - a);
    if (d < best || (d == best && (c & 1) == 0)) {
      best = d;
      code = static_cast<std::uint8_t>(c);
    }
  }
  return static_cast<std::uint8_t>(code | sign);
}

}  // namespace

TEST_CASE("fp8 e4m3fn: every one of the 256 codes converts to fp32 and back to itself") {
  for (int c = 0; c < 256; ++c) {
    const auto code = static_cast<std::uint8_t>(c);
    CAPTURE(c);
    REQUIRE(nki::float_to_fp8_e4m3fn_bits(nki::fp8_e4m3fn_bits_to_float(code)) == code);
    std::uint8_t stored = 0;
    nki::store_element(&stored, D::fp8_e4m3fn, nki::load_element(&code, D::fp8_e4m3fn));
    REQUIRE(stored == code);
  }
}

TEST_CASE("fp8 e4m3fn: values of codes, no infinity, 448 at most, NaN only at 0x7f and 0xff") {
  CHECK(nki::fp8_e4m3fn_bits_to_float(0x38) == 1.0f);
  CHECK(nki::fp8_e4m3fn_bits_to_float(0x7e) == 448.0f);
  CHECK(nki::fp8_e4m3fn_bits_to_float(0x78) == 256.0f);  // exponent 15 is finite here
  CHECK(nki::fp8_e4m3fn_bits_to_float(0xfe) == -448.0f);
  CHECK(nki::fp8_e4m3fn_bits_to_float(0x01) == std::ldexp(1.0f, -9));
  CHECK(nki::fp8_e4m3fn_bits_to_float(0x08) == std::ldexp(1.0f, -6));
  CHECK(std::isnan(nki::fp8_e4m3fn_bits_to_float(0x7f)));
  CHECK(std::signbit(nki::fp8_e4m3fn_bits_to_float(0xff)));
  for (int c = 0; c < 256; ++c)
    if ((c & 0x7f) != 0x7f) CHECK(std::isfinite(nki::fp8_e4m3fn_bits_to_float(static_cast<std::uint8_t>(c))));
}

TEST_CASE("fp8 e4m3fn: from fp32 rounds to nearest even and saturates at 448") {
  CHECK(nki::float_to_fp8_e4m3fn_bits(448.0f) == 0x7e);
  CHECK(nki::float_to_fp8_e4m3fn_bits(463.0f) == 0x7e);
  CHECK(nki::float_to_fp8_e4m3fn_bits(464.0f) == 0x7e);  // the tie with 480 (the NaN code) goes to 448
  CHECK(nki::float_to_fp8_e4m3fn_bits(1e30f) == 0x7e);
  CHECK(nki::float_to_fp8_e4m3fn_bits(inf) == 0x7e);
  CHECK(nki::float_to_fp8_e4m3fn_bits(-inf) == 0xfe);
  CHECK(nki::float_to_fp8_e4m3fn_bits(1.0625f) == 0x38);  // tie between 1 and 1.125: even
  CHECK(nki::float_to_fp8_e4m3fn_bits(1.1875f) == 0x3a);  // tie between 1.125 and 1.25: even
  CHECK(nki::float_to_fp8_e4m3fn_bits(std::ldexp(1.0f, -10)) == 0x00);  // half the smallest subnormal: 0
  CHECK(nki::float_to_fp8_e4m3fn_bits(std::ldexp(3.0f, -10)) == 0x02);
  CHECK(nki::float_to_fp8_e4m3fn_bits(-0.0f) == 0x80);
  CHECK(nki::float_to_fp8_e4m3fn_bits(f(0x7fc00000)) == 0x7f);
  CHECK(nki::float_to_fp8_e4m3fn_bits(f(0xffc00001)) == 0xff);
  for (float x : sweep()) {
    CAPTURE(bits_of(x));
    const std::uint8_t want = std::isnan(x) ? static_cast<std::uint8_t>(std::signbit(x) ? 0xff : 0x7f)
                                            : nearest_saturating(x, nki::fp8_e4m3fn_bits_to_float, 0x7e, 0x80);
    REQUIRE(nki::float_to_fp8_e4m3fn_bits(x) == want);
  }
}

TEST_CASE("fp8 e8m0fnu: every one of the 256 codes converts to fp32 and back to itself") {
  for (int c = 0; c < 256; ++c) {
    const auto code = static_cast<std::uint8_t>(c);
    CAPTURE(c);
    REQUIRE(nki::float_to_fp8_e8m0fnu_bits(nki::fp8_e8m0fnu_bits_to_float(code)) == code);
    std::uint8_t stored = 0;
    nki::store_element(&stored, D::fp8_e8m0fnu, nki::load_element(&code, D::fp8_e8m0fnu));
    REQUIRE(stored == code);
    if (c != 0xff) CHECK(nki::fp8_e8m0fnu_bits_to_float(code) == std::ldexp(1.0f, c - 127));
  }
  CHECK(std::isnan(nki::fp8_e8m0fnu_bits_to_float(0xff)));
}

TEST_CASE("fp8 e8m0fnu: from fp32, the nearest power of two, saturating, NaN for NaN and negatives") {
  CHECK(nki::float_to_fp8_e8m0fnu_bits(1.0f) == 127);
  CHECK(nki::float_to_fp8_e8m0fnu_bits(1.5f) == 128);    // tie between 1 (code 127) and 2 (128): even
  CHECK(nki::float_to_fp8_e8m0fnu_bits(3.0f) == 128);    // tie between 2 (128) and 4 (129): even
  CHECK(nki::float_to_fp8_e8m0fnu_bits(3.5f) == 129);
  CHECK(nki::float_to_fp8_e8m0fnu_bits(0.0f) == 0);      // no zero: the smallest code
  CHECK(nki::float_to_fp8_e8m0fnu_bits(-0.0f) == 0);
  CHECK(nki::float_to_fp8_e8m0fnu_bits(std::ldexp(1.0f, -149)) == 0);
  CHECK(nki::float_to_fp8_e8m0fnu_bits(std::ldexp(1.75f, -127)) == 1);
  CHECK(nki::float_to_fp8_e8m0fnu_bits(inf) == 0xfe);
  CHECK(nki::float_to_fp8_e8m0fnu_bits(f(0x7f7fffff)) == 0xfe);
  CHECK(nki::float_to_fp8_e8m0fnu_bits(-1.0f) == 0xff);
  CHECK(nki::float_to_fp8_e8m0fnu_bits(f(0x7fc00000)) == 0xff);
  for (float x : sweep()) {
    CAPTURE(bits_of(x));
    std::uint8_t want;
    if (std::isnan(x) || (std::signbit(x) && x != 0.0f)) {
      want = 0xff;
    } else {
      // The codes are powers of two: nearest in linear distance over 0..254, ties to the even code.
      want = nearest_saturating(std::fabs(x), nki::fp8_e8m0fnu_bits_to_float, 0xfe, 0);
    }
    REQUIRE(nki::float_to_fp8_e8m0fnu_bits(x) == want);
  }
}

TEST_CASE("fp4 e2m1: the 16 codes round-trip, rounding to nearest even, saturation at 6") {
  for (int c = 0; c < 16; ++c) {
    CAPTURE(c);
    REQUIRE(nki::float_to_fp4_e2m1_bits(nki::fp4_e2m1_bits_to_float(static_cast<std::uint8_t>(c))) == c);
  }
  CHECK(nki::fp4_e2m1_bits_to_float(0x7) == 6.0f);
  CHECK(nki::fp4_e2m1_bits_to_float(0x1) == 0.5f);
  CHECK(nki::fp4_e2m1_bits_to_float(0xd) == -3.0f);
  CHECK(nki::float_to_fp4_e2m1_bits(0.25f) == 0x0);  // tie: even (0)
  CHECK(nki::float_to_fp4_e2m1_bits(2.5f) == 0x4);   // tie between 2 and 3: even (2)
  CHECK(nki::float_to_fp4_e2m1_bits(5.0f) == 0x6);   // tie between 4 and 6: even (4)
  CHECK(nki::float_to_fp4_e2m1_bits(100.0f) == 0x7);
  CHECK(nki::float_to_fp4_e2m1_bits(-inf) == 0xf);
  for (float x : sweep()) {
    if (std::isnan(x)) continue;
    CAPTURE(bits_of(x));
    REQUIRE(nki::float_to_fp4_e2m1_bits(x) == nearest_saturating(x, nki::fp4_e2m1_bits_to_float, 7, 0x8));
  }
}

TEST_CASE("tf32: round to nearest even at 10 mantissa bits, fp32's range, NaN kept") {
  CHECK(nki::float_to_tf32_bits(1.0f) == 0x3f800000u);
  CHECK(nki::float_to_tf32_bits(f(0x3f801000)) == 0x3f800000u);  // tie: even stays
  CHECK(nki::float_to_tf32_bits(f(0x3f803000)) == 0x3f804000u);  // tie: to even
  CHECK(nki::float_to_tf32_bits(f(0x3f801001)) == 0x3f802000u);
  CHECK(nki::float_to_tf32_bits(f(0x7f7fffff)) == 0x7f800000u);  // past the largest tf32 + half an ulp: infinity
  CHECK(nki::float_to_tf32_bits(f(0x7f7fefff)) == 0x7f7fe000u);
  CHECK(nki::float_to_tf32_bits(inf) == 0x7f800000u);
  CHECK(nki::float_to_tf32_bits(f(0x7fc00000)) == 0x7fc00000u);
  CHECK(nki::float_to_tf32_bits(f(0xff800001)) == 0xffc00000u);  // payload below the kept bits: quiet bit set
  CHECK(nki::float_to_tf32_bits(f(0x7fa02000)) == 0x7fa02000u);
  for (float x : sweep()) {
    if (std::isnan(x)) continue;
    CAPTURE(bits_of(x));
    // Independent: scale into units of the tf32 ulp (2^(e - 10), e at least fp32's -126), nearbyint
    // rounds to nearest even in the default rounding mode; beyond the fp32 range: infinity.
    double want = x;
    if (std::isfinite(x) && x != 0.0f) {
      const int e = std::max(std::ilogb(x), -126);
      want = std::nearbyint(std::ldexp(static_cast<double>(x), 10 - e)) * std::ldexp(1.0, e - 10);
      if (std::fabs(want) > std::numeric_limits<float>::max()) want = std::copysign(inf, x);
    }
    REQUIRE(nki::float_to_tf32_bits(x) == bits_of(static_cast<float>(want)));
    REQUIRE(nki::round_to_dtype(x, D::tf32) == static_cast<float>(want));
  }
}

TEST_CASE("MX dtypes: names, long names, sizes, kinds, promotion") {
  struct Row {
    D t;
    const char* name;
    const char* nki_name;
    int bytes;
    bool is_float;
  };
  const Row rows[] = {{D::tf32, "tf32", "tfloat32", 4, true},
                      {D::fp8_e4m3fn, "fp8_e4m3fn", "float8_e4m3fn", 1, true},
                      {D::fp8_e8m0fnu, "fp8_e8m0fnu", "float8_e8m0fnu", 1, true},
                      {D::fp8_e5m2_x4, "fp8_e5m2_x4", "float8_e5m2_x4", 4, false},
                      {D::fp8_e4m3fn_x4, "fp8_e4m3fn_x4", "float8_e4m3fn_x4", 4, false},
                      {D::fp4_e2m1fn_x4, "fp4_e2m1fn_x4", "float4_e2m1fn_x4", 2, false}};
  for (const Row& r : rows) {
    CAPTURE(r.name);
    CHECK(nki::dtype_name(r.t) == r.name);
    CHECK(nki::parse_dtype(r.name) == r.t);
    CHECK(nki::parse_dtype(r.nki_name) == r.t);
    CHECK(nki::dtype_bytes(r.t) == r.bytes);
    CHECK(nki::is_float(r.t) == r.is_float);
    CHECK(nki::is_packed_x4(r.t) == !r.is_float);
    CHECK(!nki::is_signed_integer(r.t));
  }
  CHECK(nki::packed_element(D::fp8_e5m2_x4) == D::fp8_e5m2);
  CHECK(nki::packed_element(D::fp8_e4m3fn_x4) == D::fp8_e4m3fn);
  CHECK(nki::promote(D::tf32, D::fp32) == D::fp32);
  CHECK(nki::promote(D::tf32, D::bf16) == D::tf32);
  CHECK(nki::promote(D::fp8_e4m3fn, D::fp8_e4m3) == D::bf16);
  CHECK(nki::promote(D::fp8_e8m0fnu, D::fp16) == D::fp16);
  CHECK(nki::promote(D::fp8_e4m3fn, D::int32) == D::fp8_e4m3fn);
  // A packed word is an unsigned word: it round-trips through the element path exactly.
  const std::uint32_t word = 0xdeadbeefu;
  std::uint32_t back = 0;
  nki::store_element(&back, D::fp8_e4m3fn_x4, nki::load_element(&word, D::fp8_e4m3fn_x4));
  CHECK(back == word);
}
