/** \file `nki run` on the tutorial kernels: .npy in, .npy out, allclose to the host reference. */
#include "cli_fixture.h"
#include "nki/kernel_references.h"
#include "test_support.h"

using clitest::run_cli;
using clitest::TempDir;
namespace ref = nki::kernels::reference;

namespace {

/** Runs `nki run kernel` on float32 files of these shapes and values; returns the output's values. */
std::vector<double> run_kernel(const std::string& kernel, const std::vector<nki::Shape>& shapes,
                               const std::vector<std::vector<float>>& values, const nki::Shape& out_shape) {
  TempDir dir;
  std::vector<std::string> args{"run", kernel};
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const std::string path = dir.file("in" + std::to_string(i) + ".npy");
    clitest::write_npy(path, shapes[i], values[i]);
    args.push_back("--input");
    args.push_back(path);
  }
  const std::string out = dir.file("out.npy");
  args.insert(args.end(), {"--output", out, "--dtype", "fp32"});
  const clitest::CliResult r = run_cli(args);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const nki::NpyArray arr = nki::read_npy(out);
  REQUIRE(arr.shape == out_shape);
  return {arr.data.begin(), arr.data.end()};
}

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

}  // namespace

TEST_CASE("nki run matmul_fully_optimized - lhsT [K,M] and rhs [K,N] files give lhsT^T @ rhs") {
  const std::vector<float> l = test::random_floats(256 * 128, 1, -1.0f, 1.0f), r = test::random_floats(256 * 512, 2, -1.0f, 1.0f);
  const auto got = run_kernel("matmul_fully_optimized", {{256, 128}, {256, 512}}, {l, r}, {128, 512});
  CHECK(ref::allclose_mismatch(got, ref::matmul(widen(l), widen(r), 256, 128, 512), {1e-4, 1e-2}) == "");
}

TEST_CASE("nki run rmsnorm - 250 rows, the last row tile masked") {
  const std::vector<float> a = test::random_floats(250 * 64, 3, -2.0f, 2.0f), g = test::random_floats(64, 4, 0.5f, 1.5f);
  const auto got = run_kernel("rmsnorm", {{250, 64}, {64}}, {a, g}, {250, 64});
  CHECK(ref::allclose_mismatch(got, ref::rmsnorm(widen(a), widen(g), 250, 64), {1e-5, 1e-3}) == "");
}

TEST_CASE("nki run transpose2d and average_pool2d - 3-D files") {
  const std::vector<float> in = test::random_floats(4 * 6 * 8, 5);
  CHECK(run_kernel("transpose2d", {{4, 6, 8}}, {in}, {4, 8, 6}) == ref::transpose2d(widen(in), 4, 6, 8));
  const auto pooled = run_kernel("average_pool2d", {{4, 6, 8}}, {in}, {4, 3, 4});
  CHECK(ref::allclose_mismatch(pooled, ref::average_pool2d(widen(in), 4, 6, 8, 2), {1e-8, 1e-5}) == "");
}
