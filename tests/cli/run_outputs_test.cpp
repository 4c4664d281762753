/** \file `nki run` of a kernel returning several tensors: --output once per output, in the kernel's return order. */
#include "cli/cli_fixture.h"

using namespace clitest;

namespace {

namespace nl = nki::language;

/** copy = a, twice = a + a: two outputs of a [128, 8] input. */
const nki::Kernel& copy_and_twice() {
  static const nki::Kernel k = nki::jit(
      "copy_and_twice",
      [](nl::tensor a) {
        auto copy = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "copy");
        auto twice = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "twice");
        auto t = nl::load(a.all());
        nl::store(copy.all(), t);
        nl::store(twice.all(), t + t);
        return std::tuple{copy, twice};
      },
      {"a"});
  return k;
}

CliResult run_two(const std::vector<std::string>& more) {
  nki::KernelRegistry registry;
  registry.add({"copy_and_twice", "two outputs", copy_and_twice(), [](const std::vector<nki::Shape>&) { return nki::GridSpec{}; }});
  std::vector<std::string> args{"nki", "run", "copy_and_twice"};
  args.insert(args.end(), more.begin(), more.end());
  std::vector<const char*> argv;
  for (const std::string& s : args) argv.push_back(s.c_str());
  std::ostringstream out, err;
  const int status = nki::cli::run(static_cast<int>(argv.size()), argv.data(), registry, out, err);
  return {status, out.str(), err.str()};
}

}  // namespace

TEST_CASE("cli: nki run writes every output of a kernel, one --output each in its return order") {
  TempDir dir;
  write_iota_npy(dir.file("a.npy"), {128, 8});
  const std::string c = dir.file("copy.npy"), d = dir.file("twice.npy");
  const CliResult r = run_two({"--input", dir.file("a.npy"), "--output", c, "--output", d});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out == "nki run: copy_and_twice ran no grid (1 instance on 1 core) with the halide executor, not checked "
                 "(--checked runs checked mode); wrote " + c + " and " + d + "\n");
  const nki::NpyArray copy = nki::read_npy(c), twice = nki::read_npy(d);
  REQUIRE(copy.data.size() == 128u * 8u);
  REQUIRE(twice.data.size() == 128u * 8u);
  for (std::size_t i = 0; i < copy.data.size(); ++i) {
    CHECK(copy.data[i] == static_cast<float>(i % 1000));
    CHECK(twice.data[i] == 2.0f * static_cast<float>(i % 1000));
  }
}

TEST_CASE("cli: nki run refuses an --output count other than the kernel's outputs, before it runs, writing nothing") {
  TempDir dir;
  write_iota_npy(dir.file("a.npy"), {128, 8});
  const std::string c = dir.file("copy.npy"), d = dir.file("twice.npy"), e = dir.file("extra.npy");
  const std::string expected = "nki run: copy_and_twice: err_output_count: the kernel returns 2 tensors: give --output once "
                               "for each, in its return order (";
  const CliResult one = run_two({"--input", dir.file("a.npy"), "--output", c});
  CHECK(one.status == 2);
  CHECK(one.out.empty());
  CHECK(one.err == expected + "1 given)\n");
  const CliResult three = run_two({"--input", dir.file("a.npy"), "--output", c, "--output", d, "--output", e});
  CHECK(three.status == 2);
  CHECK(three.err == expected + "3 given)\n");
  const CliResult same = run_two({"--input", dir.file("a.npy"), "--output", c, "--output", c});
  CHECK(same.status == 2);
  CHECK(same.err == "nki run: err_output_not_writable: --output names the same file \"" + c + "\" twice\n");
  CHECK(!fs::exists(c));
  CHECK(!fs::exists(d));
  CHECK(!fs::exists(e));
  CHECK(dir.temporaries().empty());
}
