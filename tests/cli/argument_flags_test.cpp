/** \file --dtype and --input-or---shape: every command that takes them refuses the same mistake with the same line. */
#include "cli/cli_fixture.h"

using namespace clitest;

namespace {

/** `nki COMMAND ...` with its own way of giving tensor_add_tiled's two [256,1024] arguments, plus `more`. */
std::vector<std::string> command_args(const std::string& command, const TempDir& dir, std::vector<std::string> more) {
  std::vector<std::string> a{command, "tensor_add_tiled"};
  if (command == "run") {
    a.insert(a.end(), {"--input", dir.file("a.npy"), "--input", dir.file("b.npy"), "--output", dir.file("c.npy")});
  } else {
    if (command == "bench") a.insert(a.end(), {"--sweep", "P=64", "--csv", dir.file("c.csv")});
    a.insert(a.end(), {"--shape", "256x1024", "--shape", "256x1024"});
  }
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

/** Exit 2, the one line after the command's name, nothing on stdout, no output file, no temporary. */
void check_same_refusal(const std::vector<std::string>& commands, const TempDir& dir, const std::vector<std::string>& more,
                        const std::string& line) {
  for (const std::string& command : commands) {
    CAPTURE(command);
    const CliResult r = run_cli(command_args(command, dir, more));
    CHECK(r.status == 2);
    CHECK(r.err == "nki " + command + ": " + line + "\n");
    CHECK(r.out.empty());
    CHECK(!fs::exists(dir.file("c.npy")));
    CHECK(!fs::exists(dir.file("c.csv")));
    CHECK(dir.temporaries().empty());
  }
}

}  // namespace

TEST_CASE("cli: every command refuses an unknown --dtype with one line naming the float dtypes") {
  TempDir dir;
  write_iota_npy(dir.file("a.npy"), {256, 1024});
  write_iota_npy(dir.file("b.npy"), {256, 1024});
  // An integer dtype is no --dtype: integer arguments come from integer .npy files.
  for (const std::string dtype : {"int8", "fp64", "BF16", "nl.int32", "np.bfloat16"}) {
    check_same_refusal({"run", "profile", "compile", "bench"}, dir, {"--dtype", dtype},
                       "err_unknown_dtype: unknown --dtype \"" + dtype +
                           "\"; expected one of fp32, bf16, fp16, fp8_e4m3, fp8_e5m2, tf32, fp8_e4m3fn, fp8_e8m0fnu");
  }
}

TEST_CASE("cli: --dtype takes NKI's names, bare or as nl.NAME, for the same dtype as the short name") {
  TempDir dir;
  write_iota_npy(dir.file("a.npy"), {256, 1024});
  write_iota_npy(dir.file("b.npy"), {256, 1024});
  const auto output_with = [&](const std::string& dtype) {
    const CliResult r = run_cli({"run", "tensor_add_tiled", "--input", dir.file("a.npy"), "--input", dir.file("b.npy"),
                                 "--output", dir.file("c.npy"), "--dtype", dtype, "--quiet"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    return read_bytes(dir.file("c.npy"));
  };
  const std::string bf16 = output_with("bf16");
  CHECK(output_with("bfloat16") == bf16);
  CHECK(output_with("nl.bfloat16") == bf16);
  CHECK(output_with("nki.language.bfloat16") == bf16);
  CHECK(output_with("nl.float32") == output_with("fp32"));
  CHECK(output_with("float8_e4m3") == output_with("fp8_e4m3"));
  CHECK(output_with("fp8_e4m3") != bf16);
}

TEST_CASE("cli: every command with --shape refuses it beside --input with one line") {
  TempDir dir;
  write_iota_npy(dir.file("a.npy"), {256, 1024});
  check_same_refusal({"profile", "compile", "bench"}, dir, {"--input", dir.file("a.npy")},
                     "tensor_add_tiled: err_conflicting_flags: give the arguments as --input files or as --shape, not both");
}

TEST_CASE("cli: every command names the same --dtype choices in its help") {
  for (const std::string command : {"run", "profile", "compile", "bench"}) {
    CAPTURE(command);
    const CliResult r = run_cli({command, "--help"});
    CHECK(r.status == 0);
    CHECK(r.out.find("--dtype {fp32,bf16,fp16,fp8_e4m3,fp8_e5m2,tf32,fp8_e4m3fn,fp8_e8m0fnu}=fp32") != std::string::npos);
  }
}
