/** \file Misspelled options are reported as unknown, with the option meant, before any other complaint. */
#include "cli/cli_fixture.h"

using namespace clitest;

TEST_CASE("cli: a misspelled option is unknown, with the closest option, not a required one missing") {
  TempDir dir;
  const std::string a = dir.file("a.npy"), c = dir.file("c.npy");
  SUBCASE("--inptu") {
    check_refused(run_cli({"run", "tensor_add", "--inptu", a, "--output", c}),
                  "nki run: unknown option \"--inptu\"; did you mean --input? (see nki run --help)", dir, c);
  }
  SUBCASE("-i, the start of one option") {
    check_refused(run_cli({"run", "tensor_add", "-i", a, "--output", c}),
                  "nki run: unknown option \"-i\"; did you mean --input? (see nki run --help)", dir, c);
  }
  SUBCASE("--ouptut=FILE") {
    check_refused(run_cli({"run", "tensor_add", "--input", a, "--input", a, "--ouptut=" + c}),
                  "nki run: unknown option \"--ouptut\"; did you mean --output? (see nki run --help)", dir, c);
  }
  SUBCASE("in a subcommand of a command") {
    const CliResult r = run_cli({"cache", "list", "--jsno"});
    CHECK(r.status == 2);
    CHECK(r.err == "nki cache list: unknown option \"--jsno\"; did you mean --json? (see nki cache list --help)\n");
  }
  SUBCASE("nothing close: the command's options listed") {
    const CliResult r = run_cli({"list", "--verbose"});
    CHECK(r.status == 2);
    CHECK(r.err == "nki list: unknown option \"--verbose\"; the options are --help\n");
    CHECK(r.out.empty());
  }
}

TEST_CASE("cli: values that start with a dash are not options") {
  TempDir dir;
  // A negative number after an option is its value: the complaint is about the value, not an unknown option.
  const CliResult r = run_cli({"bench", "tensor_add_tiled", "--sweep", "P=64", "--shape", "256x1024", "--shape", "256x1024",
                               "--iters", "-3"});
  CHECK(r.status == 2);
  CHECK(r.err.find("unknown option") == std::string::npos);
}
