/** \file `nki run attn_fwd_v5`: q, k, v .npy files in, the attention output out, allclose to the tutorial's reference. */
#include "cli_fixture.h"
#include "nki/kernel_references.h"
#include "test_support.h"

using clitest::run_cli;
using clitest::TempDir;
namespace ref = nki::kernels::reference;

TEST_CASE("nki run attn_fwd_v5 - q, k, v [128, 512] files give softmax(q^T k) v^T [512, 128] in fp32") {
  TempDir dir;
  const std::int64_t d = 128, n = 512;
  std::vector<std::vector<double>> in;
  std::vector<std::string> args{"run", "attn_fwd_v5"};
  for (const char* name : {"q", "k", "v"}) {
    const std::vector<float> x = test::random_floats(static_cast<std::size_t>(d * n), 50 + static_cast<std::uint32_t>(in.size()), -1.0f, 1.0f);
    const std::string path = dir.file(std::string(name) + ".npy");
    clitest::write_npy(path, {d, n}, x);
    in.emplace_back(x.begin(), x.end());
    args.insert(args.end(), {"--input", path});
  }
  const std::string out = dir.file("out.npy");
  args.insert(args.end(), {"--output", out, "--dtype", "fp32"});
  const clitest::CliResult r = run_cli(args);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const nki::NpyArray arr = nki::read_npy(out);
  REQUIRE(arr.shape == nki::Shape{n, d});
  const std::vector<double> got(arr.data.begin(), arr.data.end());
  CHECK(ref::allclose_mismatch(got, ref::attention_forward(in[0], in[1], in[2], d, n), {1e-5, 1e-3}) == "");
}

TEST_CASE("nki run attn_fwd_v2 refuses a seqlen other than 128, naming the shapes") {
  TempDir dir;
  std::vector<std::string> args{"run", "attn_fwd_v2"};
  for (const char* name : {"q", "k", "v"}) {
    const std::string path = dir.file(std::string(name) + ".npy");
    clitest::write_npy(path, {128, 256}, std::vector<float>(128 * 256, 0.5f));
    args.insert(args.end(), {"--input", path});
  }
  args.insert(args.end(), {"--output", dir.file("out.npy"), "--dtype", "fp32"});
  const clitest::CliResult r = run_cli(args);
  CHECK(r.status != 0);
  CHECK(r.err.find("attn_fwd_v2: err_input_shape_not_tiled: q [128,256]: this version computes one tile, seqlen must be 128") !=
        std::string::npos);
}
