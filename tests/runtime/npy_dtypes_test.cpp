/** \file .npy of every accepted dtype: exact round trips, NumPy's descr, and the refusal of other dtypes. */
#include "nki/npy.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "test_support.h"

namespace {

using D = nki::DType;
using test::TempDir;
using test::write_bytes;

std::string header_of(const std::string& npy) {
  const std::size_t len =
      static_cast<unsigned char>(npy[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(npy[9])) << 8);
  return npy.substr(10, len);
}

struct Case {
  D t;
  const char* descr;
  std::vector<double> values;  // exact in the dtype
};

const double inf = std::numeric_limits<double>::infinity();

const Case cases[] = {
    {D::fp32, "'<f4'", {0.1f, -0.0, inf, 0x1p-149, -3.4028234663852886e38, 7}},
    {D::fp16, "'<f2'", {65504.0, -0x1p-24, -0.0, -inf, 1.0009765625, 0.5}},
    {D::int8, "'|i1'", {-128, 127, 0, -1, 5, 6}},
    {D::int16, "'<i2'", {-32768, 32767, 0, -1, 300, 6}},
    {D::int32, "'<i4'", {-2147483648.0, 2147483647.0, 16777217.0, -1, 0, 6}},
    {D::uint8, "'|u1'", {0, 255, 128, 1, 2, 3}},
    {D::uint16, "'<u2'", {0, 65535, 40000, 1, 2, 3}},
    {D::uint32, "'<u4'", {0, 4294967295.0, 16777217.0, 1, 2, 3}},
    {D::boolean, "'|b1'", {0, 1, 1, 0, 0, 1}},
};

}  // namespace

TEST_CASE("npy: each accepted dtype is written with NumPy's descr and read back exactly") {
  TempDir dir;
  for (const Case& c : cases) {
    CAPTURE(nki::dtype_name(c.t));
    const nki::Shape shape{2, 3};
    const std::string npy = nki::encode_npy(shape, c.values, c.t);
    const std::string dict = fmt::format("{{'descr': {}, 'fortran_order': False, 'shape': (2, 3), }}", c.descr);
    CHECK(header_of(npy).substr(0, dict.size()) == dict);
    CHECK(npy.size() == 10 + header_of(npy).size() + 6 * static_cast<std::size_t>(nki::dtype_bytes(c.t)));
    const std::string path = dir.file("x.npy");
    write_bytes(path, npy);
    const nki::NpyArray back = nki::read_npy(path);
    CHECK(back.dtype == c.t);
    CHECK(back.shape == shape);
    REQUIRE(back.values.size() == c.values.size());
    REQUIRE(back.data.size() == c.values.size());
    for (std::size_t i = 0; i < c.values.size(); ++i) {
      CHECK(back.values[i] == c.values[i]);
      CHECK(std::signbit(back.values[i]) == std::signbit(c.values[i]));
      CHECK(back.data[i] == static_cast<float>(c.values[i]));
    }
  }
}

TEST_CASE("npy: the bytes of integer and bool files are NumPy's, little endian") {
  const std::string i16 = nki::encode_npy({2}, std::vector<double>{-2, 258}, D::int16);
  CHECK(i16.substr(i16.size() - 4) == std::string("\xfe\xff\x02\x01", 4));
  const std::string u32 = nki::encode_npy({1}, std::vector<double>{4294967295.0}, D::uint32);
  CHECK(u32.substr(u32.size() - 4) == std::string("\xff\xff\xff\xff", 4));
  const std::string b = nki::encode_npy({3}, std::vector<double>{0, 2, -0.5}, D::boolean);
  CHECK(b.substr(b.size() - 3) == std::string("\x00\x01\x01", 3));
  const std::string u8 = nki::encode_npy({3}, std::vector<double>{-4, 2.5, 300}, D::uint8);  // converted: saturate, ties to even
  CHECK(u8.substr(u8.size() - 3) == std::string("\x00\x02\xff", 3));
}

TEST_CASE("npy: float16 and float32 NaN bits are kept") {
  TempDir dir;
  const std::string path = dir.file("h.npy");
  const std::string halfs("\x01\x7c\x00\xfe", 4);  // 0x7c01 (signalling), 0xfe00
  write_bytes(path, nki::frame_npy(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }", halfs));
  const nki::NpyArray h = nki::read_npy(path);
  CHECK(h.dtype == D::fp16);
  CHECK(std::bit_cast<std::uint32_t>(h.data[0]) == 0x7f802000u);
  CHECK(std::bit_cast<std::uint32_t>(h.data[1]) == 0xffc00000u);
  std::uint16_t back = 0;
  nki::store_element(&back, D::fp16, h.values[0]);
  CHECK(back == 0x7c01);
  const std::vector<double> f32{h.values[0]};
  const std::string npy = nki::encode_npy({1}, f32);
  std::uint32_t bits;
  std::memcpy(&bits, npy.data() + npy.size() - 4, 4);
  CHECK(bits == 0x7f802000u);
}

TEST_CASE("npy: a bool file reads any non-zero byte as 1") {
  TempDir dir;
  const std::string path = dir.file("b.npy");
  write_bytes(path, nki::frame_npy(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", std::string("\x00\x07\x01", 3)));
  const nki::NpyArray b = nki::read_npy(path);
  CHECK(b.values == std::vector<double>{0, 1, 1});
}

TEST_CASE("npy: a truncated integer file names its dtype") {
  TempDir dir;
  const std::string path = dir.file("t.npy");
  write_bytes(path, nki::frame_npy(1, "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }", "abcdefgh"));
  CHECK(test::user_error_of([&] { nki::read_npy(path); }) ==
        "err_invalid_npy: " + path + ": truncated data: shape [2,3] of int16 needs 12 bytes after the header, the file has 8");
}

TEST_CASE("npy: other dtypes are refused with one line quoting the dtype and listing the accepted ones") {
  TempDir dir;
  const std::string path = dir.file("r.npy");
  for (const char* descr : {"'<u8'", "'>i4'", "'>f2'", "'>f8'", "'<c8'", "'|V2'", "'<U3'", "'|i2'"}) {
    CAPTURE(descr);
    write_bytes(path, nki::frame_npy(1, fmt::format("{{'descr': {}, 'fortran_order': False, 'shape': (2,), }}", descr),
                                     std::string(16, '\0')));
    CHECK(test::user_error_of([&] { nki::read_npy(path); }) ==
          fmt::format("err_invalid_npy: {}: holds dtype {}; expected float32 ('<f4'), float64 ('<f8'), float16 "
                      "('<f2'), int8 ('|i1'), int16 ('<i2'), int32 ('<i4'), int64 ('<i8'), uint8 ('|u1'), uint16 "
                      "('<u2'), uint32 ('<u4') or bool ('|b1'), little endian",
                      path, descr));
  }
}

TEST_CASE("npy: encode_npy refuses dtypes a .npy cannot hold, and a wrong value count") {
  CHECK_THROWS_AS(nki::encode_npy({1}, std::vector<double>{1.0}, D::bf16), nki::InternalError);
  CHECK_THROWS_AS(nki::encode_npy({1}, std::vector<double>{1.0}, D::fp8_e4m3), nki::InternalError);
  CHECK_THROWS_AS(nki::encode_npy({2}, std::vector<double>{1.0}, D::int32), nki::InternalError);
}

TEST_CASE("npy: numpy's defaults are read narrowed - float64 to fp32 rounded to nearest even, int64 to int32") {
  TempDir dir;
  const std::string path = dir.file("r.npy");
  // 1 + 2^-24 is a tie between 1 and 1 + 2^-23 in fp32: it goes to even (1); 1 + 3 * 2^-24 goes up to 1 + 2^-22.
  const std::vector<double> f64{1.0 + 0x1p-24, 1.0 + 3 * 0x1p-24, -2.5, 1e300};
  std::string f64_bytes(f64.size() * 8, '\0');
  std::memcpy(f64_bytes.data(), f64.data(), f64_bytes.size());
  write_bytes(path, nki::frame_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", f64_bytes));
  const nki::NpyArray f = nki::read_npy(path);
  CHECK(f.dtype == nki::DType::fp32);
  CHECK(f.shape == nki::Shape{2, 2});
  CHECK(f.data == std::vector<float>{1.0f, 1.0f + 0x1p-22f, -2.5f, std::numeric_limits<float>::infinity()});
  CHECK(f.values == std::vector<double>{1.0, 1.0 + 0x1p-22, -2.5, std::numeric_limits<double>::infinity()});

  const std::vector<std::int64_t> i64{-2147483648LL, 2147483647LL, 0, -7};
  std::string i64_bytes(i64.size() * 8, '\0');
  std::memcpy(i64_bytes.data(), i64.data(), i64_bytes.size());
  write_bytes(path, nki::frame_npy(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }", i64_bytes));
  const nki::NpyArray i = nki::read_npy(path);
  CHECK(i.dtype == nki::DType::int32);
  CHECK(i.values == std::vector<double>{-2147483648.0, 2147483647.0, 0.0, -7.0});
}
