/** \file `nki mesh replica-groups` and `nki mesh sharding`: text and JSON output, and refused input (exit 2, one line). */
#include <nlohmann/json.hpp>

#include "cli_fixture.h"

using clitest::CliResult;
using clitest::run_cli;
using json = nlohmann::json;

namespace {

/** A refusal: exit status 2, exactly `line` on stderr, nothing on stdout. */
void check_refused(const CliResult& r, const std::string& line) {
  CHECK(r.status == nki::cli::kExitBadInput);
  CHECK(r.err == line + "\n");
  CHECK(r.out.empty());
}

}  // namespace

TEST_CASE("cli mesh: replica-groups prints the explicit groups and the iota form") {
  const CliResult r = run_cli({"mesh", "replica-groups", "--mesh", "x=2,y=4", "--axes", "y"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out == "replica_groups: [[0,1,2,3],[4,5,6,7]]\niota: [2,4]<=[8]\n");
}

TEST_CASE("cli mesh: replica-groups --json") {
  const CliResult r = run_cli({"mesh", "replica-groups", "--mesh", "x=2,y=4", "--axes", "y", "--json"});
  CHECK(r.status == 0);
  CHECK(json::parse(r.out) == json::parse(R"({"replica_groups": [[0,1,2,3],[4,5,6,7]], "iota": "[2,4]<=[8]"})"));
  const CliResult x = run_cli({"mesh", "replica-groups", "--mesh", "x=2,y=4", "--axes", "x", "--json"});
  CHECK(x.out == "{\"replica_groups\":[[0,4],[1,5],[2,6],[3,7]],\"iota\":\"[4,2]<=[2,4]T(1,0)\"}\n");
}

TEST_CASE("cli mesh: replica-groups with sub-axes and custom device ids") {
  CHECK(run_cli({"mesh", "replica-groups", "--mesh", "x=2,y=4", "--axes", "\"y\":(1)2"}).out ==
        "replica_groups: [[0,2],[1,3],[4,6],[5,7]]\niota: [4,2]<=[2,2,2]T(0,2,1)\n");
  const CliResult r =
      run_cli({"mesh", "replica-groups", "--mesh", "x=2,y=4", "--device-ids", "7,6,5,4,3,2,1,0", "--axes", "y", "--json"});
  CHECK(r.out == "{\"replica_groups\":[[7,6,5,4],[3,2,1,0]],\"iota\":null}\n");
}

TEST_CASE("cli mesh: sharding prints both annotations and each device's slices and replica id") {
  const CliResult r = run_cli({"mesh", "sharding", "--mesh", "r=1,b=2,m=4", "--spec", "(('r','b'), None)", "--shape", "16x16"});
  CHECK(r.status == 0);
  CHECK(r.out ==
        "annotation: {devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}\n"
        "iota_annotation: {devices=[2,1,4]<=[8] last_tile_dim_replicate}\n"
        "device 0: slices [0:8, 0:16] padding [0, 0] replica_id 0\n"
        "device 1: slices [0:8, 0:16] padding [0, 0] replica_id 1\n"
        "device 2: slices [0:8, 0:16] padding [0, 0] replica_id 2\n"
        "device 3: slices [0:8, 0:16] padding [0, 0] replica_id 3\n"
        "device 4: slices [8:16, 0:16] padding [0, 0] replica_id 0\n"
        "device 5: slices [8:16, 0:16] padding [0, 0] replica_id 1\n"
        "device 6: slices [8:16, 0:16] padding [0, 0] replica_id 2\n"
        "device 7: slices [8:16, 0:16] padding [0, 0] replica_id 3\n");
}

TEST_CASE("cli mesh: sharding --json with custom device ids and padding") {
  const CliResult r = run_cli({"mesh", "sharding", "--mesh", "r=1,b=2,m=4", "--device-ids", "7,6,5,4,3,2,1,0", "--spec",
                               "(('r','b'), None)", "--shape", "16x16", "--json"});
  CHECK(r.status == 0);
  const json j = json::parse(r.out);
  CHECK(j["annotation"] == "{devices=[2,1,4]7,6,5,4,3,2,1,0 last_tile_dim_replicate}");
  CHECK(j["iota_annotation"].is_null());
  REQUIRE(j["devices"].size() == 8);
  CHECK(j["devices"][0] == json::parse(R"({"device": 0, "slices": [[8,16],[0,16]], "padding": [0,0], "replica_id": 3})"));
  CHECK(j["devices"][7] == json::parse(R"({"device": 7, "slices": [[0,8],[0,16]], "padding": [0,0], "replica_id": 0})"));

  const CliResult p = run_cli({"mesh", "sharding", "--mesh", "x=8", "--spec", "('x',)", "--shape", "10", "--json"});
  CHECK(p.out ==
        "{\"annotation\":\"{devices=[8]0,1,2,3,4,5,6,7}\",\"iota_annotation\":\"{devices=[8]<=[8]}\",\"devices\":["
        "{\"device\":0,\"slices\":[[0,2]],\"padding\":[0],\"replica_id\":0},"
        "{\"device\":1,\"slices\":[[2,4]],\"padding\":[0],\"replica_id\":0},"
        "{\"device\":2,\"slices\":[[4,6]],\"padding\":[0],\"replica_id\":0},"
        "{\"device\":3,\"slices\":[[6,8]],\"padding\":[0],\"replica_id\":0},"
        "{\"device\":4,\"slices\":[[8,10]],\"padding\":[0],\"replica_id\":0},"
        "{\"device\":5,\"slices\":[[10,10]],\"padding\":[2],\"replica_id\":0},"
        "{\"device\":6,\"slices\":[[10,10]],\"padding\":[2],\"replica_id\":0},"
        "{\"device\":7,\"slices\":[[10,10]],\"padding\":[2],\"replica_id\":0}]}\n");
}

TEST_CASE("cli mesh: sharding of a replicated and a one-device spec") {
  CHECK(run_cli({"mesh", "sharding", "--mesh", "x=2", "--spec", "(None,)", "--shape", "3"}).out ==
        "annotation: {replicated}\niota_annotation: {replicated}\n"
        "device 0: slices [0:3] padding [0] replica_id 0\ndevice 1: slices [0:3] padding [0] replica_id 1\n");
  CHECK(run_cli({"mesh", "sharding", "--mesh", "x=1", "--spec", "('x', None)", "--shape", "2x2"}).out ==
        "annotation: {maximal device=0}\niota_annotation: {maximal device=0}\n"
        "device 0: slices [0:2, 0:2] padding [0, 0] replica_id 0\n");
}

TEST_CASE("cli mesh: a bad --mesh or --device-ids is refused, naming the value") {
  check_refused(run_cli({"mesh", "replica-groups", "--mesh", "x=2,y", "--axes", "y"}),
                "nki mesh replica-groups: err_invalid_mesh: --mesh \"x=2,y\": entry \"y\" is not name=size; expected e.g. "
                "x=2,y=4");
  check_refused(run_cli({"mesh", "replica-groups", "--mesh", "x=2,x=4", "--axes", "x"}),
                "nki mesh replica-groups: err_invalid_mesh: axis name 'x' is used for axes 0 and 1");
  check_refused(run_cli({"mesh", "sharding", "--mesh", "x=2,y=4", "--device-ids", "0,1,2", "--spec", "('x', 'y')",
                         "--shape", "4x4"}),
                "nki mesh sharding: err_invalid_mesh: 3 device ids for a mesh of shape [2,4] (8 devices)");
  check_refused(run_cli({"mesh", "sharding", "--mesh", "x=2", "--device-ids", "0,a", "--spec", "('x',)", "--shape", "4"}),
                "nki mesh sharding: err_invalid_mesh: --device-ids \"0,a\": \"a\" is not an integer; expected e.g. "
                "7,6,5,4,3,2,1,0");
}

TEST_CASE("cli mesh: a bad --spec, --shape or --axes is refused, naming the value") {
  check_refused(run_cli({"mesh", "sharding", "--mesh", "x=2,y=4", "--spec", "('x', 'x')", "--shape", "4x4"}),
                "nki mesh sharding: err_mesh_axis_used_twice: spec ('x', 'x') uses mesh axis 'x' twice; each mesh axis "
                "may shard at most one dimension, once");
  check_refused(run_cli({"mesh", "sharding", "--mesh", "x=2,y=4", "--spec", "('x',)", "--shape", "4x4"}),
                "nki mesh sharding: err_partition_spec_rank_mismatch: spec ('x',) has 1 entry for a tensor of rank 2; "
                "give one per dimension");
  check_refused(run_cli({"mesh", "sharding", "--mesh", "x=2", "--spec", "('x',)", "--shape", "4x0"}),
                "nki mesh sharding: err_invalid_shape: --shape \"4x0\": \"0\" is not a positive size; expected sizes "
                "joined by x, e.g. 16x16");
  check_refused(run_cli({"mesh", "sharding", "--mesh", "x=2", "--spec", "x", "--shape", "4"}),
                "nki mesh sharding: err_invalid_partition_spec: spec \"x\": unexpected \"x\" at position 0; expected "
                "None, a quoted axis name, an integer or a tuple");
  check_refused(run_cli({"mesh", "replica-groups", "--mesh", "x=2,y=4", "--axes", "z"}),
                "nki mesh replica-groups: err_unknown_mesh_axis: axis \"z\" is not in the mesh {\"x\"=2, \"y\"=4}; its "
                "axes are \"x\", \"y\"");
}

TEST_CASE("cli mesh: missing flags, unknown subcommands and extra arguments are refused in one line") {
  check_refused(run_cli({"mesh", "sharding", "--mesh", "x=2", "--shape", "4"}), "nki mesh sharding: --spec is required");
  check_refused(run_cli({"mesh", "replica-groups", "--axes", "x"}), "nki mesh replica-groups: --mesh is required");
  check_refused(run_cli({"mesh"}),
                "nki mesh: a subcommand is required: replica-groups or sharding (see nki mesh --help)");
  check_refused(run_cli({"mesh", "groups"}),
                "nki mesh: unknown subcommand \"groups\"; subcommands: replica-groups, sharding (see nki mesh --help)");
  check_refused(run_cli({"mesh", "replica-groups", "--mesh", "x=2", "--axes", "x", "--verbose", "1"}),
                "nki mesh replica-groups: unexpected arguments --verbose 1");
}
