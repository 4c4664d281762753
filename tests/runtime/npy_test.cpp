/** \file .npy files: encode/read round trips, NumPy's header layout, version 2.0, and every refusal. */
#include "nki/npy.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>

#include "test_support.h"

namespace fs = std::filesystem;

namespace {

using test::TempDir;
using test::write_bytes;

std::vector<std::uint32_t> bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> out(v.size());
  std::memcpy(out.data(), v.data(), v.size() * 4);
  return out;
}

/** The header dict text of an encoded .npy (between the length field and the data), version 1.0. */
std::string header_of(const std::string& npy) {
  const std::size_t len = static_cast<unsigned char>(npy[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(npy[9])) << 8);
  return npy.substr(10, len);
}

std::string float_bytes(const std::vector<float>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * 4};
}

}  // namespace

TEST_CASE("npy: encode then read gives back the shape and every value bit for bit, 1-D, 2-D and 3-D") {
  TempDir dir;
  const float inf = std::numeric_limits<float>::infinity();
  for (const nki::Shape& shape : {nki::Shape{7}, nki::Shape{1}, nki::Shape{3, 5}, nki::Shape{128, 512},
                                  nki::Shape{2, 3, 4}, nki::Shape{1, 1, 1}}) {
    CAPTURE(nki::shape_str(shape));
    std::vector<float> v = test::random_floats(static_cast<std::size_t>(nki::shape_elements(shape)), 42);
    const float specials[] = {-0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), 0x1p-140f /* subnormal */};
    for (std::size_t i = 0; i < v.size() && i < 5; ++i) v[i] = specials[i];
    const std::string path = dir.file("x.npy");
    write_bytes(path, nki::encode_npy(shape, v));
    const nki::NpyArray back = nki::read_npy(path);
    CHECK(back.shape == shape);
    CHECK(bits(back.data) == bits(v));
  }
}

TEST_CASE("npy: the encoded header is NumPy's: version 1.0, the dict, space padding to 64 bytes, a newline") {
  struct Case {
    nki::Shape shape;
    const char* shape_text;
  };
  for (const Case& c : {Case{{7}, "(7,)"}, Case{{3, 5}, "(3, 5)"}, Case{{2, 3, 4}, "(2, 3, 4)"},
                        Case{{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, "(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)"}}) {
    CAPTURE(c.shape_text);
    const std::vector<float> v(static_cast<std::size_t>(nki::shape_elements(c.shape)), 1.5f);
    const std::string npy = nki::encode_npy(c.shape, v);
    CHECK(npy.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
    const std::string header = header_of(npy);
    const std::string dict = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}", c.shape_text);
    CHECK(header.substr(0, dict.size()) == dict);
    CHECK(header.back() == '\n');
    CHECK(header.find_first_not_of(' ', dict.size()) == header.size() - 1);
    CHECK((10 + header.size()) % 64 == 0);
    CHECK(npy.size() == 10 + header.size() + v.size() * 4);
  }
}

TEST_CASE("npy: the data starts on a 64-byte boundary for headers of every length") {
  // Ranks 1..8 and sizes of 1..5 digits move the dict across the 64-byte boundaries.
  for (int rank = 1; rank <= 8; ++rank) {
    for (std::int64_t d : {1, 12, 123, 1234, 12345}) {
      nki::Shape shape(static_cast<std::size_t>(rank), 1);
      shape[0] = d;
      CAPTURE(nki::shape_str(shape));
      const std::string npy = nki::encode_npy(shape, std::vector<float>(static_cast<std::size_t>(d), 0.0f));
      const std::size_t data_start = 10 + header_of(npy).size();
      CHECK(data_start % 64 == 0);
      CHECK(npy.size() - data_start == static_cast<std::size_t>(d) * 4);
    }
  }
}

TEST_CASE("npy: a version 2.0 header (4-byte length) is read") {
  TempDir dir;
  const std::vector<float> v = test::random_floats(6, 9);
  const std::string path = dir.file("v2.npy");
  write_bytes(path, nki::frame_npy(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", float_bytes(v)));
  const nki::NpyArray back = nki::read_npy(path);
  CHECK(back.shape == nki::Shape{2, 3});
  CHECK(bits(back.data) == bits(v));
}

TEST_CASE("npy: a version 3.0 header and a dict in another key order are read") {
  TempDir dir;
  const std::vector<float> v = test::random_floats(4, 10);
  const std::string path = dir.file("v3.npy");
  write_bytes(path, nki::frame_npy(3, "{'shape': (4,), 'fortran_order': False, 'descr': '<f4'}", float_bytes(v)));
  const nki::NpyArray back = nki::read_npy(path);
  CHECK(back.shape == nki::Shape{4});
  CHECK(bits(back.data) == bits(v));
}

TEST_CASE("npy: encode_npy with a value count that does not match the shape is an internal error") {
  CHECK_THROWS_AS(nki::encode_npy({2, 3}, std::vector<float>(5, 0.0f)), nki::InternalError);
}

TEST_CASE("npy: refusals name the file and say what is wrong") {
  TempDir dir;
  const std::string p = dir.file("f.npy");
  const std::string ok_data = float_bytes(std::vector<float>(6, 1.0f));
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  const std::string accepted =
      "expected float32 ('<f4'), float64 ('<f8'), float16 ('<f2'), int8 ('|i1'), int16 ('<i2'), int32 ('<i4'), "
      "int64 ('<i8'), uint8 ('|u1'), uint16 ('<u2'), uint32 ('<u4') or bool ('|b1'), little endian";
  std::string bytes, why;
  SUBCASE("empty") {
    bytes = "";
    why = "is empty, not a .npy file";
  }
  SUBCASE("bad magic") {
    bytes = "PK\x03\x04 a zip file";
    why = "not a .npy file (bad magic: it does not start with \"\\x93NUMPY\")";
  }
  SUBCASE("truncated before the version") {
    bytes = "\x93NUM";
    why = "truncated .npy header: the file has only 4 bytes";
  }
  SUBCASE("truncated in a version 2.0 length") {
    bytes = std::string("\x93NUMPY\x02\x00\x10\x00", 10);
    why = "truncated .npy header: the file has only 10 bytes";
  }
  SUBCASE("truncated in the header") {
    bytes = nki::frame_npy(1, ok_dict, ok_data).substr(0, 40);
    why = "truncated .npy header: the header needs 128 bytes, the file has 40";
  }
  SUBCASE("truncated in the data") {
    bytes = nki::frame_npy(1, ok_dict, ok_data.substr(0, 20));
    why = "truncated data: shape [2,3] of float32 needs 24 bytes after the header, the file has 20";
  }
  SUBCASE("bytes after the data") {
    bytes = nki::frame_npy(1, ok_dict, ok_data + "xyzw");
    why = "has 4 bytes after the data of shape [2,3] of float32 (24 bytes); the file is not a single array";
  }
  SUBCASE("big-endian float64") {
    bytes = nki::frame_npy(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 3), }", ok_data + ok_data);
    why = "holds dtype '>f8'; " + accepted;
  }
  SUBCASE("float64 data truncated") {
    bytes = nki::frame_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", ok_data);
    why = "truncated data: shape [2,3] of float64 needs 48 bytes after the header, the file has 24";
  }
  SUBCASE("an int64 value outside int32") {
    std::string data(48, '\0');
    const std::int64_t big = std::int64_t{1} << 31;
    std::memcpy(data.data() + 16, &big, sizeof big);
    bytes = nki::frame_npy(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }", data);
    why = "holds int64 value 2147483648 at flat index 2, outside int32 (the kernel's integer type); expected int64 "
          "values from -2147483648 to 2147483647";
  }
  SUBCASE("big-endian float32") {
    bytes = nki::frame_npy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", ok_data);
    why = "holds dtype '>f4'; " + accepted;
  }
  SUBCASE("a structured dtype") {
    bytes = nki::frame_npy(1, "{'descr': [('x', '<f4'), ('y', '<f4')], 'fortran_order': False, 'shape': (3,), }", ok_data);
    why = "holds dtype [('x', '<f4'), ('y', '<f4')]; " + accepted;
  }
  SUBCASE("Fortran order") {
    bytes = nki::frame_npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", ok_data);
    why = "is in Fortran order; expected C order";
  }
  SUBCASE("a 0-d scalar") {
    bytes = nki::frame_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", ok_data.substr(0, 4));
    why = "holds a 0-d scalar; expected an array";
  }
  SUBCASE("an empty dimension") {
    bytes = nki::frame_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", "");
    why = "has shape [0,3] with an empty dimension";
  }
  SUBCASE("no descr") {
    bytes = nki::frame_npy(1, "{'fortran_order': False, 'shape': (2, 3), }", ok_data);
    why = "the .npy header has no 'descr' entry";
  }
  SUBCASE("a malformed shape") {
    bytes = nki::frame_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", ok_data);
    why = "malformed shape (2, x) in the .npy header";
  }
  SUBCASE("a shape that is not a tuple") {
    bytes = nki::frame_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': 6, }", ok_data);
    why = "malformed shape 6 in the .npy header; expected a tuple such as (512, 2048)";
  }
  SUBCASE("an unknown format version") {
    bytes = nki::frame_npy(1, ok_dict, ok_data);
    bytes[6] = '\x04';
    why = "unsupported .npy format version 4.0 (1.0, 2.0 and 3.0 are read)";
  }
  write_bytes(p, bytes);
  CHECK(test::user_error_of([&] { nki::read_npy(p); }) == "err_invalid_npy: " + p + ": " + why);
}

TEST_CASE("npy: a missing file is refused as no such file, naming it") {
  TempDir dir;
  CHECK(test::user_error_of([&] { nki::read_npy(dir.file("none.npy")); }) ==
        "err_invalid_npy: " + dir.file("none.npy") + ": no such file");
}

TEST_CASE("npy: a directory is refused as not a .npy file") {
  TempDir dir;
  fs::create_directory(dir.file("d.npy"));
  CHECK(test::user_error_of([&] { nki::read_npy(dir.file("d.npy")); }) ==
        "err_invalid_npy: " + dir.file("d.npy") + ": is a directory, not a .npy file");
}
