/** \file NKI promotion of two tile dtypes, weakly typed scalars, and the names and sizes of every dtype. */
#include "nki/dtype.h"
#include "test_support.h"

namespace {
using D = nki::DType;
bool sym(D a, D b, D want) { return nki::promote(a, b) == want && nki::promote(b, a) == want; }
}  // namespace

TEST_CASE("promotion table: every pair of dtypes, both orders") {
  // Rows and columns in nki::all_dtypes order: fp32 bf16 fp16 fp8_e4m3 fp8_e5m2 int8 int16 int32 uint8 uint16 uint32 bool.
  const D table[12][12] = {
    {D::fp32, D::fp32, D::fp32, D::fp32, D::fp32, D::fp32, D::fp32, D::fp32, D::fp32, D::fp32, D::fp32, D::fp32},  // fp32
    {D::fp32, D::bf16, D::fp32, D::bf16, D::bf16, D::bf16, D::bf16, D::bf16, D::bf16, D::bf16, D::bf16, D::bf16},  // bf16
    {D::fp32, D::fp32, D::fp16, D::fp16, D::fp16, D::fp16, D::fp16, D::fp16, D::fp16, D::fp16, D::fp16, D::fp16},  // fp16
    {D::fp32, D::bf16, D::fp16, D::fp8_e4m3, D::bf16, D::fp8_e4m3, D::fp8_e4m3, D::fp8_e4m3, D::fp8_e4m3, D::fp8_e4m3, D::fp8_e4m3, D::fp8_e4m3},  // fp8_e4m3
    {D::fp32, D::bf16, D::fp16, D::bf16, D::fp8_e5m2, D::fp8_e5m2, D::fp8_e5m2, D::fp8_e5m2, D::fp8_e5m2, D::fp8_e5m2, D::fp8_e5m2, D::fp8_e5m2},  // fp8_e5m2
    {D::fp32, D::bf16, D::fp16, D::fp8_e4m3, D::fp8_e5m2, D::int8, D::int16, D::int32, D::int16, D::int32, D::fp32, D::int8},  // int8
    {D::fp32, D::bf16, D::fp16, D::fp8_e4m3, D::fp8_e5m2, D::int16, D::int16, D::int32, D::int16, D::int32, D::fp32, D::int16},  // int16
    {D::fp32, D::bf16, D::fp16, D::fp8_e4m3, D::fp8_e5m2, D::int32, D::int32, D::int32, D::int32, D::int32, D::fp32, D::int32},  // int32
    {D::fp32, D::bf16, D::fp16, D::fp8_e4m3, D::fp8_e5m2, D::int16, D::int16, D::int32, D::uint8, D::uint16, D::uint32, D::uint8},  // uint8
    {D::fp32, D::bf16, D::fp16, D::fp8_e4m3, D::fp8_e5m2, D::int32, D::int32, D::int32, D::uint16, D::uint16, D::uint32, D::uint16},  // uint16
    {D::fp32, D::bf16, D::fp16, D::fp8_e4m3, D::fp8_e5m2, D::fp32, D::fp32, D::fp32, D::uint32, D::uint32, D::uint32, D::uint32},  // uint32
    {D::fp32, D::bf16, D::fp16, D::fp8_e4m3, D::fp8_e5m2, D::int8, D::int16, D::int32, D::uint8, D::uint16, D::uint32, D::boolean},  // bool
  };
  for (int i = 0; i < 12; ++i) {
    for (int j = 0; j < 12; ++j) {
      CAPTURE(nki::dtype_name(nki::all_dtypes[i]));
      CAPTURE(nki::dtype_name(nki::all_dtypes[j]));
      CHECK(nki::dtype_name(nki::promote(nki::all_dtypes[i], nki::all_dtypes[j])) == nki::dtype_name(table[i][j]));
    }
  }
}

TEST_CASE("promotion rule: equal dtypes stay") {
  for (D t : nki::all_dtypes) CHECK(nki::promote(t, t) == t);
}

TEST_CASE("promotion rule: fp16 with bf16 is fp32") { CHECK(sym(D::fp16, D::bf16, D::fp32)); }

TEST_CASE("promotion rule: fp8_e4m3 with fp8_e5m2 is bf16") { CHECK(sym(D::fp8_e4m3, D::fp8_e5m2, D::bf16)); }

TEST_CASE("promotion rule: two floats of different widths give the wider") {
  for (D t : {D::bf16, D::fp16, D::fp8_e4m3, D::fp8_e5m2}) CHECK(sym(D::fp32, t, D::fp32));
  CHECK(sym(D::bf16, D::fp8_e4m3, D::bf16));
  CHECK(sym(D::bf16, D::fp8_e5m2, D::bf16));
  CHECK(sym(D::fp16, D::fp8_e4m3, D::fp16));
  CHECK(sym(D::fp16, D::fp8_e5m2, D::fp16));
}

TEST_CASE("promotion rule: a float with an integer gives the float, however narrow") {
  for (D f : {D::fp32, D::bf16, D::fp16, D::fp8_e4m3, D::fp8_e5m2})
    for (D i : {D::int8, D::int16, D::int32, D::uint8, D::uint16, D::uint32, D::boolean}) CHECK(sym(f, i, f));
}

TEST_CASE("promotion rule: integers of one signedness give the wider") {
  CHECK(sym(D::int8, D::int16, D::int16));
  CHECK(sym(D::int8, D::int32, D::int32));
  CHECK(sym(D::int16, D::int32, D::int32));
  CHECK(sym(D::uint8, D::uint16, D::uint16));
  CHECK(sym(D::uint8, D::uint32, D::uint32));
  CHECK(sym(D::uint16, D::uint32, D::uint32));
}

TEST_CASE("promotion rule: mixed signedness gives the smallest signed type holding both") {
  CHECK(sym(D::int8, D::uint8, D::int16));
  CHECK(sym(D::int16, D::uint8, D::int16));
  CHECK(sym(D::int32, D::uint8, D::int32));
  CHECK(sym(D::int8, D::uint16, D::int32));
  CHECK(sym(D::int16, D::uint16, D::int32));
  CHECK(sym(D::int32, D::uint16, D::int32));
}

TEST_CASE("promotion rule: uint32 with a signed integer is fp32 (there is no int64)") {
  for (D s : {D::int8, D::int16, D::int32}) CHECK(sym(D::uint32, s, D::fp32));
}

TEST_CASE("promotion rule: bool gives way to anything") {
  for (D t : nki::all_dtypes) CHECK(sym(D::boolean, t, t));
}

TEST_CASE("scalar rule: an integer scalar keeps the tile's dtype") {
  for (D t : nki::all_dtypes)
    if (t != D::boolean) CHECK(nki::promote_scalar(t, false) == t);
}

TEST_CASE("scalar rule: an integer scalar with a bool tile gives int32") {
  CHECK(nki::promote_scalar(D::boolean, false) == D::int32);
}

TEST_CASE("scalar rule: a float scalar keeps a float tile's dtype") {
  for (D t : {D::fp32, D::bf16, D::fp16, D::fp8_e4m3, D::fp8_e5m2}) CHECK(nki::promote_scalar(t, true) == t);
}

TEST_CASE("scalar rule: a float scalar with an integer or bool tile gives fp32") {
  for (D t : {D::int8, D::int16, D::int32, D::uint8, D::uint16, D::uint32, D::boolean})
    CHECK(nki::promote_scalar(t, true) == D::fp32);
}

TEST_CASE("every dtype has a short name that parses back, a size and a kind") {
  struct Row {
    D t;
    const char* name;
    int bytes;
    bool is_float, is_signed;
  };
  const Row rows[] = {{D::fp32, "fp32", 4, true, false},        {D::bf16, "bf16", 2, true, false},
                      {D::fp16, "fp16", 2, true, false},        {D::fp8_e4m3, "fp8_e4m3", 1, true, false},
                      {D::fp8_e5m2, "fp8_e5m2", 1, true, false}, {D::int8, "int8", 1, false, true},
                      {D::int16, "int16", 2, false, true},      {D::int32, "int32", 4, false, true},
                      {D::uint8, "uint8", 1, false, false},     {D::uint16, "uint16", 2, false, false},
                      {D::uint32, "uint32", 4, false, false},   {D::boolean, "bool", 1, false, false}};
  for (const Row& r : rows) {
    CAPTURE(r.name);
    CHECK(nki::dtype_name(r.t) == r.name);
    CHECK(nki::parse_dtype(r.name) == r.t);
    CHECK(nki::dtype_bytes(r.t) == r.bytes);
    CHECK(nki::is_float(r.t) == r.is_float);
    CHECK(nki::is_integer(r.t) == !r.is_float);
    CHECK(nki::is_signed_integer(r.t) == r.is_signed);
  }
}

TEST_CASE("NKI long dtype names parse") {
  CHECK(nki::parse_dtype("float32") == D::fp32);
  CHECK(nki::parse_dtype("bfloat16") == D::bf16);
  CHECK(nki::parse_dtype("float16") == D::fp16);
  CHECK(nki::parse_dtype("float8_e4m3") == D::fp8_e4m3);
  CHECK(nki::parse_dtype("float8_e5m2") == D::fp8_e5m2);
  CHECK(nki::parse_dtype("bool_") == D::boolean);
  CHECK(nki::parse_dtype("bool") == D::boolean);
  CHECK(nki::parse_dtype("int64") == std::nullopt);
  CHECK(nki::parse_dtype("float64") == std::nullopt);
  CHECK(nki::parse_dtype("float8_e4m3fnuz") == std::nullopt);
  CHECK(nki::parse_dtype("") == std::nullopt);
  CHECK(nki::parse_dtype("Int8") == std::nullopt);
}
