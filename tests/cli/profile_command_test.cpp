/**
 * \file `nki profile`: the report, --json, --trace, --target, --config and --autotune of a
 * tunable kernel, and bad input (one line, exit 2, no files).
 */
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstdlib>

#include "cli/cli_fixture.h"

using namespace clitest;

namespace {

const std::vector<std::string> kTiledArgs{"--shape", "256x1024", "--shape", "256x1024", "--dtype", "bf16"};

/** `nki profile tensor_add_tiled` on two bf16 [256,1024] arguments, with `more` flags. */
std::vector<std::string> profile_tiled(std::vector<std::string> more) {
  std::vector<std::string> a{"profile", "tensor_add_tiled"};
  a.insert(a.end(), kTiledArgs.begin(), kTiledArgs.end());
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

std::string second_line(const std::string& text) {
  const std::size_t a = text.find('\n') + 1;
  return text.substr(a, text.find('\n', a) - a);
}

}  // namespace

TEST_CASE("nki profile - the text report of the multi-core tensor add") {
  const CliResult r = run_cli({"profile", "tensor_add_nc2", "--shape", "512x2048", "--shape", "512x2048", "--dtype", "bf16"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out.starts_with("kernel tensor_add_nc2 on trn2, grid spmd_dim(2,nc(2)),4\nestimated device latency: "));
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
  // --config and --autotune of a tunable kernel.
  const std::string tunable = "tunable kernels: mamba_v3, matmul_fully_optimized, tensor_add_tiled";
  refused({"profile", "tensor_add", "--shape", "256x1024", "--shape", "256x1024", "--config", "P=64,F=256"},
          "nki profile: tensor_add: err_not_tunable: --config \"P=64,F=256\": has no tile parameters; " + tunable);
  refused({"profile", "tensor_add", "--shape", "256x1024", "--shape", "256x1024", "--autotune"},
          "nki profile: tensor_add: err_not_tunable: --autotune: has no tile parameters to tune; " + tunable);
  refused(profile_tiled({"--autotune", "--config", "P=64,F=256"}),
          "nki profile: tensor_add_tiled: err_conflicting_flags: give --autotune or --config \"P=64,F=256\", not both");
  refused(profile_tiled({"--config", "P=64,F=256", "--grid", "spmd_dim(1,nc(2))"}),
          "nki profile: tensor_add_tiled: err_grid_does_not_fit: grid \"spmd_dim(1,nc(2))\" has logical shape [2], but "
          "inputs [256,1024] [256,1024] need logical shape [4] (e.g. \"spmd_dim(2,nc(2))\")");
  // Each refused --config: the value, then the line's words before and after `--config "VALUE": `.
  const std::string kernel = "tensor_add_tiled: ";
  const std::vector<std::array<std::string, 3>> configs{
      {"P=64,Q=2", kernel + "err_invalid_config", "Q is not a parameter of tensor_add_tiled; its parameters: P, F"},
      {"P=64", kernel + "err_invalid_config", "no value for F; expected a value for each of P, F"},
      {"P=48,F=256", kernel + "err_invalid_config",
       "P=48 is not a value of tensor_add_tiled's P; its values: 1, 2, 4, 8, 16, 32, 64, 128, 256, 512"},
      {"P=64;F=256", "err_invalid_config",
       "parameters are joined by ',' here (';' joins them in --sweep); expected NAME=VALUE[,NAME=VALUE...], e.g. "
       "\"P=64,F=2048\""},
      {"P=256,F=512", kernel + "err_config_forbidden",
       "forbidden on trn2: err_num_partition_exceed_arch_limit: P=256 rows exceed the 128 partitions of trn2's SBUF"},
      {"P=64,F=4096", kernel + "err_config_forbidden",
       "forbidden on trn2: tensor_add_tiled: err_input_shape_not_tiled: input shape [256,1024] is not a 2-D multiple "
       "of [128,4096] (P=64 rows on each of 2 cores, F=4096)"}};
  for (const auto& [config, before, after] : configs) {
    refused(profile_tiled({"--config", config}), fmt::format("nki profile: {}: --config \"{}\": {}", before, config, after));
  }
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


TEST_CASE("nki profile --config - profiles that configuration, and the report names it") {
  const CliResult j = run_cli(profile_tiled({"--config", "P=64,F=256", "--json"}));
  REQUIRE(j.status == 0);
  const nlohmann::ordered_json report = nlohmann::ordered_json::parse(j.out);
  CHECK(report["grid"] == "spmd_dim(2,nc(2))");  // 256 rows / (2 cores x P=64)
  CHECK(report["config"].dump() == R"({"P":64,"F":256})");
  CHECK(report["autotuned"] == false);
  std::vector<std::string> keys;
  for (const auto& [key, value] : report.items()) keys.push_back(key);
  CHECK(std::vector<std::string>(keys.begin(), keys.begin() + 6) ==
        std::vector<std::string>{"kernel", "target", "grid", "config", "autotuned", "latency_us"});
  // The same launch as the sweep's configuration: the same estimate.
  const CliResult sweep = run_cli({"bench", "tensor_add_tiled", "--sweep", "P=64;F=256", "--shape", "256x1024", "--shape",
                                   "256x1024", "--dtype", "bf16", "--iters", "0", "--json", "--no-record"});
  REQUIRE(sweep.status == 0);
  const double swept_us = nlohmann::json::parse(sweep.out)["configs"][0]["simulated_us"].get<double>();
  CHECK(report["latency_us"].get<double>() == std::round(swept_us * 1e6) / 1e6);

  const CliResult text = run_cli(profile_tiled({"--config", "F=256, P=64"}));
  REQUIRE(text.status == 0);
  CHECK(text.out.starts_with("kernel tensor_add_tiled on trn2, grid spmd_dim(2,nc(2))\nconfiguration P=64 F=256 "
                             "(--config)\nestimated device latency: "));
  // A grid of the same logical shape is taken; without --config or --autotune nothing is named.
  CHECK(run_cli(profile_tiled({"--config", "P=64,F=256", "--grid", "4"})).out.starts_with(
      "kernel tensor_add_tiled on trn2, grid 4\nconfiguration P=64 F=256 (--config)\n"));
  const CliResult plain = run_cli(profile_tiled({"--json"}));
  CHECK(!nlohmann::json::parse(plain.out).contains("config"));
}

TEST_CASE("nki profile --autotune - profiles the configuration nki bench recorded") {
  const test::FreshCache cache;
  REQUIRE(run_cli({"bench", "tensor_add_tiled", "--sweep", "P=32;F=256", "--shape", "256x1024", "--shape", "256x1024",
                   "--dtype", "bf16", "--iters", "0"})
              .status == 0);
  const CliResult j = run_cli(profile_tiled({"--autotune", "--json"}));
  REQUIRE(j.status == 0);
  const nlohmann::json report = nlohmann::json::parse(j.out);
  CHECK(report["grid"] == "spmd_dim(4,nc(2))");
  CHECK(report["config"] == nlohmann::json{{"P", 32}, {"F", 256}});
  CHECK(report["autotuned"] == true);
  CHECK(second_line(run_cli(profile_tiled({"--autotune"})).out) == "configuration P=32 F=256 (autotuned)");
  // Another dtype has no record: the defaults.
  const CliResult fp32 = run_cli({"profile", "tensor_add_tiled", "--shape", "256x1024", "--shape", "256x1024", "--autotune"});
  CHECK(second_line(fp32.out) == "configuration P=128 F=512 (defaults: none autotuned)");
  CHECK(fp32.err == "nki profile: tensor_add_tiled: no autotuned configuration (no record); using P=128 F=512\n");
}

TEST_CASE("nki profile --autotune - without a record it says so on stderr, as nki run does, and profiles the defaults") {
  TempDir dir;
  const std::string command = fmt::format(
      "NKI_CACHE_DIR='{}' '{}' profile tensor_add_tiled --shape 256x1024 --shape 256x1024 --autotune >'{}' 2>'{}'",
      dir.file("cache"), test::nki_binary(), dir.file("out"), dir.file("err"));
  REQUIRE(std::system(command.c_str()) == 0);
  CHECK(read_bytes(dir.file("err")) ==
        "nki profile: tensor_add_tiled: no autotuned configuration (no record); using P=128 F=512\n");
  CHECK(read_bytes(dir.file("out")).starts_with("kernel tensor_add_tiled on trn2, grid spmd_dim(1,nc(2))\n"
                                                "configuration P=128 F=512 (defaults: none autotuned)\n"));
}
