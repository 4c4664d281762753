/** \file `nki run` and `nki list` doing their job: outputs, dtypes, executors, grids, schedules, IR. */
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cmath>
#include <cstring>

#include "cli_fixture.h"
#include "test_support.h"

using clitest::CliResult;
using clitest::run_cli;
using clitest::TempDir;
using json = nlohmann::json;

namespace {

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/**
 * Inputs a, b of `shape`: random values over several magnitudes, plus pairs that sit
 * exactly halfway between two bf16 (and fp16) values, to catch any rounding but
 * round-to-nearest-even on input conversion.
 */
struct Inputs {
  std::vector<float> a, b;
};
Inputs make_inputs(const nki::Shape& shape, std::uint32_t seed) {
  const auto n = static_cast<std::size_t>(nki::shape_elements(shape));
  Inputs in{test::random_floats(n, seed), test::random_floats(n, seed + 1)};
  for (std::size_t i = 0; i < n; i += 7) in.a[i] *= 1e-3f;
  for (std::size_t i = 3; i < n; i += 11) in.b[i] *= 1e3f;
  // bf16 ties: 1 + 2^-8 rounds down to 1, 1 + 3*2^-8 rounds up to 1 + 2^-6.
  const float ties[] = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -(2.0f + 0x1p-7f), 0x1p-100f * (1.0f + 0x1p-8f)};
  for (std::size_t i = 0; i < 4 && i < n; ++i) {
    in.a[i] = ties[i];
    in.b[i] = 0.0f;
  }
  return in;
}

/** The float32 values of an output .npy, checking its shape. */
std::vector<float> read_output(const std::string& path, const nki::Shape& shape) {
  const nki::NpyArray arr = nki::read_npy(path);
  REQUIRE(arr.shape == shape);
  return arr.data;
}

/** Index of the first element whose bits differ from round(round(a) + round(b)) in `dtype`, or -1. */
std::int64_t first_mismatch(const std::vector<float>& got, const Inputs& in, nki::DType dtype) {
  REQUIRE(got.size() == in.a.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float want =
        nki::round_to_dtype(nki::round_to_dtype(in.a[i], dtype) + nki::round_to_dtype(in.b[i], dtype), dtype);
    if (bits_of(got[i]) != bits_of(want)) return static_cast<std::int64_t>(i);
  }
  return -1;
}

/** Writes a.npy and b.npy of `shape` into `dir`. */
Inputs write_inputs(const TempDir& dir, const nki::Shape& shape, std::uint32_t seed = 7) {
  Inputs in = make_inputs(shape, seed);
  clitest::write_npy(dir.file("a.npy"), shape, in.a);
  clitest::write_npy(dir.file("b.npy"), shape, in.b);
  return in;
}

CliResult run_add(const TempDir& dir, const std::string& kernel, const std::string& out,
                  std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"run", kernel, "--input", dir.file("a.npy"), "--input", dir.file("b.npy"), "--output", out};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args);
}

void check_ok(const CliResult& r) {
  CHECK(r.status == 0);
  CHECK(r.err == "");
}

using Ids = std::vector<std::vector<std::int64_t>>;

/** All [i, j] for i in rows (in order), j in 0..cols-1. */
Ids instances(std::initializer_list<std::int64_t> rows, std::int64_t cols) {
  Ids out;
  for (std::int64_t i : rows)
    for (std::int64_t j = 0; j < cols; ++j) out.push_back({i, j});
  return out;
}

}  // namespace

TEST_CASE("cli: tensor_add_nc2 with --dtype bf16 on [512,2048] writes the bf16-rounded sum exactly, as float32") {
  TempDir dir;
  const nki::Shape shape{512, 2048};
  const Inputs in = write_inputs(dir, shape);
  const std::string out = dir.file("c.npy");
  const CliResult r = run_add(dir, "tensor_add_nc2", out, {"--dtype", "bf16"});
  check_ok(r);
  CHECK(r.out == "nki run: tensor_add_nc2 ran grid spmd_dim(2,nc(2)),4 (16 instances on 2 cores) with the halide executor, "
                 "not checked (--checked runs checked mode); wrote " + out + "\n");
  const std::vector<float> got = read_output(out, shape);
  CHECK(first_mismatch(got, in, nki::DType::bf16) == -1);
  // The ties went to even on the way in.
  CHECK(got[0] == 1.0f);
  CHECK(got[1] == 1.0f + 0x1p-6f);
  CHECK(got[2] == -2.0f);
  CHECK(got[3] == 0x1p-100f);
  // The file is a plain float32 .npy: the header says so.
  CHECK(clitest::read_bytes(out).find("'descr': '<f4'") != std::string::npos);
  CHECK(dir.temporaries().empty());
}

TEST_CASE("cli: tensor_add without --dtype computes in fp32: the output is the float32 sum") {
  TempDir dir;
  const nki::Shape shape{256, 1024};
  const Inputs in = write_inputs(dir, shape, 11);
  const std::string out = dir.file("c.npy");
  check_ok(run_add(dir, "tensor_add", out));
  const std::vector<float> got = read_output(out, shape);
  CHECK(first_mismatch(got, in, nki::DType::fp32) == -1);
  CHECK(got[0] == 1.0f + 0x1p-8f);  // not rounded
}

TEST_CASE("cli: tensor_add with --dtype fp16 rounds to nearest even and overflows to infinity") {
  TempDir dir;
  const nki::Shape shape{128, 512};
  Inputs in = make_inputs(shape, 5);
  in.a[10] = 60000.0f;
  in.b[10] = 60000.0f;
  in.a[11] = 1.0f + 0x1p-11f;  // an fp16 tie: rounds to 1
  in.b[11] = 0.0f;
  clitest::write_npy(dir.file("a.npy"), shape, in.a);
  clitest::write_npy(dir.file("b.npy"), shape, in.b);
  const std::string out = dir.file("c.npy");
  check_ok(run_add(dir, "tensor_add", out, {"--dtype", "fp16"}));
  const std::vector<float> got = read_output(out, shape);
  CHECK(first_mismatch(got, in, nki::DType::fp16) == -1);
  CHECK(std::isinf(got[10]));
  CHECK(got[11] == 1.0f);
}

TEST_CASE("cli: the halide and reference executors write byte-identical output files") {
  TempDir dir;
  const nki::Shape shape{512, 2048};
  write_inputs(dir, shape, 3);
  for (const char* dtype : {"bf16", "fp16", "fp32"}) {
    CAPTURE(dtype);
    const std::string h = dir.file(fmt::format("halide_{}.npy", dtype));
    const std::string ref = dir.file(fmt::format("reference_{}.npy", dtype));
    check_ok(run_add(dir, "tensor_add_nc2", h, {"--dtype", dtype, "--executor", "halide"}));
    check_ok(run_add(dir, "tensor_add_nc2", ref, {"--dtype", dtype, "--executor", "reference"}));
    const std::string hb = clitest::read_bytes(h), rb = clitest::read_bytes(ref);
    CHECK(hb.size() == 128 + 512 * 2048 * 4);
    CHECK(hb == rb);
  }
}

TEST_CASE("cli: --schedule writes kernel, grid, grid_spec and each core's instances in run order") {
  TempDir dir;
  write_inputs(dir, {512, 2048});
  const std::string out = dir.file("c.npy");
  const std::string schedule = dir.file("schedule.json");
  check_ok(run_add(dir, "tensor_add_nc2", out, {"--schedule", schedule}));
  const std::string text = clitest::read_bytes(schedule);
  const json got = json::parse(text);
  const json want = {
      {"kernel", "tensor_add_nc2"},
      {"grid", {4, 4}},
      {"grid_spec", "spmd_dim(2,nc(2)),4"},
      {"cores",
       {{{"nc", 0}, {"instances", instances({0, 2}, 4)}}, {{"nc", 1}, {"instances", instances({1, 3}, 4)}}}},
  };
  CHECK(got == want);
  // The documented key order, as written.
  CHECK(text.find("\"kernel\"") < text.find("\"grid\""));
  CHECK(text.find("\"grid\"") < text.find("\"cores\""));
  CHECK(text.back() == '\n');
  CHECK(std::filesystem::exists(out));
}

TEST_CASE("cli: --grid \"nc(2)*2,4\" is accepted: NC0 runs rows 0 and 1, NC1 rows 2 and 3") {
  TempDir dir;
  const nki::Shape shape{512, 2048};
  const Inputs in = write_inputs(dir, shape);
  const std::string out = dir.file("c.npy");
  const std::string schedule = dir.file("s.json");
  check_ok(run_add(dir, "tensor_add", out, {"--grid", "nc(2)*2,4", "--schedule", schedule, "--dtype", "bf16"}));
  CHECK(first_mismatch(read_output(out, shape), in, nki::DType::bf16) == -1);
  const json want = {
      {"kernel", "tensor_add"},
      {"grid", {4, 4}},
      {"grid_spec", "spmd_dim(nc(2),2),4"},
      {"cores",
       {{{"nc", 0}, {"instances", instances({0, 1}, 4)}}, {{"nc", 1}, {"instances", instances({2, 3}, 4)}}}},
  };
  CHECK(json::parse(clitest::read_bytes(schedule)) == want);
}

TEST_CASE("cli: --grid \"4,4\" is accepted: every instance on NC0 in row-major order, NC1 listed empty") {
  TempDir dir;
  const nki::Shape shape{512, 2048};
  const Inputs in = write_inputs(dir, shape);
  const std::string out = dir.file("c.npy");
  const std::string schedule = dir.file("s.json");
  check_ok(run_add(dir, "tensor_add_nc2", out, {"--grid", "4,4", "--schedule", schedule}));
  CHECK(first_mismatch(read_output(out, shape), in, nki::DType::fp32) == -1);
  const json want = {
      {"kernel", "tensor_add_nc2"},
      {"grid", {4, 4}},
      {"grid_spec", "4,4"},
      {"cores",
       {{{"nc", 0}, {"instances", instances({0, 1, 2, 3}, 4)}}, {{"nc", 1}, {"instances", json::array()}}}},
  };
  CHECK(json::parse(clitest::read_bytes(schedule)) == want);
}

TEST_CASE("cli: --grid in NKI spelling with spaces gives the same output as the default grid") {
  TempDir dir;
  write_inputs(dir, {512, 2048});
  const std::string by_default = dir.file("default.npy"), spelled = dir.file("spelled.npy");
  check_ok(run_add(dir, "tensor_add", by_default));
  check_ok(run_add(dir, "tensor_add", spelled, {"--grid", " spmd_dim( 2 , nc(2) ) , 4 "}));
  CHECK(clitest::read_bytes(by_default) == clitest::read_bytes(spelled));
}

TEST_CASE("cli: --dump-ir prints the canonical IR, starting with \"kernel tensor_add\"") {
  TempDir dir;
  write_inputs(dir, {256, 512});
  const CliResult r = run_add(dir, "tensor_add_nc2", dir.file("c.npy"), {"--dump-ir", "--dtype", "bf16"});
  check_ok(r);
  CHECK(r.out.rfind("kernel tensor_add", 0) == 0);
  CHECK(r.out.find("bf16[256,512]") != std::string::npos);
  CHECK(std::filesystem::exists(dir.file("c.npy")));
}

TEST_CASE("cli: a successful run replaces an existing output file and leaves no temporary") {
  TempDir dir;
  const nki::Shape shape{128, 512};
  const Inputs in = write_inputs(dir, shape);
  const std::string out = dir.file("c.npy");
  clitest::write_bytes(out, "old");
  check_ok(run_add(dir, "tensor_add", out));
  CHECK(first_mismatch(read_output(out, shape), in, nki::DType::fp32) == -1);
  CHECK(dir.temporaries().empty());
}

TEST_CASE("cli: a file that happens to have the temporary's name is not clobbered") {
  TempDir dir;
  write_inputs(dir, {128, 512});
  const std::string out = dir.file("c.npy");
  const std::string bystander = fmt::format("{}.tmp{}-0", out, ::getpid());
  clitest::write_bytes(bystander, "not ours");
  check_ok(run_add(dir, "tensor_add", out));
  CHECK(nki::read_npy(out).shape == nki::Shape{128, 512});
  CHECK(clitest::read_bytes(bystander) == "not ours");
  CHECK(dir.temporaries() == std::vector<std::string>{std::filesystem::path(bystander).filename().string()});
}

TEST_CASE("cli: nki list names every library kernel, one per line, sorted") {
  const CliResult r = run_cli({"list"});
  check_ok(r);
  std::vector<std::string> names;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) names.push_back(line.substr(0, line.find(' ')));
  CHECK(names == std::vector<std::string>{"attn_fwd_v1", "attn_fwd_v10", "attn_fwd_v11", "attn_fwd_v2", "attn_fwd_v3", "attn_fwd_v4", "attn_fwd_v5",
                                         "attn_fwd_v6", "attn_fwd_v7", "attn_fwd_v8", "attn_fwd_v8a", "attn_fwd_v9",
                                         "average_pool2d", "layernorm", "mamba_v1", "mamba_v2", "mamba_v3",
                                         "matmul_basic", "matmul_block_free_dimension",
                                         "matmul_fully_optimized", "matmul_hoist_load", "matmul_tiled", "mlp", "rmsnorm",
                                         "softmax", "tensor_add", "tensor_add_nc2", "tensor_add_tiled",
                                         "tensor_parallel_mlp", "transpose2d"});
}

TEST_CASE("cli: nki --help and nki run --help print usage on stdout and exit 0") {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--help"}, std::vector<std::string>{"run", "--help"}}) {
    CAPTURE(args.size());
    const CliResult r = run_cli(args);
    CHECK(r.status == 0);
    CHECK(r.err == "");
    CHECK(r.out.find("Usage: nki") != std::string::npos);
  }
  CHECK(run_cli({"run", "--help"}).out.find("--dtype {fp32,bf16,fp16,fp8_e4m3,fp8_e5m2,tf32,fp8_e4m3fn,fp8_e8m0fnu}=fp32") != std::string::npos);
}
