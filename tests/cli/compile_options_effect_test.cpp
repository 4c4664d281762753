/**
 * \file `nki compile`: each option changes what it says: spmd the artifact count,
 * enable_internal_spmd_opt the schedule and simulated latency, layer_unroll_factor the lowered
 * code and the cache key; --output DIR holds the artifacts, options.json and the kernel IR.
 */
#include <nlohmann/json.hpp>
#include <regex>

#include "cli/cli_fixture.h"
#include "nki/traced_kernel.h"

using clitest::run_cli;
namespace fs = std::filesystem;

namespace {

// tensor_add's grid [16, 4] has no nc factor; 64 instances keep one core's DMA queues busy.
const std::vector<std::string> kTensorAdd{"compile", "tensor_add", "--shape", "2048x2048", "--shape", "2048x2048",
                                          "--dtype", "bf16"};
const std::vector<std::string> kTensorAddNc2{"compile", "tensor_add_nc2", "--shape", "512x1024", "--shape", "512x1024",
                                             "--dtype", "bf16"};
// matmul of [128, 128]^T @ [128, 2048]: its outermost loop (over N blocks of 1024) runs twice.
const std::vector<std::string> kMatmul{"compile", "matmul_fully_optimized", "--shape", "128x128", "--shape", "128x2048"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

double latency_us(const std::string& out) {
  std::smatch m;
  REQUIRE(std::regex_search(out, m, std::regex("simulated latency ([0-9.]+) us on trn2\n")));
  return std::stod(m[1]);
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("nki compile: --spmd compiles one artifact for the world, MPMD one per busy core, and --output holds them") {
  test::FreshCache cache;
  test::TempDir dir;
  const clitest::CliResult m = run_cli(with(kTensorAddNc2, {"--output", dir.file("mpmd")}));
  CHECK(m.status == 0);
  CHECK(m.err == "nki compile: compiling MPMD, one artifact per core; pass --spmd to compile one artifact that every "
                 "core shares\n");
  CHECK(m.out.starts_with("tensor_add_nc2: MPMD on 8 cores, grid spmd_dim(2,nc(2)),2: 2 artifacts compiled, 0 reused\n"));
  const clitest::CliResult s = run_cli(with(kTensorAddNc2, {"--spmd", "--output", dir.file("spmd")}));
  CHECK(s.status == 0);
  CHECK(s.err.empty());
  CHECK(s.out.starts_with("tensor_add_nc2: SPMD on 8 cores, grid spmd_dim(2,nc(2)),2: 1 artifact compiled, 0 reused\n"));
  CHECK(entries(dir.path() / "mpmd" / "artifacts").size() == 2);
  REQUIRE(entries(dir.path() / "spmd" / "artifacts").size() == 1);

  const fs::path out = dir.path() / "spmd";
  CHECK(entries(out) == std::vector<std::string>{"artifacts", "cores.json", "kernel.ir", "options.json"});
  const std::string key = entries(out / "artifacts")[0];
  CHECK(entries(out / "artifacts" / key) ==
        std::vector<std::string>{"kernel.so", "key.txt", "lowered.stmt", "plan.json"});
  CHECK(test::read_bytes((out / "artifacts" / key / "kernel.so").string()) ==
        test::read_bytes((nki::cache::entry_directory(key) / "kernel.so").string()));
  CHECK(test::read_bytes((out / "options.json").string()) ==
        run_cli(with(kTensorAddNc2, {"--spmd", "--dump-options"})).out);
  const std::shared_ptr<const nki::TracedKernel> traced = nki::kernels::tensor_add().trace(
      {{512, 1024}, {512, 1024}}, {nki::DType::bf16, nki::DType::bf16}, nki::parse_grid("spmd_dim(2,nc(2)),2"));
  CHECK(test::read_bytes((out / "kernel.ir").string()) == traced->text);
  const nlohmann::json cores = nlohmann::json::parse(test::read_bytes((out / "cores.json").string()));
  CHECK(cores.at("cores") == nlohmann::json::parse(fmt::format(
                                 R"([{{"nc":0,"artifact":"{0}","instances":4}},{{"nc":1,"artifact":"{0}","instances":4}}])",
                                 key)));
  CHECK(dir.temporaries().empty());
}

TEST_CASE("nki compile: enable_internal_spmd_opt spreads a grid without nc over the logical core, and it is faster") {
  test::FreshCache cache;
  // lnc 2 with --spmd: the opt is on; lnc 1 or MPMD: off.
  const clitest::CliResult on = run_cli(with(kTensorAdd, {"--spmd"}));
  const clitest::CliResult off_lnc1 = run_cli(with(kTensorAdd, {"--spmd", "--lnc", "1"}));
  const clitest::CliResult off_mpmd = run_cli(kTensorAdd);
  REQUIRE(on.status == 0);
  REQUIRE(off_lnc1.status == 0);
  REQUIRE(off_mpmd.status == 0);
  const std::regex core_line("  NC([0-9]+) [0-9a-f]{16} (compiled|reused), ([0-9]+) instances\n");
  auto placement = [&](const std::string& out) {
    std::vector<std::string> cores;
    for (std::sregex_iterator it(out.begin(), out.end(), core_line), end; it != end; ++it)
      cores.push_back(fmt::format("NC{}:{}", (*it)[1].str(), (*it)[3].str()));
    return cores;
  };
  CHECK(placement(on.out) == std::vector<std::string>{"NC0:32", "NC1:32"});
  CHECK(placement(off_lnc1.out) == std::vector<std::string>{"NC0:64"});
  CHECK(placement(off_mpmd.out) == std::vector<std::string>{"NC0:64"});
  CHECK(on.out.starts_with("tensor_add: SPMD on 8 cores, grid 16,4: 1 artifact compiled, 0 reused\n"));
  // Two cores, each with its own DMA queues: the same queue-bound work in little more than half the time.
  CHECK(latency_us(on.out) < 0.6 * latency_us(off_lnc1.out));
  CHECK(latency_us(on.out) > 0.4 * latency_us(off_lnc1.out));
  CHECK(latency_us(off_lnc1.out) == latency_us(off_mpmd.out));
}

TEST_CASE("nki compile: layer_unroll_factor unrolls the outermost loop in the lowered code and changes the cache key") {
  test::FreshCache cache;
  test::TempDir dir;
  const clitest::CliResult rolled = run_cli(with(kMatmul, {"--spmd", "--output", dir.file("rolled")}));
  const clitest::CliResult fsdp =
      run_cli(with(kMatmul, {"--spmd", "--distribution-strategy", "fsdp", "--output", dir.file("fsdp")}));
  // A user-set factor wins over the preset's: fsdp with --layer-unroll-factor 1 is the rolled artifact, reused.
  const clitest::CliResult fsdp_rolled = run_cli(with(
      kMatmul, {"--spmd", "--distribution-strategy", "fsdp", "--layer-unroll-factor", "1", "--output", dir.file("fsdp1")}));
  REQUIRE(rolled.status == 0);
  REQUIRE(fsdp.status == 0);
  REQUIRE(fsdp_rolled.status == 0);
  CHECK(rolled.out.find(": 1 artifact compiled, 0 reused\n") != std::string::npos);
  CHECK(fsdp.out.find(": 1 artifact compiled, 0 reused\n") != std::string::npos);
  CHECK(fsdp_rolled.out.find(": 0 artifacts compiled, 1 reused\n") != std::string::npos);
  const std::string k_rolled = entries(dir.path() / "rolled" / "artifacts").at(0);
  const std::string k_fsdp = entries(dir.path() / "fsdp" / "artifacts").at(0);
  CHECK(k_rolled != k_fsdp);
  CHECK(entries(dir.path() / "fsdp1" / "artifacts").at(0) == k_rolled);
  auto lowered = [&](const char* sub, const std::string& key) {
    return test::read_bytes((dir.path() / sub / "artifacts" / key / "lowered.stmt").string());
  };
  // fsdp's factor 4 on a loop of 2 iterations: two copies, no remainder.
  CHECK(lowered("rolled", k_rolled).starts_with("for loop0 = 0 step 1, every iteration:\n"));
  CHECK(lowered("fsdp", k_fsdp).starts_with("for loop0 = 0 step 2, 1 time:\n"));
  CHECK(lowered("fsdp", k_fsdp).find("(loop0 + 1)") != std::string::npos);
  CHECK(lowered("fsdp", k_fsdp).find("for loop0 = 2") == std::string::npos);
  CHECK(lowered("rolled", k_rolled).find("(loop0 + 1)") == std::string::npos);
  CHECK(test::read_bytes((dir.path() / "fsdp" / "artifacts" / k_fsdp / "key.txt").string()).find(
            "\nlayer_unroll_factor 4\n") != std::string::npos);
  const nlohmann::json o = nlohmann::json::parse(test::read_bytes(dir.file("fsdp/options.json")));
  CHECK(o.at("layer_unroll_factor") == 4);
}
