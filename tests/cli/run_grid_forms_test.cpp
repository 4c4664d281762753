/** \file --grid as docs/kernels.md and Python write it: the row-wise kernels on any one-axis grid, brackets, nl. prefixes. */
#include "cli/cli_fixture.h"

using namespace clitest;

namespace {

/** `nki run KERNEL` on x [R, C] (and, for rmsnorm, g [C]) with `grid` (none when empty); the output's bytes. */
std::string run_rows(const TempDir& dir, const std::string& kernel, const std::string& grid) {
  write_iota_npy(dir.file("x.npy"), {300, 64});
  write_iota_npy(dir.file("g.npy"), {64});
  write_iota_npy(dir.file("g1.npy"), {1, 64});
  std::vector<std::string> a{"run", kernel, "--input", dir.file("x.npy")};
  if (kernel == "rmsnorm") a.insert(a.end(), {"--input", dir.file("g.npy")});
  if (kernel == "layernorm") a.insert(a.end(), {"--input", dir.file("g1.npy"), "--input", dir.file("g1.npy")});
  a.insert(a.end(), {"--output", dir.file("y.npy"), "--quiet"});
  if (!grid.empty()) a.insert(a.end(), {"--grid", grid});
  const CliResult r = run_cli(a);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.err.empty());
  return read_bytes(dir.file("y.npy"));
}

}  // namespace

TEST_CASE("cli: softmax, rmsnorm and layernorm run on a grid of one axis, as docs/kernels.md says, with the same output") {
  TempDir dir;
  for (const std::string kernel : {"softmax", "rmsnorm", "layernorm"}) {
    CAPTURE(kernel);
    const std::string whole = run_rows(dir, kernel, "");
    CHECK(run_rows(dir, kernel, "spmd_dim(1,nc(2))") == whole);
    CHECK(run_rows(dir, kernel, "[nl.nc(2)]") == whole);
    CHECK(run_rows(dir, kernel, "3") == whole);    // 3 tiles, one per instance
    CHECK(run_rows(dir, kernel, "(8,)") == whole);  // more instances than tiles: the extra ones are masked off
  }
}

TEST_CASE("cli: a grid a kernel does not take names what it takes, never a grid that does not parse") {
  TempDir dir;
  write_iota_npy(dir.file("x.npy"), {300, 64});
  const std::string y = dir.file("y.npy");
  check_refused(run_cli({"run", "softmax", "--input", dir.file("x.npy"), "--output", y, "--grid", "2,2"}),
                "nki run: softmax: err_grid_does_not_fit: grid \"2,2\" has logical shape [2,2], but inputs [300,64] "
                "need no grid (leave out --grid), or one axis of any size (e.g. \"spmd_dim(1,nc(2))\")",
                dir, y);
  write_iota_npy(dir.file("q.npy"), {128, 128});
  check_refused(run_cli({"run", "attn_fwd_v1", "--input", dir.file("q.npy"), "--input", dir.file("q.npy"), "--input",
                         dir.file("q.npy"), "--output", y, "--grid", "2"}),
                "nki run: attn_fwd_v1: err_grid_does_not_fit: grid \"2\" has logical shape [2], but inputs [128,128] "
                "[128,128] [128,128] need no grid (leave out --grid)",
                dir, y);
}
