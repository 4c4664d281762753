/** \file fp32 -> bf16 / fp16 rounding: nearest even, specials, subnormals; and NKI's promotion. */
#include <bit>
#include <cmath>
#include <limits>

#include "nki/dtype.h"
#include "test_support.h"

namespace {
float f(std::uint32_t bits) { return std::bit_cast<float>(bits); }
}  // namespace

TEST_CASE("fp32 -> bf16 rounds to nearest, ties to even") {
  CHECK(nki::float_to_bf16_bits(1.0f) == 0x3f80);
  CHECK(nki::float_to_bf16_bits(f(0x3f808000)) == 0x3f80);  // tie, even stays
  CHECK(nki::float_to_bf16_bits(f(0x3f818000)) == 0x3f82);  // tie, odd rounds up
  CHECK(nki::float_to_bf16_bits(f(0x3f808001)) == 0x3f81);  // above the tie
  CHECK(nki::float_to_bf16_bits(f(0x3f807fff)) == 0x3f80);  // below the tie
  CHECK(nki::float_to_bf16_bits(f(0x7f7fffff)) == 0x7f80);  // FLT_MAX overflows to +inf
}

TEST_CASE("fp32 -> bf16 keeps signed zeros, infinities and NaN (sign and top payload kept)") {
  CHECK(nki::float_to_bf16_bits(0.0f) == 0x0000);
  CHECK(nki::float_to_bf16_bits(-0.0f) == 0x8000);
  CHECK(nki::float_to_bf16_bits(std::numeric_limits<float>::infinity()) == 0x7f80);
  CHECK(nki::float_to_bf16_bits(-std::numeric_limits<float>::infinity()) == 0xff80);
  CHECK(nki::float_to_bf16_bits(f(0x7fc00000)) == 0x7fc0);
  CHECK(nki::float_to_bf16_bits(f(0xffc00000)) == 0xffc0);
  CHECK(nki::float_to_bf16_bits(f(0x7f800001)) == 0x7fc0);  // payload lost in narrowing: quiet NaN, not infinity
  CHECK(nki::float_to_bf16_bits(f(0x7fffffff)) == 0x7fff);
  CHECK(nki::float_to_bf16_bits(f(0x7f810000)) == 0x7f81);  // a widened bf16 signalling NaN comes back as it was
  CHECK(nki::float_to_fp16_bits(nki::fp16_bits_to_float(0x7c01)) == 0x7c01);
  CHECK(nki::float_to_fp16_bits(f(0x7f800001)) == 0x7e00);  // payload lost in narrowing: made quiet, still NaN
}

TEST_CASE("fp32 -> bf16 rounds subnormals like normals") {
  CHECK(nki::float_to_bf16_bits(f(0x00010000)) == 0x0001);
  CHECK(nki::float_to_bf16_bits(f(0x00008000)) == 0x0000);  // tie to even (0)
  CHECK(nki::float_to_bf16_bits(f(0x00018000)) == 0x0002);  // tie to even (2)
  CHECK(nki::bf16_bits_to_float(0x0001) == f(0x00010000));
}

TEST_CASE("fp32 -> fp16 rounds to nearest even, overflows at 65520, and keeps specials") {
  CHECK(nki::float_to_fp16_bits(1.0f) == 0x3c00);
  CHECK(nki::float_to_fp16_bits(65504.0f) == 0x7bff);
  CHECK(nki::float_to_fp16_bits(65519.0f) == 0x7bff);
  CHECK(nki::float_to_fp16_bits(65520.0f) == 0x7c00);
  CHECK(nki::float_to_fp16_bits(-0.0f) == 0x8000);
  CHECK(nki::float_to_fp16_bits(f(0x7fc00000)) == 0x7e00);
  CHECK(nki::float_to_fp16_bits(f(0x33800000)) == 0x0001);  // 2^-24: the smallest subnormal half
  CHECK(nki::float_to_fp16_bits(f(0x33000000)) == 0x0000);  // 2^-25: tie between 0 and 2^-24, to even (0)
  CHECK(nki::float_to_fp16_bits(f(0x33400000)) == 0x0001);  // 1.5 * 2^-25 rounds up to 2^-24
  CHECK(nki::float_to_fp16_bits(f(0x33c00000)) == 0x0002);  // 1.5 * 2^-24: tie between 1 and 2 units, to even
  CHECK(nki::float_to_fp16_bits(f(0x38800000)) == 0x0400);  // smallest normal
  CHECK(nki::float_to_fp16_bits(1.0f + 1.0f / 2048) == 0x3c00);  // tie, even stays
  CHECK(nki::float_to_fp16_bits(1.0f + 3.0f / 2048) == 0x3c02);  // tie, odd rounds up
  for (std::uint32_t h = 0; h < 0x10000; ++h) {  // every half converts back to itself
    const float x = nki::fp16_bits_to_float(static_cast<std::uint16_t>(h));
    if (std::isnan(x)) continue;
    REQUIRE(nki::float_to_fp16_bits(x) == h);
  }
}

TEST_CASE("promotion: equal dtypes stay, fp32 wins, fp16 with bf16 is fp32") {
  CHECK(nki::promote(nki::DType::bf16, nki::DType::bf16) == nki::DType::bf16);
  CHECK(nki::promote(nki::DType::fp16, nki::DType::fp16) == nki::DType::fp16);
  CHECK(nki::promote(nki::DType::bf16, nki::DType::fp32) == nki::DType::fp32);
  CHECK(nki::promote(nki::DType::fp16, nki::DType::bf16) == nki::DType::fp32);
  CHECK(nki::promote(nki::DType::bf16, nki::DType::fp16) == nki::DType::fp32);
}

TEST_CASE("dtype names parse in short and NKI spelling") {
  CHECK(nki::parse_dtype("bf16") == nki::DType::bf16);
  CHECK(nki::parse_dtype("bfloat16") == nki::DType::bf16);
  CHECK(nki::parse_dtype("float32") == nki::DType::fp32);
  CHECK(nki::parse_dtype("fp64") == std::nullopt);
  CHECK(nki::dtype_name(nki::DType::fp16) == "fp16");
}
