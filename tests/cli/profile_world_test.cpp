/**
 * \file `nki profile --mesh`: a world launch on the cost model, one core per rank, each chip's
 * cores sharing its HBM and NeuronLink; the all_reduce on every rank's timeline.
 */
#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"

using namespace clitest;

namespace {
const std::vector<std::string> kTp{"profile", "tensor_parallel_mlp", "--shape", "128x512", "--shape", "512x512",
                                   "--shape", "512x512", "--dtype", "bf16", "--mesh", "data=2,tensor=4"};
}  // namespace

TEST_CASE("nki profile --mesh - every rank of the tutorial's world, its all_reduce on each rank's timeline") {
  TempDir dir;
  std::vector<std::string> args = kTp;
  for (const char* a : {"--json", "--trace"}) args.emplace_back(a);
  args.push_back(dir.file("trace.json"));
  const CliResult r = run_cli(args);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["ranks"] == 8);
  REQUIRE(j["cores"].size() == 8);
  for (int rank = 0; rank < 8; ++rank) {
    CHECK(j["cores"][rank]["rank"] == rank);
    CHECK(j["cores"][rank]["nc"] == rank);  // trn2: eight cores on a chip, one rank each
    CHECK(j["cores"][rank]["latency_us"] == j["cores"][0]["latency_us"]);  // the ranks are alike
  }
  const nlohmann::json t = nlohmann::json::parse(read_bytes(dir.file("trace.json")));
  int all_reduce = 0;
  std::vector<bool> seen(8, false);
  for (const nlohmann::json& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == 5) CHECK(e["args"]["name"] == "rank 5 (NC5)");
    if (e["ph"] != "X" || e["name"] != "all_reduce") continue;
    ++all_reduce;
    seen[static_cast<std::size_t>(e["pid"].get<int>())] = true;
    CHECK(e["args"]["source"].get<std::string>().starts_with("kernels/src/tensor_parallel_mlp.cpp:"));
  }
  CHECK(all_reduce == 8 * 16);  // one event per DMA queue of every rank's core
  for (bool s : seen) CHECK(s);
}

TEST_CASE("nki profile --mesh - on trn1 the same world spans four chips: the all_reduce crosses NeuronLink") {
  std::vector<std::string> one_chip = kTp, four_chips = kTp;
  for (const char* a : {"--json", "--target", "trn2"}) one_chip.emplace_back(a);
  for (const char* a : {"--json", "--target", "trn1"}) four_chips.emplace_back(a);
  const CliResult a = run_cli(one_chip), b = run_cli(four_chips);
  REQUIRE(a.status == 0);
  REQUIRE(b.status == 0);
  CHECK(nlohmann::json::parse(a.out)["cores"][7]["nc"] == 7);
  CHECK(nlohmann::json::parse(b.out)["cores"][7]["nc"] == 1);  // trn1: two cores a chip, rank 7 is chip 3's second
  const CliResult bad = run_cli({"profile", "tensor_parallel_mlp", "--shape", "128x512", "--shape", "512x512", "--shape",
                                 "512x512", "--mesh", "data=2,tensor"});
  CHECK(bad.status == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err == "nki profile: err_invalid_mesh: --mesh \"data=2,tensor\": entry \"tensor\" is not name=size; expected "
                   "e.g. x=2,y=4\n");
}
