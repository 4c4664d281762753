/** \file `nki run mamba_v*`: five .npy files in NKI's argument order, the output allclose to the float64 reference. */
#include "cli_fixture.h"
#include "nki/kernel_references.h"
#include "nki/mamba_reference.h"
#include "test_support.h"

namespace ref = nki::kernels::reference;

TEST_CASE("nki run mamba_v2 and mamba_v3 - delta, u, A, B, C files give the SSM output") {
  const nki::kernels::MambaDims d{1, 256, 512, 4};
  const nki::Shape sd{d.batch, d.channels, d.seq_len}, sa{d.channels, d.state_size}, sb{d.batch, d.state_size, d.seq_len};
  const auto n = [](const nki::Shape& s) { return static_cast<std::size_t>(nki::shape_elements(s)); };
  const std::vector<float> delta = test::random_floats(n(sd), 11, 0.0f, 0.2f), u = test::random_floats(n(sd), 12, -1.0f, 1.0f);
  const std::vector<float> A = test::random_floats(n(sa), 13, -2.0f, -0.1f);
  const std::vector<float> B = test::random_floats(n(sb), 14, -1.0f, 1.0f), C = test::random_floats(n(sb), 15, -1.0f, 1.0f);
  auto wide = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
  const std::vector<double> want = ref::mamba(wide(delta), wide(u), wide(A), wide(B), wide(C), d);
  for (const char* kernel : {"mamba_v2", "mamba_v3"}) {
    CAPTURE(kernel);
    clitest::TempDir dir;
    std::vector<std::string> args{"run", kernel};
    const std::pair<const char*, const std::vector<float>*> inputs[] = {{"delta", &delta}, {"u", &u}, {"A", &A}, {"B", &B}, {"C", &C}};
    const nki::Shape shapes[] = {sd, sd, sa, sb, sb};
    for (std::size_t i = 0; i < 5; ++i) {
      const std::string path = dir.file(std::string(inputs[i].first) + ".npy");
      clitest::write_npy(path, shapes[i], *inputs[i].second);
      args.insert(args.end(), {"--input", path});
    }
    const std::string out = dir.file("out.npy");
    args.insert(args.end(), {"--output", out, "--dtype", "fp32"});
    const clitest::CliResult r = clitest::run_cli(args);
    REQUIRE_MESSAGE(r.status == 0, r.err);
    const nki::NpyArray arr = nki::read_npy(out);
    REQUIRE(arr.shape == sd);
    CHECK(ref::allclose_mismatch({arr.data.begin(), arr.data.end()}, want, {1e-5, 1e-3}) == "");
  }
}

TEST_CASE("nki run mamba_v3 - a sequence that is not a multiple of 512 is refused with the shape named") {
  clitest::TempDir dir;
  std::vector<std::string> args{"run", "mamba_v3"};
  const nki::Shape shapes[] = {{1, 128, 100}, {1, 128, 100}, {128, 2}, {1, 2, 100}, {1, 2, 100}};
  for (std::size_t i = 0; i < 5; ++i) {
    const std::string path = dir.file("in" + std::to_string(i) + ".npy");
    clitest::write_iota_npy(path, shapes[i]);
    args.insert(args.end(), {"--input", path});
  }
  args.insert(args.end(), {"--output", dir.file("out.npy")});
  const clitest::CliResult r = clitest::run_cli(args);
  CHECK(r.status != 0);
  CAPTURE(r.err);
  CHECK(r.err.find("mamba_v3: err_input_shape_not_tiled: delta [1,128,100]: channels must be a multiple of 128 and "
                   "seq_len a multiple of 512") != std::string::npos);
}
