/** \file `nki run` says what it did: one summary line on success (kernel, grid, cores, executor, checks, files); --quiet silences it. */
#include "cli/cli_fixture.h"

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
