/**
 * \file `nki run` with integer, bool and float16 .npy inputs: an integer or bool input keeps
 * its dtype and exact values, an integer or bool output is written as that dtype.
 * (These runs use the reference executor: the compiled executor's integer support is separate work.)
 */
#include "cli_fixture.h"

using clitest::CliResult;
using clitest::run_cli;
using clitest::TempDir;

namespace {

using D = nki::DType;
const nki::Shape kShape{128, 512};

std::vector<double> pattern(double scale, double offset) {
  std::vector<double> v(static_cast<std::size_t>(nki::shape_elements(kShape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 97) * scale + offset;
  return v;
}

void write(const std::string& path, const std::vector<double>& v, D t) {
  clitest::write_bytes(path, nki::encode_npy(kShape, v, t));
}

/** Runs tensor_add on the reference executor and returns the output file, read back. */
nki::NpyArray run_add(const TempDir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"run",      "tensor_add", "--input",  dir.file("a.npy"), "--input",
                                dir.file("b.npy"), "--output", dir.file("c.npy"), "--executor", "reference"};
  args.insert(args.end(), extra.begin(), extra.end());
  const CliResult r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  const nki::NpyArray out = nki::read_npy(dir.file("c.npy"));
  REQUIRE(out.shape == kShape);
  return out;
}

}  // namespace

TEST_CASE("cli: int32 inputs give an int32 output of the exact sum") {
  TempDir dir;
  const auto a = pattern(1000, -40000), b = pattern(-3, 7);
  write(dir.file("a.npy"), a, D::int32);
  write(dir.file("b.npy"), b, D::int32);
  const nki::NpyArray out = run_add(dir);
  CHECK(out.dtype == D::int32);
  for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(out.values[i] == a[i] + b[i]);
}

TEST_CASE("cli: an integer input ignores --dtype") {
  TempDir dir;
  const auto a = pattern(1, 300), b = pattern(1, 0.0);  // 300 + 96 + 96 needs more than bf16's 8 bits
  write(dir.file("a.npy"), a, D::int16);
  write(dir.file("b.npy"), b, D::int16);
  const nki::NpyArray out = run_add(dir, {"--dtype", "bf16"});
  CHECK(out.dtype == D::int16);
  for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(out.values[i] == a[i] + b[i]);
}

TEST_CASE("cli: a uint8 output saturates at 255 and is written as uint8") {
  TempDir dir;
  write(dir.file("a.npy"), pattern(2, 60), D::uint8);   // 60 .. 252
  write(dir.file("b.npy"), pattern(1, 3), D::uint8);    // 3 .. 99
  const nki::NpyArray out = run_add(dir);
  CHECK(out.dtype == D::uint8);
  const auto a = pattern(2, 60), b = pattern(1, 3);
  for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(out.values[i] == std::min(255.0, a[i] + b[i]));
  const std::string bytes = clitest::read_bytes(dir.file("c.npy"));
  CHECK(bytes.find("'descr': '|u1'") != std::string::npos);
}

TEST_CASE("cli: bool inputs give a bool output") {
  TempDir dir;
  std::vector<double> a(static_cast<std::size_t>(nki::shape_elements(kShape))), b(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<double>(i % 2);
    b[i] = static_cast<double>((i / 2) % 2);
  }
  write(dir.file("a.npy"), a, D::boolean);
  write(dir.file("b.npy"), b, D::boolean);
  const nki::NpyArray out = run_add(dir);
  CHECK(out.dtype == D::boolean);
  for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(out.values[i] == (a[i] + b[i] != 0 ? 1.0 : 0.0));
  CHECK(clitest::read_bytes(dir.file("c.npy")).find("'descr': '|b1'") != std::string::npos);
}

TEST_CASE("cli: an int16 input with a float32 input computes in fp32 and stores int16, ties to even") {
  TempDir dir;
  const auto a = pattern(1, -50);
  const std::vector<double> b(a.size(), 0.5);
  write(dir.file("a.npy"), a, D::int16);
  write(dir.file("b.npy"), b, D::fp32);
  const nki::NpyArray out = run_add(dir);
  CHECK(out.dtype == D::int16);  // tensor_add's output has its first input's dtype
  for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(out.values[i] == nki::round_to_dtype(a[i] + 0.5, D::int16));
  CHECK(out.values[0] == -50);  // -49.5 rounds to the even -50
  CHECK(out.values[1] == -48);  // -48.5 rounds to the even -48
}

TEST_CASE("cli: float16 inputs are exact, converted to --dtype, and the output is float32") {
  TempDir dir;
  const auto a = pattern(0x1p-10, 1.0), b = pattern(0.25, 256.0);  // fp16 values; the sums need fp32
  write(dir.file("a.npy"), a, D::fp16);
  write(dir.file("b.npy"), b, D::fp16);
  const nki::NpyArray out = run_add(dir);
  CHECK(out.dtype == D::fp32);
  for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(out.values[i] == nki::round_to_dtype(a[i] + b[i], D::fp32));
}

TEST_CASE("cli: float64 and int64 .npy inputs (numpy's defaults) run as their fp32 and int32 roundings") {
  TempDir dir;
  const std::size_t n = static_cast<std::size_t>(nki::shape_elements(kShape));
  std::vector<double> a(n), b(n);
  std::vector<float> a32(n), b32(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Values with bits below fp32's: the file's float64 must be rounded, not truncated.
    a[i] = 1.0 + static_cast<double>(i % 89) * (1.0 + 0x1p-30) / 7.0;
    b[i] = -0.5 + static_cast<double>(i % 13) * 0x1p-26;
    a32[i] = static_cast<float>(a[i]);
    b32[i] = static_cast<float>(b[i]);
  }
  const auto write_f64 = [&](const std::string& path, const std::vector<double>& v) {
    std::string data(v.size() * 8, '\0');
    std::memcpy(data.data(), v.data(), data.size());
    clitest::write_bytes(path, nki::frame_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (128, 512), }", data));
  };
  write_f64(dir.file("a.npy"), a);
  write_f64(dir.file("b.npy"), b);
  const nki::NpyArray from_f64 = run_add(dir, {"--dtype", "bf16", "--quiet"});
  clitest::write_npy(dir.file("a.npy"), kShape, a32);
  clitest::write_npy(dir.file("b.npy"), kShape, b32);
  const nki::NpyArray from_f32 = run_add(dir, {"--dtype", "bf16", "--quiet"});
  CHECK(from_f64.data == from_f32.data);

  // int64 holding int32 values: an int32 tensor (the kernel adds them exactly while they are small).
  std::vector<std::int64_t> i64(n);
  for (std::size_t i = 0; i < n; ++i) i64[i] = static_cast<std::int64_t>(i % 1000) - 500;
  std::string data(n * 8, '\0');
  std::memcpy(data.data(), i64.data(), data.size());
  clitest::write_bytes(dir.file("a.npy"), nki::frame_npy(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (128, 512), }", data));
  write(dir.file("b.npy"), pattern(1, 0), D::int32);
  const nki::NpyArray sum = run_add(dir, {"--quiet"});
  CHECK(sum.dtype == D::int32);
  const std::vector<double> bv = pattern(1, 0);
  for (std::size_t i = 0; i < n; i += 1009) CHECK(sum.values[i] == static_cast<double>(i64[i]) + bv[i]);
}
