/** \file Values to integer and bool dtypes: ties to even, saturation at each type's range, NaN -> 0, bool. */
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "nki/dtype.h"
#include "test_support.h"

namespace {

using D = nki::DType;
constexpr double inf = std::numeric_limits<double>::infinity();

struct Range {
  D t;
  double min, max;
};
constexpr Range ranges[] = {{D::int8, -128, 127},          {D::int16, -32768, 32767},
                            {D::int32, -2147483648.0, 2147483647.0}, {D::uint8, 0, 255},
                            {D::uint16, 0, 65535},         {D::uint32, 0, 4294967295.0}};

/** The value that store_element leaves in memory, read back with memcpy (not load_element). */
std::int64_t stored_raw(D t, double v) {
  unsigned char buf[8] = {};
  nki::store_element(buf, t, v);
  switch (t) {
    case D::int8: { std::int8_t x; std::memcpy(&x, buf, 1); return x; }
    case D::int16: { std::int16_t x; std::memcpy(&x, buf, 2); return x; }
    case D::int32: { std::int32_t x; std::memcpy(&x, buf, 4); return x; }
    case D::uint8: case D::boolean: { std::uint8_t x; std::memcpy(&x, buf, 1); return x; }
    case D::uint16: { std::uint16_t x; std::memcpy(&x, buf, 2); return x; }
    case D::uint32: { std::uint32_t x; std::memcpy(&x, buf, 4); return x; }
    default: FAIL("not an integer dtype"); return 0;
  }
}

}  // namespace

TEST_CASE("to an integer dtype: round to nearest, ties to even") {
  for (const Range& r : ranges) {
    CAPTURE(nki::dtype_name(r.t));
    CHECK(nki::round_to_dtype(0.5, r.t) == 0);
    CHECK(nki::round_to_dtype(1.5, r.t) == 2);
    CHECK(nki::round_to_dtype(2.5, r.t) == 2);
    CHECK(nki::round_to_dtype(3.5, r.t) == 4);
    CHECK(nki::round_to_dtype(2.4999999, r.t) == 2);
    CHECK(nki::round_to_dtype(2.5000001, r.t) == 3);
    CHECK(nki::round_to_dtype(100.49, r.t) == 100);
    CHECK(stored_raw(r.t, 2.5) == 2);
    CHECK(stored_raw(r.t, 3.5) == 4);
  }
  CHECK(nki::round_to_dtype(-0.5, D::int8) == 0);
  CHECK(!std::signbit(nki::round_to_dtype(-0.5, D::int8)));  // an integer has no negative zero
  CHECK(!std::signbit(nki::round_to_dtype(-0.0, D::int32)));
  CHECK(nki::round_to_dtype(-1.5, D::int16) == -2);
  CHECK(nki::round_to_dtype(-2.5, D::int16) == -2);
  CHECK(nki::round_to_dtype(-3.5, D::int32) == -4);
  CHECK(nki::round_to_dtype(-2.6, D::int32) == -3);
  CHECK(nki::round_to_dtype(4294967294.5, D::uint32) == 4294967294.0);
  CHECK(nki::round_to_dtype(2147483646.5, D::int32) == 2147483646.0);
  CHECK(nki::round_to_dtype(-2147483647.5, D::int32) == -2147483648.0);
}

TEST_CASE("to an integer dtype: saturation at each type's min and max") {
  for (const Range& r : ranges) {
    CAPTURE(nki::dtype_name(r.t));
    CHECK(nki::round_to_dtype(r.max, r.t) == r.max);
    CHECK(nki::round_to_dtype(r.min, r.t) == r.min);
    CHECK(nki::round_to_dtype(r.max + 0.5, r.t) == r.max);  // the tie rounds past the max either way
    CHECK(nki::round_to_dtype(r.max + 1, r.t) == r.max);
    CHECK(nki::round_to_dtype(r.min - 1, r.t) == r.min);
    CHECK(nki::round_to_dtype(r.min - 0.5, r.t) == r.min);
    CHECK(nki::round_to_dtype(1e300, r.t) == r.max);
    CHECK(nki::round_to_dtype(-1e300, r.t) == r.min);
    CHECK(nki::round_to_dtype(inf, r.t) == r.max);
    CHECK(nki::round_to_dtype(-inf, r.t) == r.min);
    CHECK(stored_raw(r.t, r.max + 1) == static_cast<std::int64_t>(r.max));
    CHECK(stored_raw(r.t, r.min - 1) == static_cast<std::int64_t>(r.min));
    CHECK(stored_raw(r.t, inf) == static_cast<std::int64_t>(r.max));
    CHECK(stored_raw(r.t, -inf) == static_cast<std::int64_t>(r.min));
  }
  CHECK(nki::round_to_dtype(-0.4, D::uint8) == 0);
  CHECK(nki::round_to_dtype(-0.6, D::uint8) == 0);
  CHECK(nki::round_to_dtype(-1.0, D::uint32) == 0);
}

TEST_CASE("to an integer dtype: NaN becomes 0") {
  for (const Range& r : ranges) {
    CAPTURE(nki::dtype_name(r.t));
    CHECK(nki::round_to_dtype(std::nan(""), r.t) == 0);
    CHECK(nki::round_to_dtype(-std::nan(""), r.t) == 0);
    CHECK(stored_raw(r.t, std::nan("")) == 0);
  }
}

TEST_CASE("to bool: 1 for any non-zero value, NaN included, 0 for zeros") {
  CHECK(nki::round_to_dtype(0.0, D::boolean) == 0);
  CHECK(nki::round_to_dtype(-0.0, D::boolean) == 0);
  CHECK(!std::signbit(nki::round_to_dtype(-0.0, D::boolean)));
  CHECK(nki::round_to_dtype(1.0, D::boolean) == 1);
  CHECK(nki::round_to_dtype(0.1, D::boolean) == 1);  // not rounded first
  CHECK(nki::round_to_dtype(1e-300, D::boolean) == 1);
  CHECK(nki::round_to_dtype(-3.0, D::boolean) == 1);
  CHECK(nki::round_to_dtype(inf, D::boolean) == 1);
  CHECK(nki::round_to_dtype(std::nan(""), D::boolean) == 1);
  CHECK(stored_raw(D::boolean, 7.0) == 1);
  CHECK(stored_raw(D::boolean, -0.0) == 0);
  CHECK(stored_raw(D::boolean, std::nan("")) == 1);
  const std::uint8_t one = 1, zero = 0;
  CHECK(nki::load_element(&one, D::boolean) == 1.0);
  CHECK(nki::load_element(&zero, D::boolean) == 0.0);
}

TEST_CASE("integer elements load exactly and store in two's complement, little endian") {
  for (const Range& r : ranges) {
    CAPTURE(nki::dtype_name(r.t));
    for (double v : {r.min, r.min + 1, 0.0, 1.0, r.max - 1, r.max}) {
      unsigned char buf[4] = {};
      nki::store_element(buf, r.t, v);
      REQUIRE(nki::load_element(buf, r.t) == v);
    }
  }
  unsigned char buf[4] = {};
  nki::store_element(buf, D::int16, -1.0);
  CHECK((buf[0] == 0xff && buf[1] == 0xff));
  nki::store_element(buf, D::int32, 258.0);
  CHECK((buf[0] == 2 && buf[1] == 1 && buf[2] == 0 && buf[3] == 0));
  nki::store_element(buf, D::uint32, 4294967295.0);
  CHECK((buf[0] == 0xff && buf[3] == 0xff));
  nki::store_element(buf, D::int8, -128.0);
  CHECK(buf[0] == 0x80);
}

TEST_CASE("float dtypes round to fp32 first, then to the dtype") {
  // 1 + 2^-8 + 2^-40 is above the bf16 tie, but is 1 + 2^-8 in fp32, a tie that goes to 1.
  CHECK(nki::round_to_dtype(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40), D::bf16) == 1.0);
  CHECK(nki::round_to_dtype(1.0 + std::ldexp(1.0, -30), D::fp32) == 1.0);
  CHECK(nki::round_to_dtype(0.1, D::fp32) == static_cast<double>(0.1f));
  CHECK(nki::round_to_dtype(1e39, D::fp32) == inf);
  CHECK(nki::round_to_dtype(65519.0, D::fp16) == 65504.0);
  CHECK(nki::round_to_dtype(65520.0, D::fp16) == inf);
  CHECK(std::signbit(nki::round_to_dtype(-0.0, D::bf16)));
}

TEST_CASE("a 16-bit NaN is loaded and stored through double with its bits unchanged") {
  for (std::uint16_t nan : {std::uint16_t{0x7f81}, std::uint16_t{0xffc0}, std::uint16_t{0x7fff}}) {
    std::uint16_t out = 0;
    nki::store_element(&out, D::bf16, nki::load_element(&nan, D::bf16));
    CHECK(out == nan);
  }
  for (std::uint16_t nan : {std::uint16_t{0x7c01}, std::uint16_t{0xfe00}, std::uint16_t{0x7dff}}) {
    std::uint16_t out = 0;
    nki::store_element(&out, D::fp16, nki::load_element(&nan, D::fp16));
    CHECK(out == nan);
  }
  const std::uint32_t snan = 0x7f800001u;
  std::uint32_t out = 0;
  nki::store_element(&out, D::fp32, nki::load_element(&snan, D::fp32));
  CHECK(out == snan);
}
