/** \file `nki bench`: the sweep table, CSV/JSON/PNG outputs, the autotune record `nki run --autotune` uses, bad input. */
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "cli/cli_fixture.h"
#include "nki/autotune.h"

using namespace clitest;

namespace {

const std::vector<std::string> kSmall{"--shape", "256x1024", "--shape", "256x1024", "--dtype", "bf16"};

std::vector<std::string> bench_args(const std::string& sweep, std::vector<std::string> more) {
  std::vector<std::string> a{"bench", "tensor_add_tiled", "--sweep", sweep};
  a.insert(a.end(), kSmall.begin(), kSmall.end());
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream s(text);
  for (std::string l; std::getline(s, l);) out.push_back(l);
  return out;
}

/** The whitespace-separated fields of a table line. */
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream s(line);
  for (std::string f; s >> f;) out.push_back(f);
  return out;
}

std::vector<nki::TensorSpec> small_args() {
  return {{{256, 1024}, nki::language::bfloat16}, {{256, 1024}, nki::language::bfloat16}};
}

}  // namespace

TEST_CASE("nki bench - simulated sweep: table sorted by latency, best first, forbidden last with the reason") {
  const test::FreshCache cache;
  const CliResult r = run_cli(bench_args("P=64,128,256;F=256,512", {"--iters", "0"}));
  REQUIRE(r.status == 0);
  const std::vector<std::string> out = lines(r.out);
  REQUIRE(out.size() == 9);
  CHECK(out[0] == "tensor_add_tiled [256,1024] [256,1024] bf16 on trn2: 6 configurations, 2 forbidden; sorted by "
                  "simulated latency");
  CHECK(fields(out[1]) == std::vector<std::string>{"P", "F", "simulated_us", "host_us", "host_GBps"});
  CHECK(out[2].starts_with("best "));
  double previous = 0;
  for (int i = 2; i < 6; ++i) {
    const std::vector<std::string> f = fields(out[static_cast<std::size_t>(i)]);
    const std::size_t at = i == 2 ? 1 : 0;  // "best" leads the first row
    REQUIRE(f.size() == at + 5);
    CHECK((f[at] == "64" || f[at] == "128"));
    const double us = std::stod(f[at + 2]);
    CHECK(us > 0);
    CHECK(us >= previous);
    previous = us;
    CHECK(f[at + 3] == "-");
    CHECK(f[at + 4] == "-");
  }
  CHECK(out[6] == "          256     256  forbidden: err_num_partition_exceed_arch_limit: P=256 rows exceed the 128 "
                  "partitions of trn2's SBUF");
  CHECK(out[7] == "          256     512  forbidden: err_num_partition_exceed_arch_limit: P=256 rows exceed the 128 "
                  "partitions of trn2's SBUF");
  // The best configuration is recorded for autotuned launches.
  const std::vector<std::string> best = fields(out[2]);
  const std::string best_config = "P=" + best[1] + " F=" + best[2];
  CHECK(out[8] == "autotune: " + best_config + " recorded for [256,1024] [256,1024] on trn2 (nki run tensor_add_tiled --autotune)");
  const nki::autotune::Lookup l = nki::autotune::lookup(*library_registry().find_tunable("tensor_add_tiled"),
                                                        small_args(), "trn2");
  REQUIRE(l.record);
  CHECK(l.record->config.str() == best_config);
  CHECK(l.record->metric == "simulated");
  // Progress: stderr is not a terminal here, so one plain line per configuration.
  const std::vector<std::string> err = lines(r.err);
  REQUIRE(err.size() == 6);
  CHECK(err[0].starts_with("nki bench: 1/6 P=64 F=256: simulated "));
  CHECK(err[4] == "nki bench: 5/6 P=256 F=256: forbidden");
  CHECK(err[5] == "nki bench: 6/6 P=256 F=512: forbidden");
}

TEST_CASE("nki bench - host metric, CSV, JSON and the PNG plot, then nki run --autotune runs the winner") {
  const test::FreshCache cache;
  TempDir dir;
  const std::string csv = dir.file("sweep.csv"), json = dir.file("sweep.json"), png = dir.file("sweep.png");
  const CliResult r = run_cli(bench_args("P=32,64;F=256,512", {"--metric", "host", "--iters", "2", "--csv", csv,
                                                                     "--json-file", json, "--plot", png}));
  REQUIRE(r.status == 0);
  CHECK(lines(r.out)[0].ends_with(": 4 configurations, 0 forbidden; sorted by host latency"));

  const std::vector<std::string> rows = lines(read_bytes(csv));
  REQUIRE(rows.size() == 5);
  CHECK(rows[0] == "P,F,status,simulated_us,host_us,host_GBps,best,reason");
  double previous = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    std::vector<std::string> f;
    std::istringstream s(rows[i]);
    for (std::string x; std::getline(s, x, ',');) f.push_back(x);
    REQUIRE(f.size() == 7);  // the empty reason has no field after the last comma
    CHECK(f[2] == "ok");
    CHECK(f[6] == (i == 1 ? "1" : "0"));
    CHECK(std::stod(f[4]) >= previous);
    previous = std::stod(f[4]);
    // GB/s is the 3 x 256 x 1024 x 2 bytes moved over the median time.
    CHECK(std::stod(f[5]) == doctest::Approx(3 * 256 * 1024 * 2 / (std::stod(f[4]) * 1e3)).epsilon(0.01));
  }

  const nlohmann::json j = nlohmann::json::parse(read_bytes(json));
  CHECK(j["kernel"] == "tensor_add_tiled");
  CHECK(j["target"] == "trn2");
  CHECK(j["metric"] == "host");
  CHECK(j["iters"] == 2);
  CHECK(j["args"][0]["shape"] == std::vector<int>{256, 1024});
  CHECK(j["args"][0]["dtype"] == "bf16");
  REQUIRE(j["configs"].size() == 4);
  CHECK(j["configs"][0]["best"] == true);
  CHECK(j["best"] == j["configs"][0]["config"]);
  for (const auto& c : j["configs"]) {
    CHECK(c["status"] == "ok");
    for (const char* key : {"simulated_us", "host_us", "host_GBps"}) CHECK(c[key].get<double>() > 0);
  }

  // A PNG (signature, then the IHDR chunk with its size): two panels, 1200 x 480.
  const std::string bytes = read_bytes(png);
  REQUIRE(bytes.size() > 5000);
  CHECK(bytes.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  CHECK(bytes.substr(12, 4) == "IHDR");
  auto be32 = [&](std::size_t at) {
    return (static_cast<unsigned>(static_cast<unsigned char>(bytes[at])) << 24) |
           (static_cast<unsigned>(static_cast<unsigned char>(bytes[at + 1])) << 16) |
           (static_cast<unsigned>(static_cast<unsigned char>(bytes[at + 2])) << 8) |
           static_cast<unsigned>(static_cast<unsigned char>(bytes[at + 3]));
  };
  CHECK(be32(16) == 1200);
  CHECK(be32(20) == 480);
  CHECK(dir.temporaries().empty());

  // The next launch asking for autotune runs the recorded configuration: its grid says which.
  const std::string best_p = j["best"]["P"].dump();
  write_iota_npy(dir.file("a.npy"), {256, 1024});
  write_iota_npy(dir.file("b.npy"), {256, 1024});
  const CliResult run = run_cli({"run", "tensor_add_tiled", "--autotune", "--dtype", "bf16", "--input", dir.file("a.npy"),
                                 "--input", dir.file("b.npy"), "--output", dir.file("c.npy"), "--schedule",
                                 dir.file("s.json")});
  REQUIRE(run.status == 0);
  CHECK(run.err.empty());
  const nlohmann::json sched = nlohmann::json::parse(read_bytes(dir.file("s.json")));
  CHECK(sched["grid_spec"] == "spmd_dim(" + std::to_string(256 / (2 * std::stoi(best_p))) + ",nc(2))");
  const nki::NpyArray c = nki::read_npy(dir.file("c.npy"));
  REQUIRE(c.data.size() == 256 * 1024);
  for (std::size_t i = 0; i < c.data.size(); ++i) {
    if (i % 1000 < 128) REQUIRE(c.data[i] == static_cast<float>(2 * (i % 1000)));  // exact in bf16
  }
}

TEST_CASE("nki bench - --input files: their shapes and dtype are what is swept and recorded") {
  const test::FreshCache cache;
  TempDir dir;
  write_iota_npy(dir.file("a.npy"), {256, 512});
  write_iota_npy(dir.file("b.npy"), {256, 512});
  const CliResult r = run_cli({"bench", "tensor_add_tiled", "--sweep", "P=64,128;F=512", "--input", dir.file("a.npy"),
                               "--input", dir.file("b.npy"), "--iters", "1", "--metric", "host"});
  REQUIRE(r.status == 0);
  CHECK(lines(r.out)[0] ==
        "tensor_add_tiled [256,512] [256,512] fp32 on trn2: 2 configurations, 0 forbidden; sorted by host latency");
  const nki::autotune::Lookup l = nki::autotune::lookup(
      *library_registry().find_tunable("tensor_add_tiled"),
      {{{256, 512}, nki::language::float32}, {{256, 512}, nki::language::float32}}, "trn2");
  REQUIRE(l.record);
  CHECK(l.record->metric == "host");
}

TEST_CASE("nki run --autotune - without a record it says why and runs the defaults; a plain kernel is refused") {
  const test::FreshCache cache;
  TempDir dir;
  write_iota_npy(dir.file("a.npy"), {256, 1024});
  write_iota_npy(dir.file("b.npy"), {256, 1024});
  const CliResult r = run_cli({"run", "tensor_add_tiled", "--autotune", "--dtype", "bf16", "--input", dir.file("a.npy"),
                               "--input", dir.file("b.npy"), "--output", dir.file("c.npy")});
  CHECK(r.status == 0);
  CHECK(r.err == "nki run: tensor_add_tiled: no autotuned configuration (no record); using P=128 F=512\n");
  check_refused(run_cli({"run", "tensor_add", "--autotune", "--input", dir.file("a.npy"), "--input", dir.file("b.npy"),
                         "--output", dir.file("d.npy")}),
                "nki run: tensor_add: err_not_tunable: --autotune: has no tile parameters to tune; tunable kernels: "
                "mamba_v3, matmul_fully_optimized, tensor_add_tiled",
                dir, dir.file("d.npy"));
}

TEST_CASE("nki bench - bad input: one line, exit 2, nothing printed, no output file") {
  TempDir dir;
  const std::string csv = dir.file("out.csv");
  auto refused = [&](std::vector<std::string> args, const std::string& line) {
    args.push_back("--csv");
    args.push_back(csv);
    check_refused(run_cli(args), line, dir, csv);
  };
  refused({"bench", "no_such", "--sweep", "P=32"},
          "nki bench: err_unknown_kernel: unknown kernel \"no_such\"; tunable kernels: mamba_v3, matmul_fully_optimized, tensor_add_tiled");
  refused({"bench", "tensor_add", "--sweep", "P=32"},
          "nki bench: tensor_add: err_not_tunable: has no tile parameters to sweep; tunable kernels: mamba_v3, matmul_fully_optimized, tensor_add_tiled");
  refused(bench_args("P=32;F=64..100", {}),
          "nki bench: err_invalid_sweep: --sweep \"P=32;F=64..100\": range 64..100 of F: 100 is not 64 times a power "
          "of 2 (LO..HI doubles from LO to HI)");
  refused(bench_args("Q=32", {}),
          "nki bench: tensor_add_tiled: err_invalid_sweep: --sweep \"Q=32\": Q is not a parameter of tensor_add_tiled; "
          "its parameters: P, F");
  refused(bench_args("P=48", {}),
          "nki bench: tensor_add_tiled: err_invalid_sweep: --sweep \"P=48\": P=48 is not a value of tensor_add_tiled's "
          "P; its values: 1, 2, 4, 8, 16, 32, 64, 128, 256, 512");
  refused(bench_args("P=32", {"--metric", "fastest"}),
          "nki bench: err_invalid_metric: unknown --metric \"fastest\"; expected simulated or host");
  refused(bench_args("P=32", {"--iters", "-1"}), "nki bench: err_invalid_iters: --iters -1: expected a count >= 0");
  refused(bench_args("P=32", {"--metric", "host", "--iters", "0"}),
          "nki bench: err_invalid_iters: --iters 0: expected a count >= 1");
  refused({"bench", "tensor_add_tiled", "--sweep", "P=32", "--shape", "256x1024"},
          "nki bench: tensor_add_tiled: err_argument_count: takes 2 arguments (--input or --shape), 1 given");
  refused(bench_args("P=32", {"--target", "trn9"}),
          "nki bench: err_unknown_target: unknown target \"trn9\"; expected one of trn1, inf2, trn2, trn3");
  refused(bench_args("P=32", {"--json-file", csv}),
          "nki bench: err_output_not_writable: --csv and --json-file name the same file \"" + csv + "\"");
  refused(bench_args("P=256,512", {}),
          "nki bench: tensor_add_tiled: err_no_legal_configuration: every configuration of --sweep \"P=256,512\" is "
          "forbidden on trn2 (first: P=256 F=512: err_num_partition_exceed_arch_limit: P=256 rows exceed the 128 "
          "partitions of trn2's SBUF)");
  refused({"bench", "tensor_add_tiled", "--sweep", "F=4096", "--shape", "256x1024", "--shape", "256x1024"},
          "nki bench: tensor_add_tiled: err_no_legal_configuration: every configuration of --sweep \"F=4096\" is "
          "forbidden on trn2 (first: P=128 F=4096: tensor_add_tiled: err_input_shape_not_tiled: input shape "
          "[256,1024] is not a 2-D multiple of [256,4096] (P=128 rows on each of 2 cores, F=4096))");
}

TEST_CASE("nki bench - --plot without gnuplot on PATH is refused before the sweep") {
  TempDir dir;
  const std::string png = dir.file("p.png");
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", dir.path().c_str(), 1);
  const CliResult r = run_cli(bench_args("P=32", {"--plot", png}));
  ::setenv("PATH", path.c_str(), 1);
  check_refused(r,
                "nki bench: err_gnuplot_missing: --plot needs gnuplot, which is not on PATH (Debian: apt-get install "
                "gnuplot-nox)",
                dir, png);
}

TEST_CASE("nki bench - on a terminal, progress is one bar redrawn in place on stderr") {
  // `script` runs the command on a pseudo-terminal and keeps what it printed there; stdout is
  // sent to /dev/null, so the log holds stderr alone.
  TempDir dir;
  const std::string log = dir.file("tty.log");
  const std::string command = fmt::format(
      "NKI_CACHE_DIR='{}' '{}' bench tensor_add_tiled --sweep 'P=64,128;F=512' --shape 256x1024 --shape 256x1024 "
      "--iters 0 >/dev/null",
      dir.file("cache"), test::nki_binary());
  REQUIRE(std::system(fmt::format("script -qec \"{}\" '{}' >/dev/null 2>&1", command, log).c_str()) == 0);
  const std::string text = read_bytes(log);
  const std::string bar = "\r\x1b[2K[                              ] 0/2 P=64 F=512"
                          "\r\x1b[2K[###############               ] 1/2 P=128 F=512"
                          "\r\x1b[2K[##############################] 2/2\r\n";
  CHECK_MESSAGE(text.find(bar) != std::string::npos, text);
  CHECK(text.find("nki bench: 1/2") == std::string::npos);  // no plain lines
}

TEST_CASE("nki bench --json prints the JSON on stdout, as profile and cache do; --no-record leaves the record") {
  const test::FreshCache cache;
  TempDir dir;
  const CliResult recorded = run_cli(bench_args("P=64", {"--iters", "0"}));
  REQUIRE(recorded.status == 0);
  const CliResult r = run_cli(bench_args("P=32,64;F=256", {"--iters", "0", "--json", "--no-record"}));
  REQUIRE(r.status == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);  // stdout is the JSON alone
  CHECK(j["kernel"] == "tensor_add_tiled");
  REQUIRE(j["configs"].size() == 2);
  const std::string best = "P=" + std::to_string(j["best"]["P"].get<int>()) + " F=256";
  const std::vector<std::string> err = lines(r.err);
  REQUIRE(!err.empty());
  CHECK(err.back() == "autotune: " + best + " is the best for [256,1024] [256,1024] on trn2; not recorded (--no-record)");
  // The record is still the first sweep's.
  const nki::autotune::Lookup l = nki::autotune::lookup(*library_registry().find_tunable("tensor_add_tiled"),
                                                        small_args(), "trn2");
  REQUIRE(l.record);
  CHECK(l.record->config.str() == "P=64 F=512");
}

namespace {

/** matmul_fully_optimized on a [256,512] lhsT and a [256,1024] rhs in bf16: 2 x 256 x 512 x 1024 FLOPs a launch. */
std::vector<std::string> matmul_bench(std::vector<std::string> more) {
  std::vector<std::string> a{"bench", "matmul_fully_optimized", "--sweep", "tiles_m=1,2;tiles_n=1;tiles_k=2",
                             "--shape", "256x512", "--shape", "256x1024", "--dtype", "bf16", "--no-record"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

constexpr std::int64_t kMatmulFlops = 2LL * 256 * 512 * 1024;

}  // namespace

TEST_CASE("nki bench - a matmul sweep adds TFLOP/s, hfu, Tensor engine utilization and host GFLOP/s") {
  const CliResult j = run_cli(matmul_bench({"--iters", "1", "--json"}));
  REQUIRE(j.status == 0);
  const nlohmann::json sweep = nlohmann::json::parse(j.out);
  REQUIRE(sweep["configs"].size() == 2);
  for (const auto& c : sweep["configs"]) {
    CHECK(c["flops"] == kMatmulFlops);
    CHECK(c["simulated_TFLOPs"].get<double>() ==
          doctest::Approx(kMatmulFlops / (c["simulated_us"].get<double>() * 1e6)).epsilon(1e-12));
    CHECK(c["host_GFLOPs"].get<double>() ==
          doctest::Approx(kMatmulFlops / (c["host_us"].get<double>() * 1e3)).epsilon(1e-12));
    // hfu and the Tensor engine's busy share are the profile's for the same configuration.
    const std::string config = fmt::format("tiles_m={},tiles_n={},tiles_k={}", c["config"]["tiles_m"].get<int>(),
                                           c["config"]["tiles_n"].get<int>(), c["config"]["tiles_k"].get<int>());
    const CliResult p = run_cli({"profile", "matmul_fully_optimized", "--shape", "256x512", "--shape", "256x1024",
                                 "--dtype", "bf16", "--config", config, "--json"});
    REQUIRE(p.status == 0);
    const nlohmann::json profile = nlohmann::json::parse(p.out);
    CHECK(profile["flops"] == kMatmulFlops);
    CHECK(profile["hfu"].get<double>() == std::round(c["hfu"].get<double>() * 1e6) / 1e6);
    double tensor_busy_us = 0;
    for (const auto& core : profile["cores"]) tensor_busy_us += core["engines"]["Tensor"]["busy_us"].get<double>();
    const double cores = static_cast<double>(profile["cores"].size());
    CHECK(c["tensor_util"].get<double>() ==
          doctest::Approx(tensor_busy_us / (profile["latency_us"].get<double>() * cores)).epsilon(1e-6));
    CHECK(c["tensor_util"].get<double>() > c["hfu"].get<double>());  // busy at less than the engine's peak rate
  }

  // The table and the CSV, simulated only: the same figures, in their own columns.
  const CliResult t = run_cli(matmul_bench({"--iters", "0"}));
  REQUIRE(t.status == 0);
  const nlohmann::json simulated = nlohmann::json::parse(run_cli(matmul_bench({"--iters", "0", "--json"})).out);
  const std::vector<std::string> out = lines(t.out);
  REQUIRE(out.size() == 5);
  CHECK(fields(out[1]) == std::vector<std::string>{"tiles_m", "tiles_n", "tiles_k", "simulated_us", "host_us", "host_GBps",
                                                   "sim_TFLOPs", "hfu", "tensor_util", "host_GFLOPs"});
  for (std::size_t i = 0; i < 2; ++i) {
    const nlohmann::json& c = simulated["configs"][i];
    std::vector<std::string> f = fields(out[2 + i]);
    if (i == 0) f.erase(f.begin());  // "best"
    CHECK(f == std::vector<std::string>{
                   std::to_string(c["config"]["tiles_m"].get<int>()), "1", "2",
                   fmt::format("{:.3f}", c["simulated_us"].get<double>()), "-", "-",
                   fmt::format("{:.3f}", c["simulated_TFLOPs"].get<double>()),
                   fmt::format("{:.1f}%", c["hfu"].get<double>() * 100), fmt::format("{:.1f}%", c["tensor_util"].get<double>() * 100),
                   "-"});
  }
  TempDir dir;
  REQUIRE(run_cli(matmul_bench({"--iters", "0", "--csv", dir.file("m.csv")})).status == 0);
  const std::vector<std::string> csv = lines(read_bytes(dir.file("m.csv")));
  REQUIRE(csv.size() == 3);
  CHECK(csv[0] == "tiles_m,tiles_n,tiles_k,status,simulated_us,host_us,host_GBps,simulated_TFLOPs,hfu,tensor_util,"
                  "host_GFLOPs,best,reason");
  const nlohmann::json& best = simulated["configs"][0];
  CHECK(csv[1] == fmt::format("{},1,2,ok,{:.3f},,,{:.4f},{:.4f},{:.4f},,1,", best["config"]["tiles_m"].get<int>(),
                              best["simulated_us"].get<double>(), best["simulated_TFLOPs"].get<double>(),
                              best["hfu"].get<double>(), best["tensor_util"].get<double>()));

  // A kernel without FLOPs keeps its columns: no FLOP fields in the JSON either.
  const nlohmann::json add = nlohmann::json::parse(run_cli(bench_args("P=64", {"--iters", "0", "--json", "--no-record"})).out);
  for (const char* key : {"flops", "simulated_TFLOPs", "hfu", "tensor_util", "host_GFLOPs"})
    CHECK(!add["configs"][0].contains(key));
}

TEST_CASE("nki bench - a sweep that replaces the record with another configuration says so on stderr") {
  const test::FreshCache cache;
  auto replaced_lines = [](const CliResult& r) {
    std::vector<std::string> found;
    for (const std::string& l : lines(r.err))
      if (l.find("replaced") != std::string::npos) found.push_back(l);
    return found;
  };
  const CliResult first = run_cli(bench_args("P=64;F=512", {"--iters", "0"}));
  REQUIRE(first.status == 0);
  CHECK(replaced_lines(first).empty());  // nothing to replace
  const CliResult second = run_cli(bench_args("P=128;F=512", {"--iters", "0"}));
  REQUIRE(second.status == 0);
  CHECK(replaced_lines(second) ==
        std::vector<std::string>{"nki bench: tensor_add_tiled: replaced the autotune record for [256,1024] [256,1024] on "
                                 "trn2: P=64 F=512 -> P=128 F=512"});
  CHECK(replaced_lines(run_cli(bench_args("P=128;F=512", {"--iters", "0"}))).empty());  // the same configuration
  CHECK(replaced_lines(run_cli(bench_args("P=32;F=512", {"--iters", "0", "--no-record"}))).empty());
  const nki::autotune::Lookup l = nki::autotune::lookup(*library_registry().find_tunable("tensor_add_tiled"),
                                                        small_args(), "trn2");
  REQUIRE(l.record);
  CHECK(l.record->config.str() == "P=128 F=512");
}
