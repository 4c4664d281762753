/** \file `nki run` says what it did: one summary line on success (kernel, grid, cores, executor, checks, files); --quiet silences it. */
#include "cli/cli_fixture.h"
#include "half_written_kernel.h"

using namespace clitest;

namespace {

CliResult run_tensor_add(const TempDir& dir, const std::string& kernel, std::vector<std::string> more) {
  std::vector<std::string> a{"run", kernel, "--input", dir.file("a.npy"), "--input", dir.file("b.npy"), "--output", dir.file("c.npy")};
  a.insert(a.end(), more.begin(), more.end());
  return run_cli(a);
}

}  // namespace

TEST_CASE("cli: nki run prints one summary line - kernel, grid, instances, cores, executor, checks, output") {
  TempDir dir;
  write_iota_npy(dir.file("a.npy"), {512, 1024});
  write_iota_npy(dir.file("b.npy"), {512, 1024});
  const std::string c = dir.file("c.npy");
  SUBCASE("two cores, compiled") {
    const CliResult r = run_tensor_add(dir, "tensor_add_nc2", {});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out == "nki run: tensor_add_nc2 ran grid spmd_dim(2,nc(2)),2 (8 instances on 2 cores) with the halide executor, "
                   "not checked (--checked runs checked mode); wrote " + c + "\n");
  }
  SUBCASE("the interpreter, with a schedule file") {
    const CliResult r = run_tensor_add(dir, "tensor_add", {"--executor", "reference", "--schedule", dir.file("s.json")});
    CHECK(r.status == 0);
    CHECK(r.out == "nki run: tensor_add ran grid 4,2 (8 instances on 1 core) with the reference executor, not checked "
                   "(--checked runs checked mode); wrote " + c + " and " + dir.file("s.json") + "\n");
  }
  SUBCASE("checked mode says what it checked") {
    const CliResult r = run_tensor_add(dir, "tensor_add_nc2", {"--checked"});
    CHECK(r.status == 0);
    CHECK(r.out == "nki run: tensor_add_nc2 ran grid spmd_dim(2,nc(2)),2 (8 instances on 2 cores) in checked mode: no read "
                   "of an unwritten element, no conflicting writes, every output element written; wrote " + c + "\n");
  }
  SUBCASE("--quiet: the output and nothing said") {
    const CliResult r = run_tensor_add(dir, "tensor_add_nc2", {"--quiet"});
    CHECK(r.status == 0);
    CHECK(r.out.empty());
    CHECK(r.err.empty());
    CHECK(fs::exists(c));
  }
}

TEST_CASE("cli: nki run --autotune names the configuration it ran in the summary line") {
  TempDir dir;
  // A shape no sweep of the suite records: the defaults run.
  write_iota_npy(dir.file("a.npy"), {768, 1024});
  write_iota_npy(dir.file("b.npy"), {768, 1024});
  const CliResult r = run_tensor_add(dir, "tensor_add_tiled", {"--autotune"});
  CHECK(r.status == 0);
  CHECK(r.out == "nki run: tensor_add_tiled ran grid spmd_dim(3,nc(2)) (6 instances on 2 cores) with the halide executor, "
                 "not checked (--checked runs checked mode); defaults P=128 F=512 (no autotuned configuration); wrote " +
                     dir.file("c.npy") + "\n");
}

TEST_CASE("cli: nki run warns when no instance wrote some elements of the output, and writes them as 0") {
  // A kernel of one's own that writes only the first 64 of 128 rows.
  nki::KernelRegistry registry;
  registry.add({"half_rows", "writes rows 0..63 of 128", test::half_written_kernel(), [](const std::vector<nki::Shape>&) { return nki::GridSpec{}; }});
  TempDir dir;
  write_iota_npy(dir.file("a.npy"), {128, 64});
  const std::string c = dir.file("c.npy");
  const std::vector<std::string> args{"nki", "run", "half_rows", "--input", dir.file("a.npy"), "--output", c, "--quiet"};
  std::vector<const char*> argv;
  for (const std::string& s : args) argv.push_back(s.c_str());
  std::ostringstream out, err;
  CHECK(nki::cli::run(static_cast<int>(argv.size()), argv.data(), registry, out, err) == 0);
  CHECK(err.str() == "nki run: half_rows: warning: no instance wrote 4096 of 8192 elements of the output (the first "
                     "[64,0]); they are written as 0 to " + c + ". --checked names the first read or write that went wrong\n");
  const nki::NpyArray got = nki::read_npy(c);
  CHECK(got.data[64 * 64 - 1] == static_cast<float>((64 * 64 - 1) % 1000));
  CHECK(got.data[64 * 64] == 0.0f);
  CHECK(got.data[128 * 64 - 1] == 0.0f);
}

TEST_CASE("cli: nki run --config runs that configuration, names it, and refuses what nki profile refuses") {
  TempDir dir;
  write_iota_npy(dir.file("a.npy"), {256, 1024});
  write_iota_npy(dir.file("b.npy"), {256, 1024});
  const std::string c = dir.file("c.npy");
  const CliResult r = run_tensor_add(dir, "tensor_add_tiled", {"--config", "P=64,F=256"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  // P=64: 256 rows are two rows of tiles per core, so the grid is spmd_dim(2,nc(2)).
  CHECK(r.out == "nki run: tensor_add_tiled ran grid spmd_dim(2,nc(2)) (4 instances on 2 cores) with the halide executor, "
                 "not checked (--checked runs checked mode); configuration P=64 F=256 (--config); wrote " + c + "\n");
  const nki::NpyArray got = nki::read_npy(c);
  REQUIRE(got.data.size() == 256u * 1024u);
  for (std::size_t i : {std::size_t{0}, std::size_t{1023}, std::size_t{256 * 1024 - 1}}) {
    CHECK(got.data[i] == 2.0f * static_cast<float>(i % 1000));
  }
  fs::remove(c);

  const auto refused = [&](std::vector<std::string> more, const std::string& line) {
    const CliResult bad = run_tensor_add(dir, more.front(), {more.begin() + 1, more.end()});
    CHECK(bad.status == 2);
    CHECK(bad.out.empty());
    CHECK(bad.err == line + "\n");
    CHECK(!fs::exists(c));
  };
  refused({"tensor_add_tiled", "--config", "P=64"},
          "nki run: tensor_add_tiled: err_invalid_config: --config \"P=64\": no value for F; expected a value for each of P, F");
  refused({"tensor_add_tiled", "--config", "P=64,F=256", "--autotune"},
          "nki run: tensor_add_tiled: err_conflicting_flags: give --autotune or --config \"P=64,F=256\", not both");
  refused({"tensor_add_tiled", "--config", "P=256,F=512"},
          "nki run: tensor_add_tiled: err_config_forbidden: --config \"P=256,F=512\": forbidden on trn2: "
          "err_num_partition_exceed_arch_limit: P=256 rows exceed the 128 partitions of trn2's SBUF");
}
