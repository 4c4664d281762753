/**
 * \file `nki run` on bad input: one line on stderr naming the file or value, exit
 * status 2, and no output file (nor a temporary beside it).
 */
#include "cli_fixture.h"

using clitest::check_refused;
using clitest::CliResult;
using clitest::run_cli;
using clitest::TempDir;

namespace {

/** Two valid [128, 512] inputs a.npy and b.npy in `dir` (one tensor_add tile). */
void write_valid_inputs(const TempDir& dir, const nki::Shape& shape = {128, 512}) {
  clitest::write_iota_npy(dir.file("a.npy"), shape);
  clitest::write_iota_npy(dir.file("b.npy"), shape);
}

/** `nki run KERNEL --input A --input B --output OUT` plus `extra` flags. */
CliResult run_add(const std::string& kernel, const std::string& a, const std::string& b, const std::string& out,
                  std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"run", kernel, "--input", a, "--input", b, "--output", out};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args);
}

}  // namespace

// ---- shapes ----

TEST_CASE("cli: an input shape that is not a multiple of the tile is refused, naming the shape and the tile") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  SUBCASE("tensor_add, 100 partitions") {
    clitest::write_iota_npy(dir.file("a.npy"), {100, 512});
    clitest::write_iota_npy(dir.file("b.npy"), {100, 512});
    check_refused(run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out),
                  "nki run: tensor_add: err_input_shape_not_tiled: input shape [100,512] is not a 2-D multiple of the "
                  "tile [128,512]",
                  dir, out);
  }
  SUBCASE("tensor_add, free size not a multiple of 512") {
    clitest::write_iota_npy(dir.file("a.npy"), {128, 500});
    clitest::write_iota_npy(dir.file("b.npy"), {128, 500});
    check_refused(run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out),
                  "nki run: tensor_add: err_input_shape_not_tiled: input shape [128,500] is not a 2-D multiple of the "
                  "tile [128,512]",
                  dir, out);
  }
  SUBCASE("tensor_add_nc2 needs whole pairs of partition tiles") {
    write_valid_inputs(dir, {128, 512});
    check_refused(run_add("tensor_add_nc2", dir.file("a.npy"), dir.file("b.npy"), out),
                  "nki run: tensor_add_nc2: err_input_shape_not_tiled: input shape [128,512] is not a 2-D multiple of "
                  "the tile [256,512]",
                  dir, out);
  }
  SUBCASE("a 1-D input") {
    clitest::write_iota_npy(dir.file("a.npy"), {512});
    clitest::write_iota_npy(dir.file("b.npy"), {512});
    check_refused(run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out),
                  "nki run: tensor_add: err_input_shape_not_tiled: input shape [512] is not a 2-D multiple of the tile "
                  "[128,512]",
                  dir, out);
  }
  SUBCASE("a 3-D input") {
    clitest::write_iota_npy(dir.file("a.npy"), {2, 128, 512});
    clitest::write_iota_npy(dir.file("b.npy"), {2, 128, 512});
    check_refused(run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out),
                  "nki run: tensor_add: err_input_shape_not_tiled: input shape [2,128,512] is not a 2-D multiple of the "
                  "tile [128,512]",
                  dir, out);
  }
}

TEST_CASE("cli: inputs whose shapes differ are refused, naming both shapes") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  clitest::write_iota_npy(dir.file("a.npy"), {256, 512});
  clitest::write_iota_npy(dir.file("b.npy"), {128, 512});
  check_refused(run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out),
                "nki run: tensor_add: err_input_shape_mismatch: inputs have different shapes [256,512] and [128,512]",
                dir, out);
}

// ---- the .npy files ----

TEST_CASE("cli: a missing input file is refused, naming the file") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  clitest::write_iota_npy(dir.file("a.npy"), {128, 512});
  const std::string missing = dir.file("missing.npy");
  check_refused(run_add("tensor_add", dir.file("a.npy"), missing, out),
                "nki run: err_invalid_npy: " + missing + ": no such file", dir, out);
}

TEST_CASE("cli: a directory given as an input is refused, naming it") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  clitest::write_iota_npy(dir.file("a.npy"), {128, 512});
  std::filesystem::create_directory(dir.file("b.npy"));
  check_refused(run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out),
                "nki run: err_invalid_npy: " + dir.file("b.npy") + ": is a directory, not a .npy file", dir, out);
}

TEST_CASE("cli: a file that is not .npy (bad magic) is refused, naming the file") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  write_valid_inputs(dir);
  const std::string bad = dir.file("bad.npy");
  SUBCASE("text") { clitest::write_bytes(bad, "a,b,c\n1,2,3\n"); }
  SUBCASE("one wrong byte in the magic") {
    std::string bytes = clitest::read_bytes(dir.file("a.npy"));
    bytes[1] = 'n';
    clitest::write_bytes(bad, bytes);
  }
  check_refused(run_add("tensor_add", dir.file("a.npy"), bad, out),
                "nki run: err_invalid_npy: " + bad + ": not a .npy file (bad magic: it does not start with \"\\x93NUMPY\")",
                dir, out);
}

TEST_CASE("cli: an empty input file is refused as empty") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  write_valid_inputs(dir);
  clitest::write_bytes(dir.file("empty.npy"), "");
  check_refused(run_add("tensor_add", dir.file("empty.npy"), dir.file("b.npy"), out),
                "nki run: err_invalid_npy: " + dir.file("empty.npy") + ": is empty, not a .npy file", dir, out);
}

TEST_CASE("cli: a .npy truncated inside its header is refused with the sizes") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  write_valid_inputs(dir);
  const std::string whole = clitest::read_bytes(dir.file("a.npy"));
  const std::string cut = dir.file("cut.npy");
  SUBCASE("cut in the header dict") {
    clitest::write_bytes(cut, whole.substr(0, 50));
    check_refused(run_add("tensor_add", cut, dir.file("b.npy"), out),
                  "nki run: err_invalid_npy: " + cut + ": truncated .npy header: the header needs 128 bytes, the file has 50",
                  dir, out);
  }
  SUBCASE("cut in the header length") {
    clitest::write_bytes(cut, whole.substr(0, 9));
    check_refused(run_add("tensor_add", cut, dir.file("b.npy"), out),
                  "nki run: err_invalid_npy: " + cut + ": truncated .npy header: the file has only 9 bytes", dir, out);
  }
  SUBCASE("cut after the magic") {
    clitest::write_bytes(cut, whole.substr(0, 6));
    check_refused(run_add("tensor_add", cut, dir.file("b.npy"), out),
                  "nki run: err_invalid_npy: " + cut + ": truncated .npy header: the file has only 6 bytes", dir, out);
  }
}

TEST_CASE("cli: a .npy truncated inside its data is refused with the bytes needed and present") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  write_valid_inputs(dir);
  const std::string whole = clitest::read_bytes(dir.file("a.npy"));
  REQUIRE(whole.size() == 128 + 128 * 512 * 4);
  const std::string cut = dir.file("cut.npy");
  clitest::write_bytes(cut, whole.substr(0, whole.size() - 3));
  check_refused(run_add("tensor_add", dir.file("a.npy"), cut, out),
                "nki run: err_invalid_npy: " + cut +
                    ": truncated data: shape [128,512] of float32 needs 262144 bytes after the header, the file has 262141",
                dir, out);
}

TEST_CASE("cli: a .npy with bytes after its data is refused") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  write_valid_inputs(dir);
  const std::string longer = dir.file("long.npy");
  clitest::write_bytes(longer, clitest::read_bytes(dir.file("a.npy")) + std::string(8, '\0'));
  check_refused(run_add("tensor_add", longer, dir.file("b.npy"), out),
                "nki run: err_invalid_npy: " + longer +
                    ": has 8 bytes after the data of shape [128,512] of float32 (262144 bytes); the file is not a single "
                    "array",
                dir, out);
}

TEST_CASE("cli: a .npy of a dtype not read is refused, quoting it and listing the accepted ones") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  write_valid_inputs(dir);
  const std::string other = dir.file("other.npy");
  std::string descr;
  int bytes_per_element = 4;
  SUBCASE("big-endian float64") {
    descr = ">f8";
    bytes_per_element = 8;
  }
  SUBCASE("uint64") {
    descr = "<u8";
    bytes_per_element = 8;
  }
  SUBCASE("big-endian float32") { descr = ">f4"; }
  SUBCASE("big-endian int16") {
    descr = ">i2";
    bytes_per_element = 2;
  }
  clitest::write_bytes(other, clitest::npy_with_header(
                                  fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': (128, 512), }}", descr),
                                  std::string(128 * 512 * static_cast<std::size_t>(bytes_per_element), '\0')));
  check_refused(run_add("tensor_add", dir.file("a.npy"), other, out),
                "nki run: err_invalid_npy: " + other + ": holds dtype '" + descr +
                    "'; expected float32 ('<f4'), float64 ('<f8'), float16 ('<f2'), int8 ('|i1'), int16 ('<i2'), "
                    "int32 ('<i4'), int64 ('<i8'), uint8 ('|u1'), uint16 ('<u2'), uint32 ('<u4') or bool ('|b1'), "
                    "little endian",
                dir, out);
}

TEST_CASE("cli: a Fortran-order .npy is refused") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  write_valid_inputs(dir);
  const std::string f = dir.file("fortran.npy");
  clitest::write_bytes(f, clitest::npy_with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (128, 512), }",
                                                   std::string(128 * 512 * 4, '\0')));
  check_refused(run_add("tensor_add", f, dir.file("b.npy"), out),
                "nki run: err_invalid_npy: " + f + ": is in Fortran order; expected C order", dir, out);
}

// ---- kernels, grids and flags ----

TEST_CASE("cli: an unknown kernel is refused, listing the known ones") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  write_valid_inputs(dir);
  check_refused(run_add("tensor_mul", dir.file("a.npy"), dir.file("b.npy"), out),
                "nki run: err_unknown_kernel: unknown kernel \"tensor_mul\"; known kernels: " + clitest::kKnownKernels,
                dir, out);
}

TEST_CASE("cli: an unknown kernel is named before its input files are looked at") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  check_refused(run_add("nope", dir.file("missing_a.npy"), dir.file("missing_b.npy"), out),
                "nki run: err_unknown_kernel: unknown kernel \"nope\"; known kernels: " + clitest::kKnownKernels, dir,
                out);
}

TEST_CASE("cli: the wrong number of --input files is refused with both counts") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  write_valid_inputs(dir);
  SUBCASE("one") {
    check_refused(run_cli({"run", "tensor_add", "--input", dir.file("a.npy"), "--output", out}),
                  "nki run: tensor_add: err_argument_count: takes 2 --input files, 1 given", dir, out);
  }
  SUBCASE("three") {
    check_refused(run_cli({"run", "tensor_add", "--input", dir.file("a.npy"), "--input", dir.file("b.npy"), "--input",
                           dir.file("b.npy"), "--output", out}),
                  "nki run: tensor_add: err_argument_count: takes 2 --input files, 3 given", dir, out);
  }
}

TEST_CASE("cli: an unparsable --grid is refused, quoting the text and the position") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  write_valid_inputs(dir);
  const std::string examples = " (examples: \"4,2\", \"spmd_dim(2,nc(2)),4\", \"nc(2)*2,2\")";
  std::string grid, line;
  SUBCASE("an empty axis") {
    grid = "4,,2";
    line = "cannot parse grid \"4,,2\" at position 2: expected a positive integer";
  }
  SUBCASE("an unclosed spmd_dim") {
    grid = "spmd_dim(2,nc(2)";
    line = "cannot parse grid \"spmd_dim(2,nc(2)\" at position 16: expected ')'";
  }
  SUBCASE("a zero size") {
    grid = "nc(0),1";
    line = "cannot parse grid \"nc(0),1\" at position 3: expected a positive integer";
  }
  SUBCASE("an empty grid") {
    grid = "";
    line = "cannot parse grid \"\" at position 0: expected an axis";
  }
  SUBCASE("trailing text") {
    grid = "1,1x";
    line = "cannot parse grid \"1,1x\" at position 3: expected ',' or the end";
  }
  check_refused(run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out, {"--grid", grid}),
                "nki run: err_invalid_grid: " + line + examples, dir, out);
}

TEST_CASE("cli: a --grid whose logical shape does not fit the inputs is refused, suggesting the one that does") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  write_valid_inputs(dir, {512, 2048});
  std::string grid, shape;
  SUBCASE("too few instances") {
    grid = "2,4";
    shape = "[2,4]";
  }
  SUBCASE("too many instances") {
    grid = "spmd_dim(4,nc(2)),4";
    shape = "[8,4]";
  }
  SUBCASE("the wrong rank") {
    grid = "16";
    shape = "[16]";
  }
  check_refused(run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out, {"--grid", grid}),
                fmt::format("nki run: tensor_add: err_grid_does_not_fit: grid \"{}\" has logical shape {}, but inputs "
                            "[512,2048] [512,2048] need logical shape [4,4] (e.g. \"4,4\")",
                            grid, shape),
                dir, out);
}

TEST_CASE("cli: a --grid needing more NeuronCores than the device has is refused and leaves no temporary") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  const std::string schedule = dir.file("s.json");
  write_valid_inputs(dir, {512, 2048});
  check_refused(
      run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out, {"--grid", "nc(4),4", "--schedule", schedule}),
      "nki run: tensor_add: err_grid_exceeds_cores: grid \"nc(4),4\" spreads over 4 NeuronCores but the device has 2", dir, out);
  CHECK(!std::filesystem::exists(schedule));
}

TEST_CASE("cli: an unknown --dtype is refused, naming the value and the choices") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  write_valid_inputs(dir);
  SUBCASE("int8") {
    check_refused(run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out, {"--dtype", "int8"}),
                  "nki run: err_unknown_dtype: unknown --dtype \"int8\"; expected one of fp32, bf16, fp16, fp8_e4m3, "
                  "fp8_e5m2, tf32, fp8_e4m3fn, fp8_e8m0fnu",
                  dir, out);
  }
  SUBCASE("upper case") {
    check_refused(run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out, {"--dtype", "BF16"}),
                  "nki run: err_unknown_dtype: unknown --dtype \"BF16\"; expected one of fp32, bf16, fp16, fp8_e4m3, "
                  "fp8_e5m2, tf32, fp8_e4m3fn, fp8_e8m0fnu",
                  dir, out);
  }
}

TEST_CASE("cli: an unknown --executor is refused, naming the value and the choices") {
  TempDir dir;
  const std::string out = dir.file("c.npy");
  write_valid_inputs(dir);
  check_refused(run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out, {"--executor", "gpu"}),
                "nki run: err_unknown_executor: unknown --executor \"gpu\"; expected halide or reference", dir, out);
}

// ---- output paths ----

TEST_CASE("cli: an --output in a missing directory is refused, naming the directory") {
  TempDir dir;
  write_valid_inputs(dir);
  const std::string out = dir.file("no_such_dir/c.npy");
  check_refused(run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out),
                "nki run: err_output_not_writable: " + out + ": cannot write: the directory \"" +
                    dir.file("no_such_dir") + "\" does not exist",
                dir, out);
  CHECK(!std::filesystem::exists(dir.file("no_such_dir")));
}

TEST_CASE("cli: an --output below a regular file is refused") {
  TempDir dir;
  write_valid_inputs(dir);
  const std::string out = dir.file("a.npy/c.npy");
  check_refused(run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out),
                "nki run: err_output_not_writable: " + out + ": cannot write: \"" + dir.file("a.npy") +
                    "\" is not a directory",
                dir, out);
}

TEST_CASE("cli: an --output that is a directory is refused before the kernel runs") {
  TempDir dir;
  write_valid_inputs(dir);
  const std::string out = dir.file("out_dir");
  std::filesystem::create_directory(out);
  const CliResult r = run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out);
  CHECK(r.status == 2);
  CHECK(r.err == "nki run: err_output_not_writable: " + out + ": cannot write: is a directory; expected a file path\n");
  CHECK(std::filesystem::is_empty(out));
  CHECK(dir.temporaries().empty());
}

TEST_CASE("cli: an empty --output or --schedule path is refused") {
  TempDir dir;
  write_valid_inputs(dir);
  SUBCASE("--output") {
    const CliResult r = run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), "");
    CHECK(r.status == 2);
    CHECK(r.err == "nki run: err_output_not_writable: --output is an empty path\n");
  }
  SUBCASE("--schedule") {
    const std::string out = dir.file("c.npy");
    check_refused(run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out, {"--schedule", ""}),
                  "nki run: err_output_not_writable: --schedule is an empty path", dir, out);
  }
}

TEST_CASE("cli: a --schedule naming the same file as --output is refused") {
  TempDir dir;
  write_valid_inputs(dir);
  const std::string out = dir.file("c.npy");
  check_refused(
      run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out, {"--schedule", dir.file("./c.npy")}),
      "nki run: err_output_not_writable: --schedule and --output name the same file \"" + out + "\"", dir, out);
}

TEST_CASE("cli: an unwritable --schedule path leaves no output file either") {
  TempDir dir;
  write_valid_inputs(dir);
  const std::string out = dir.file("c.npy");
  const std::string schedule = dir.file("missing/s.json");
  check_refused(run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out, {"--schedule", schedule}),
                "nki run: err_output_not_writable: " + schedule + ": cannot write: the directory \"" +
                    dir.file("missing") + "\" does not exist",
                dir, out);
}

TEST_CASE("cli: a refused run leaves an existing output file untouched") {
  TempDir dir;
  write_valid_inputs(dir, {512, 2048});
  const std::string out = dir.file("c.npy");
  clitest::write_bytes(out, "previous contents");
  const CliResult r = run_add("tensor_add", dir.file("a.npy"), dir.file("b.npy"), out, {"--grid", "nc(4),4"});
  CHECK(r.status == 2);
  CHECK(r.err == "nki run: tensor_add: err_grid_exceeds_cores: grid \"nc(4),4\" spreads over 4 NeuronCores but the device has 2\n");
  CHECK(clitest::read_bytes(out) == "previous contents");
  CHECK(dir.temporaries().empty());
}

// ---- the command line itself ----

TEST_CASE("cli: a missing --output is refused by the option parser in one line") {
  TempDir dir;
  write_valid_inputs(dir);
  const CliResult r = run_cli({"run", "tensor_add", "--input", dir.file("a.npy"), "--input", dir.file("b.npy")});
  CHECK(r.status == 2);
  CHECK(r.err == "nki run: --output is required\n");
  CHECK(r.out.empty());
}

TEST_CASE("cli: unexpected arguments and unknown options are refused, naming them as given") {
  SUBCASE("an unknown option of run") {
    const CliResult r = run_cli({"run", "tensor_add", "--input", "a.npy", "--input", "b.npy", "--output", "c.npy",
                                 "--threads", "4"});
    CHECK(r.status == 2);
    CHECK(r.err == "nki run: unknown option \"--threads\"; the options are --help, --input, --output, --dtype, --grid, "
                   "--schedule, --executor, --target, --checked, --dump-ir, --autotune, --config, --quiet\n");
    CHECK(!std::filesystem::exists("c.npy"));
  }
  SUBCASE("an argument to list") {
    const CliResult r = run_cli({"list", "tensor_add"});
    CHECK(r.status == 2);
    CHECK(r.err == "nki list: unexpected argument tensor_add\n");
    CHECK(r.out.empty());
  }
  SUBCASE("an unknown option before the command") {
    const CliResult r = run_cli({"--verbose", "list"});
    CHECK(r.status == 2);
    CHECK(r.err == "nki: unknown option \"--verbose\"; commands: list, run, mesh, cache, compile, profile, bench (see nki --help)\n");
    CHECK(r.out.empty());
  }
}

TEST_CASE("cli: an unknown command is refused, listing the commands") {
  const CliResult r = run_cli({"frobnicate"});
  CHECK(r.status == 2);
  CHECK(r.err == "nki: unknown command \"frobnicate\"; commands: list, run, mesh, cache, compile, profile, bench (see nki --help)\n");
  CHECK(r.out.empty());
}

TEST_CASE("cli: no command at all is refused, listing the commands") {
  const CliResult r = run_cli({});
  CHECK(r.status == 2);
  CHECK(r.err == "nki: a command is required: list, run, mesh, cache, compile, profile or bench (see nki --help)\n");
  CHECK(r.out.empty());
}
