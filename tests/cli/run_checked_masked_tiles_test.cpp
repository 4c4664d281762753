/**
 * \file `nki run --checked` on the row-wise library kernels with a masked last row tile: the
 * rows past the end are undefined through every op (masked load, unmasked math) and never
 * stored, so checked mode accepts them and the result matches the host.
 */
#include "cli_fixture.h"
#include "nki/kernel_references.h"
#include "nki/kernels.h"
#include "test_support.h"

using clitest::run_cli;
using clitest::TempDir;
namespace ref = nki::kernels::reference;

namespace {

std::vector<double> run_checked(const std::string& kernel, const std::vector<nki::Shape>& shapes,
                                const std::vector<std::vector<float>>& values) {
  TempDir dir;
  std::vector<std::string> args{"run", kernel, "--checked"};
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const std::string path = dir.file("in" + std::to_string(i) + ".npy");
    clitest::write_npy(path, shapes[i], values[i]);
    args.insert(args.end(), {"--input", path});
  }
  const std::string out = dir.file("out.npy");
  args.insert(args.end(), {"--output", out, "--dtype", "fp32"});
  const clitest::CliResult r = run_cli(args);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const nki::NpyArray arr = nki::read_npy(out);
  REQUIRE(arr.shape == shapes[0]);
  return {arr.data.begin(), arr.data.end()};
}

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

}  // namespace

TEST_CASE("nki run --checked softmax, rmsnorm and layernorm - 250 rows, the last tile's masked-off rows never stored") {
  const std::int64_t rows = 250, d = 64;
  const std::vector<float> x = test::random_floats(rows * d, 21, -2.0f, 2.0f);
  const std::vector<float> g = test::random_floats(d, 22, 0.5f, 1.5f), b = test::random_floats(d, 23, -1.0f, 1.0f);
  CHECK(ref::allclose_mismatch(run_checked("softmax", {{rows, d}}, {x}), ref::softmax(widen(x), rows, d), {1e-6, 1e-4}) == "");
  CHECK(ref::allclose_mismatch(run_checked("rmsnorm", {{rows, d}, {d}}, {x, g}), ref::rmsnorm(widen(x), widen(g), rows, d),
                               {1e-5, 1e-3}) == "");
  CHECK(ref::allclose_mismatch(run_checked("layernorm", {{rows, d}, {1, d}, {1, d}}, {x, g, b}),
                               ref::layernorm(widen(x), widen(g), widen(b), rows, d, nki::kernels::kLayernormEpsilon),
                               {1e-5, 1e-3}) == "");
}
