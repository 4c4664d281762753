/** \file fp8 e4m3 / e5m2: every code, round to nearest even, subnormals, overflow to infinity, NaN. */
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "nki/dtype.h"
#include "test_support.h"

namespace {

float f(std::uint32_t bits) { return std::bit_cast<float>(bits); }
std::uint32_t bits_of(float x) { return std::bit_cast<std::uint32_t>(x); }
constexpr float inf = std::numeric_limits<float>::infinity();

using ToBits = std::uint8_t (*)(float);
using ToFloat = float (*)(std::uint8_t);

/**
 * An independent nearest-value search: the finite non-negative code whose value is nearest
 * to |x|, ties to the even code; at or past the largest finite value plus half its ulp,
 * infinity (IEEE overflow, the largest finite code being odd).
 */
std::uint8_t nearest_code(float x, ToFloat to_float, std::uint8_t max_code, std::uint8_t inf_code) {
  const double a = std::fabs(static_cast<double>(x));
  const double max = to_float(max_code);
  const double half_ulp = (max - to_float(static_cast<std::uint8_t>(max_code - 1))) / 2;
  std::uint8_t code;
  if (a >= max + half_ulp) {
    code = inf_code;
  } else {
    code = 0;
    double best = a;
    for (int c = 1; c <= max_code; ++c) {
      const double d = std::fabs(to_float(static_cast<std::uint8_t>(c)) - a);
      if (d < best || (d == best && (c & 1) == 0)) {
        best = d;
        code = static_cast<std::uint8_t>(c);
      }
    }
  }
  return static_cast<std::uint8_t>(code | (std::signbit(x) ? 0x80 : 0));
}

void check_against_search(ToBits to_bits, ToFloat to_float, std::uint8_t max_code, std::uint8_t inf_code) {
  std::vector<float> xs;
  // Every fp32 exponent, with mantissas that land on, between and exactly halfway between codes.
  for (std::uint32_t e = 0; e < 255; ++e) {
    for (std::uint32_t m : {0u, 1u, 0x7fffffu, 0x080000u, 0x0fffffu, 0x100000u, 0x100001u, 0x0fffffu, 0x200000u,
                            0x1fffffu, 0x200001u, 0x300000u, 0x400000u, 0x500000u, 0x600000u, 0x700000u, 0x7c0000u}) {
      xs.push_back(f((e << 23) | m));
      xs.push_back(f(0x80000000u | (e << 23) | m));
    }
  }
  // The midpoints of every pair of neighbouring codes, and a little either side of them.
  for (int c = 0; c < max_code; ++c) {
    const float lo = to_float(static_cast<std::uint8_t>(c)), hi = to_float(static_cast<std::uint8_t>(c + 1));
    const float mid = (lo + hi) / 2;  // exact: a few significant bits
    xs.insert(xs.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, inf), -mid});
  }
  for (std::uint32_t b = 0; b < 0x7f800000u; b += 4099) xs.push_back(f(b));
  for (float x : xs) {
    CAPTURE(bits_of(x));
    REQUIRE(to_bits(x) == nearest_code(x, to_float, max_code, inf_code));
  }
}

}  // namespace

TEST_CASE("fp8 e4m3: every one of the 256 codes converts to fp32 and back to itself") {
  for (int c = 0; c < 256; ++c) {
    const auto code = static_cast<std::uint8_t>(c);
    CAPTURE(c);
    REQUIRE(nki::float_to_fp8_e4m3_bits(nki::fp8_e4m3_bits_to_float(code)) == code);
    std::uint8_t stored = 0;  // and through the double-carried element path
    nki::store_element(&stored, nki::DType::fp8_e4m3, nki::load_element(&code, nki::DType::fp8_e4m3));
    REQUIRE(stored == code);
  }
}

TEST_CASE("fp8 e5m2: every one of the 256 codes converts to fp32 and back to itself") {
  for (int c = 0; c < 256; ++c) {
    const auto code = static_cast<std::uint8_t>(c);
    CAPTURE(c);
    REQUIRE(nki::float_to_fp8_e5m2_bits(nki::fp8_e5m2_bits_to_float(code)) == code);
    std::uint8_t stored = 0;
    nki::store_element(&stored, nki::DType::fp8_e5m2, nki::load_element(&code, nki::DType::fp8_e5m2));
    REQUIRE(stored == code);
  }
}

TEST_CASE("fp8 e4m3 decodes with bias 7, subnormals below 2^-6, inf and NaN at exponent 15") {
  CHECK(nki::fp8_e4m3_bits_to_float(0x00) == 0.0f);
  CHECK(bits_of(nki::fp8_e4m3_bits_to_float(0x80)) == 0x80000000u);
  CHECK(nki::fp8_e4m3_bits_to_float(0x01) == std::ldexp(1.0f, -9));    // smallest subnormal
  CHECK(nki::fp8_e4m3_bits_to_float(0x07) == std::ldexp(7.0f, -9));    // largest subnormal
  CHECK(nki::fp8_e4m3_bits_to_float(0x08) == std::ldexp(1.0f, -6));    // smallest normal
  CHECK(nki::fp8_e4m3_bits_to_float(0x38) == 1.0f);
  CHECK(nki::fp8_e4m3_bits_to_float(0x39) == 1.125f);
  CHECK(nki::fp8_e4m3_bits_to_float(0x77) == 240.0f);                  // largest finite
  CHECK(nki::fp8_e4m3_bits_to_float(0xf7) == -240.0f);
  CHECK(nki::fp8_e4m3_bits_to_float(0x78) == inf);
  CHECK(nki::fp8_e4m3_bits_to_float(0xf8) == -inf);
  CHECK(bits_of(nki::fp8_e4m3_bits_to_float(0x7c)) == 0x7fc00000u);    // quiet NaN
  CHECK(bits_of(nki::fp8_e4m3_bits_to_float(0xfc)) == 0xffc00000u);
  CHECK(bits_of(nki::fp8_e4m3_bits_to_float(0x79)) == 0x7f900000u);    // payload moved to the top bits
  CHECK(bits_of(nki::fp8_e4m3_bits_to_float(0x7f)) == 0x7ff00000u);
}

TEST_CASE("fp8 e5m2 decodes as the top byte of an fp16, bit for bit") {
  CHECK(nki::fp8_e5m2_bits_to_float(0x3c) == 1.0f);
  CHECK(nki::fp8_e5m2_bits_to_float(0x7b) == 57344.0f);  // largest finite
  CHECK(nki::fp8_e5m2_bits_to_float(0x01) == std::ldexp(1.0f, -16));
  CHECK(nki::fp8_e5m2_bits_to_float(0x04) == std::ldexp(1.0f, -14));
  CHECK(nki::fp8_e5m2_bits_to_float(0x7c) == inf);
  CHECK(bits_of(nki::fp8_e5m2_bits_to_float(0x7e)) == 0x7fc00000u);
  for (int c = 0; c < 256; ++c) {
    CAPTURE(c);
    REQUIRE(bits_of(nki::fp8_e5m2_bits_to_float(static_cast<std::uint8_t>(c))) ==
            bits_of(nki::fp16_bits_to_float(static_cast<std::uint16_t>(c << 8))));
  }
}

TEST_CASE("fp32 -> fp8 e4m3 rounds to nearest, ties to even") {
  CHECK(nki::float_to_fp8_e4m3_bits(1.0f) == 0x38);
  CHECK(nki::float_to_fp8_e4m3_bits(1.0625f) == 0x38);            // tie between 1 and 1.125: even stays
  CHECK(nki::float_to_fp8_e4m3_bits(std::nextafter(1.0625f, 2.0f)) == 0x39);
  CHECK(nki::float_to_fp8_e4m3_bits(1.1875f) == 0x3a);            // tie between 1.125 and 1.25: to even (1.25)
  CHECK(nki::float_to_fp8_e4m3_bits(-1.1875f) == 0xba);
  CHECK(nki::float_to_fp8_e4m3_bits(1.9375f) == 0x40);            // tie carries into the exponent: 2
  CHECK(nki::float_to_fp8_e4m3_bits(232.0f) == 0x76);             // tie between 224 and 240: even (224)
}

TEST_CASE("fp32 -> fp8 e4m3 overflows to infinity past 240 + half an ulp") {
  CHECK(nki::float_to_fp8_e4m3_bits(240.0f) == 0x77);
  CHECK(nki::float_to_fp8_e4m3_bits(std::nextafter(248.0f, 0.0f)) == 0x77);
  CHECK(nki::float_to_fp8_e4m3_bits(248.0f) == 0x78);  // the tie goes to the even code, infinity
  CHECK(nki::float_to_fp8_e4m3_bits(-248.0f) == 0xf8);
  CHECK(nki::float_to_fp8_e4m3_bits(1e30f) == 0x78);
  CHECK(nki::float_to_fp8_e4m3_bits(f(0x7f7fffff)) == 0x78);
  CHECK(nki::float_to_fp8_e4m3_bits(inf) == 0x78);
  CHECK(nki::float_to_fp8_e4m3_bits(-inf) == 0xf8);
}

TEST_CASE("fp32 -> fp8 e4m3 subnormals round to nearest even and underflow to signed zero") {
  CHECK(nki::float_to_fp8_e4m3_bits(std::ldexp(1.0f, -9)) == 0x01);
  CHECK(nki::float_to_fp8_e4m3_bits(std::ldexp(1.0f, -10)) == 0x00);   // tie between 0 and 2^-9: 0
  CHECK(nki::float_to_fp8_e4m3_bits(std::nextafter(std::ldexp(1.0f, -10), 1.0f)) == 0x01);
  CHECK(nki::float_to_fp8_e4m3_bits(std::ldexp(3.0f, -10)) == 0x02);   // tie between 1 and 2 units: 2
  CHECK(nki::float_to_fp8_e4m3_bits(std::ldexp(5.0f, -10)) == 0x02);   // tie between 2 and 3 units: 2
  CHECK(nki::float_to_fp8_e4m3_bits(std::ldexp(15.0f, -10)) == 0x08);  // tie between 7 units and 2^-6: the normal
  CHECK(nki::float_to_fp8_e4m3_bits(-std::ldexp(1.0f, -9)) == 0x81);
  CHECK(nki::float_to_fp8_e4m3_bits(-std::ldexp(1.0f, -12)) == 0x80);
  CHECK(nki::float_to_fp8_e4m3_bits(f(0x00000001)) == 0x00);           // fp32 subnormal
  CHECK(nki::float_to_fp8_e4m3_bits(f(0x80000001)) == 0x80);
  CHECK(nki::float_to_fp8_e4m3_bits(0.0f) == 0x00);
  CHECK(nki::float_to_fp8_e4m3_bits(-0.0f) == 0x80);
}

TEST_CASE("fp32 -> fp8 e5m2 rounds to nearest even, overflows past 57344, and keeps subnormals") {
  CHECK(nki::float_to_fp8_e5m2_bits(1.0f) == 0x3c);
  CHECK(nki::float_to_fp8_e5m2_bits(1.125f) == 0x3c);   // tie between 1 and 1.25: even stays
  CHECK(nki::float_to_fp8_e5m2_bits(1.375f) == 0x3e);   // tie between 1.25 and 1.5: to even (1.5)
  CHECK(nki::float_to_fp8_e5m2_bits(57344.0f) == 0x7b);
  CHECK(nki::float_to_fp8_e5m2_bits(61439.0f) == 0x7b);
  CHECK(nki::float_to_fp8_e5m2_bits(61440.0f) == 0x7c);  // 57344 + half an ulp: the tie goes to infinity
  CHECK(nki::float_to_fp8_e5m2_bits(-1e30f) == 0xfc);
  CHECK(nki::float_to_fp8_e5m2_bits(std::ldexp(1.0f, -16)) == 0x01);
  CHECK(nki::float_to_fp8_e5m2_bits(std::ldexp(1.0f, -17)) == 0x00);   // tie: 0
  CHECK(nki::float_to_fp8_e5m2_bits(std::ldexp(3.0f, -17)) == 0x02);   // tie between 1 and 2 units: 2
  CHECK(nki::float_to_fp8_e5m2_bits(std::ldexp(7.0f, -17)) == 0x04);   // tie between 3 units and 2^-14: the normal
  CHECK(nki::float_to_fp8_e5m2_bits(-0.0f) == 0x80);
}

TEST_CASE("fp32 -> fp8 keeps NaN a NaN: sign and top payload kept, quiet bit set when they are zero") {
  CHECK(nki::float_to_fp8_e4m3_bits(f(0x7fc00000)) == 0x7c);
  CHECK(nki::float_to_fp8_e4m3_bits(f(0xffc00000)) == 0xfc);
  CHECK(nki::float_to_fp8_e4m3_bits(f(0x7f800001)) == 0x7c);  // payload lost: quiet NaN, not infinity
  CHECK(nki::float_to_fp8_e4m3_bits(f(0xff800001)) == 0xfc);
  CHECK(nki::float_to_fp8_e4m3_bits(f(0x7f900000)) == 0x79);
  CHECK(nki::float_to_fp8_e4m3_bits(f(0x7fffffff)) == 0x7f);
  CHECK(nki::float_to_fp8_e5m2_bits(f(0x7fc00000)) == 0x7e);
  CHECK(nki::float_to_fp8_e5m2_bits(f(0xffc00000)) == 0xfe);
  CHECK(nki::float_to_fp8_e5m2_bits(f(0x7f800001)) == 0x7e);
  CHECK(nki::float_to_fp8_e5m2_bits(f(0x7fa00000)) == 0x7d);
  CHECK(nki::float_to_fp8_e5m2_bits(f(0x7fffffff)) == 0x7f);
}

TEST_CASE("fp32 -> fp8 e4m3 agrees with a nearest-value search over all codes") {
  check_against_search(nki::float_to_fp8_e4m3_bits, nki::fp8_e4m3_bits_to_float, 0x77, 0x78);
}

TEST_CASE("fp32 -> fp8 e5m2 agrees with a nearest-value search over all codes") {
  check_against_search(nki::float_to_fp8_e5m2_bits, nki::fp8_e5m2_bits_to_float, 0x7b, 0x7c);
}

TEST_CASE("fp8 values through round_to_dtype and store_element: fp32 first, then fp8") {
  CHECK(nki::round_to_dtype(240.0, nki::DType::fp8_e4m3) == 240.0);
  CHECK(nki::round_to_dtype(1e300, nki::DType::fp8_e4m3) == std::numeric_limits<double>::infinity());
  CHECK(nki::round_to_dtype(-1e300, nki::DType::fp8_e5m2) == -std::numeric_limits<double>::infinity());
  CHECK(nki::round_to_dtype(1.1875, nki::DType::fp8_e4m3) == 1.25);
  // 1.0625 + 2^-40 is above the tie, but rounds to 1.0625 in fp32 first: then the tie goes to 1.
  CHECK(nki::round_to_dtype(1.0625 + std::ldexp(1.0, -40), nki::DType::fp8_e4m3) == 1.0);
  CHECK(std::isnan(nki::round_to_dtype(std::nan(""), nki::DType::fp8_e5m2)));
  std::uint8_t b = 0;
  nki::store_element(&b, nki::DType::fp8_e4m3, -3.0);
  CHECK(b == 0xc4);
  nki::store_element(&b, nki::DType::fp8_e5m2, 57344.0);
  CHECK(b == 0x7b);
  CHECK(nki::load_element(&b, nki::DType::fp8_e5m2) == 57344.0);
}
