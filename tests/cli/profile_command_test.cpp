/** \file `nki profile`: the report, --json, --trace, --target, and bad input (one line, exit 2, no files). */
#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"

using namespace clitest;

TEST_CASE("nki profile - the text report of the multi-core tensor add") {
  const CliResult r = run_cli({"profile", "tensor_add_nc2", "--shape", "512x2048", "--shape", "512x2048", "--dtype", "bf16"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out.starts_with("kernel tensor_add on trn2, grid spmd_dim(2,nc(2)),4\nestimated device latency: "));
  CHECK(r.out.find("\nFLOPs: 0 (hardware FLOP utilization 0.0%)\nDMA: 6291456 bytes, achieved ") != std::string::npos);
  CHECK(r.out.find("\ninstructions: 64\nNC0: ") != std::string::npos);
  CHECK(r.out.find(", 8 instances, 3145728 DMA bytes\n  engine        busy_us  utilization  instructions\n") != std::string::npos);
  CHECK(r.out.find("\nNC1: ") != std::string::npos);
}

TEST_CASE("nki profile - --json on trn1 from --input files, and --trace writes the timeline") {
  TempDir dir;
  write_iota_npy(dir.file("a.npy"), {256, 1024});
  write_iota_npy(dir.file("b.npy"), {256, 1024});
  const std::string trace = dir.file("trace.json");
  const CliResult r = run_cli({"profile", "tensor_add", "--input", dir.file("a.npy"), "--input", dir.file("b.npy"),
                               "--target", "trn1", "--json", "--trace", trace});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["target"] == "trn1");
  CHECK(j["grid"] == "2,2");
  CHECK(j["dma_bytes"] == 3 * 256 * 1024 * 4);  // float32 files, --dtype fp32
  for (const char* key : {"latency_us", "flops", "hfu", "dma_bytes", "cores"}) CHECK(j.contains(key));
  REQUIRE(j["cores"].size() == 1);
  CHECK(j["cores"][0]["engines"]["DMA"].contains("busy_us"));
  const nlohmann::json t = nlohmann::json::parse(read_bytes(trace));
  CHECK(t["traceEvents"].size() > 0);
  CHECK(dir.temporaries().empty());
}

TEST_CASE("nki profile - the matmul estimate on trn1") {
  const CliResult r = run_cli({"profile", "matmul_fully_optimized", "--shape", "8192x4096", "--shape", "8192x8192", "--dtype", "bf16",
                               "--target", "trn1", "--json"});
  REQUIRE(r.status == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["flops"] == 549755813888LL);
  CHECK(j["cores"][0]["engines"]["Tensor"]["instructions"] == 32768);
}

TEST_CASE("nki profile - bad input: one line, exit 2, nothing printed, no trace file") {
  TempDir dir;
  const std::string trace = dir.file("t.json");
  auto refused = [&](const std::vector<std::string>& args, const std::string& line) {
    std::vector<std::string> all = args;
    all.push_back("--trace");
    all.push_back(trace);
    check_refused(run_cli(all), line, dir, trace);
  };
  refused({"profile", "tensor_add", "--shape", "256x1024", "--shape", "256x1024", "--target", "trn9"},
          "nki profile: err_unknown_target: unknown target \"trn9\"; expected one of trn1, inf2, trn2, trn3");
  refused({"profile", "tensor_add", "--shape", "256x1024"},
          "nki profile: tensor_add: err_argument_count: takes 2 arguments (--input or --shape), 1 given");
  refused({"profile", "tensor_add", "--shape", "256x1024", "--input", "x.npy"},
          "nki profile: tensor_add: err_conflicting_flags: give the arguments as --input files or as --shape, not both");
  refused({"profile", "tensor_add", "--shape", "256x0", "--shape", "256x1024"},
          "nki profile: err_invalid_shape: --shape \"256x0\": \"0\" is not a positive size; expected sizes joined by x, "
          "e.g. 16x16");
  refused({"profile", "no_such", "--shape", "1"},
          "nki profile: err_unknown_kernel: unknown kernel \"no_such\"; known kernels: " + clitest::kKnownKernels);
  refused({"profile", "tensor_add", "--shape", "256x1000", "--shape", "256x1000"},
          "nki profile: tensor_add: err_input_shape_not_tiled: input shape [256,1000] is not a 2-D multiple of the tile "
          "[128,512]");
  refused({"profile", "tensor_add", "--shape", "256x1024", "--shape", "256x1024", "--dtype", "fp64"},
          "nki profile: err_unknown_dtype: unknown --dtype \"fp64\"; expected one of fp32, bf16, fp16, fp8_e4m3, fp8_e5m2, tf32, fp8_e4m3fn, fp8_e8m0fnu");
}

TEST_CASE("nki run - --checked reports an unwritten output read, --target picks the chip") {
  TempDir dir;
  write_iota_npy(dir.file("a.npy"), {256, 1024});
  write_iota_npy(dir.file("b.npy"), {256, 1024});
  const std::string out = dir.file("c.npy");
  const CliResult ok = run_cli({"run", "tensor_add", "--input", dir.file("a.npy"), "--input", dir.file("b.npy"), "--output",
                                out, "--checked", "--target", "trn1"});
  CHECK(ok.status == 0);
  CHECK(ok.err.empty());
  CHECK(fs::exists(out));
  fs::remove(out);
  check_refused(run_cli({"run", "tensor_add", "--input", dir.file("a.npy"), "--input", dir.file("b.npy"), "--output", out,
                         "--target", "trn5"}),
                "nki run: err_unknown_target: unknown target \"trn5\"; expected one of trn1, inf2, trn2, trn3", dir, out);
}
