/** \file An output path that cannot be written is refused before any input is read or any work is done. */
#include "cli_fixture.h"

TEST_CASE("cli: an unwritable --output is refused before the inputs are read") {
  clitest::TempDir dir;
  // The inputs do not exist: had they been read first, the error would name them.
  const std::string out = dir.file("missing/c.npy");
  const clitest::CliResult r = clitest::run_cli({"run", "tensor_add", "--input", dir.file("a.npy"), "--input",
                                                 dir.file("b.npy"), "--output", out});
  clitest::check_refused(r,
                         "nki run: err_output_not_writable: " + out + ": cannot write: the directory \"" +
                             dir.file("missing") + "\" does not exist",
                         dir, out);
}
