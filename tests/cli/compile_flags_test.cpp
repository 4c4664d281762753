/** \file `nki compile`: the flag surface, --help and --help-hidden-list, --dump-options, and every refusal. */
#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"
#include "nki/driver_options.h"

using clitest::run_cli;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kTensorAdd{"compile", "tensor_add", "--shape", "512x1024", "--shape", "512x1024"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

/** Whether `help` lists `flag` as a flag of its own: after a space or comma, before a space, comma or line end. */
bool lists(const std::string& help, const std::string& flag) {
  for (std::size_t at = help.find(flag); at != std::string::npos; at = help.find(flag, at + 1)) {
    const std::size_t end = at + flag.size();
    if (at > 0 && (help[at - 1] == ' ' || help[at - 1] == ',') && end < help.size() &&
        (help[end] == ' ' || help[end] == ',' || help[end] == '\n'))
      return true;
  }
  return false;
}

}  // namespace

TEST_CASE("nki compile --help shows the public flags, --help-hidden-list every flag") {
  const clitest::CliResult help = run_cli({"compile", "--help"});
  CHECK(help.status == 0);
  const clitest::CliResult all = run_cli({"compile", "--help-hidden-list"});
  CHECK(all.status == 0);
  for (const char* flag : {"--input", "--shape", "--dtype", "--target", "--lnc", "--logical-nc-config", "--spmd",
                           "--enable-experimental-spmd", "--mesh", "--cores", "--grid", "--output", "--dump-options",
                           "--help-hidden-list"}) {
    CAPTURE(flag);
    CHECK(lists(help.out, flag));
    CHECK(lists(all.out, flag));
  }
  for (const char* flag : {"--distribution-strategy", "--distribution-type-llm-training", "--layer-unroll-factor"}) {
    CAPTURE(flag);
    CHECK(help.out.find(flag) == std::string::npos);
    CHECK(lists(all.out, flag));
  }
  CHECK(all.out.find("Internal options") != std::string::npos);
  // Asking for the hidden list does not leave the internal flags visible to a later --help.
  CHECK(run_cli({"compile", "--help"}).out == help.out);
}

TEST_CASE("nki compile --dump-options prints the seeded options and compiles nothing") {
  test::FreshCache cache;
  const clitest::CliResult r = run_cli(with(kTensorAdd, {"--spmd", "--distribution-strategy", "fsdp", "--dump-options"}));
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  nki::DriverFlags f;
  f.spmd = true;
  f.distribution_strategy = "fsdp";
  CHECK(r.out == nki::pipeline_options_json(nki::seed_pipeline_options(f)));
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j.at("layer_unroll_factor") == 4);
  CHECK(j.at("enable_internal_spmd_opt") == true);
  CHECK(j.at("frontend_options") == nlohmann::json::array({"spmd"}));
  CHECK(nki::cache::stats().entries == 0);
  // The long spellings are the same flags.
  CHECK(run_cli(with(kTensorAdd, {"--enable-experimental-spmd", "--distribution-strategy", "fsdp", "--dump-options"}))
            .out == r.out);
  CHECK(run_cli(with(kTensorAdd, {"--logical-nc-config", "1", "--dump-options"})).out ==
        run_cli(with(kTensorAdd, {"--lnc", "1", "--dump-options"})).out);
}

TEST_CASE("nki compile: --distribution-strategy llm-training and --distribution-type-llm-training dump the same bytes") {
  test::TempDir dir;
  const clitest::CliResult by_name =
      run_cli(with(kTensorAdd, {"--spmd", "--distribution-strategy", "llm-training", "--dump-options"}));
  const clitest::CliResult by_flag = run_cli(with(kTensorAdd, {"--spmd", "--distribution-type-llm-training", "--dump-options"}));
  CHECK(by_name.status == 0);
  CHECK(by_flag.status == 0);
  CHECK(by_name.out == by_flag.out);
  CHECK(nlohmann::json::parse(by_flag.out).at("frontend_options") ==
        nlohmann::json::array({"distribution-type-llm-training", "spmd"}));
  CHECK(nlohmann::json::parse(by_flag.out).at("distribution_strategy") == "llm-training");
}

TEST_CASE("nki compile refuses every bad flag and combination with one line, exit 2 and no output") {
  test::FreshCache cache;
  test::TempDir dir;
  const std::string out_dir = dir.file("out"), dump = dir.file("options.json");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--target", "trn4"}, "err_unknown_target: unknown --target \"trn4\"; expected one of trn1, inf2, trn2, trn3"},
      {{"--target", "trn1", "--lnc", "2"},
       "err_invalid_lnc: --lnc \"2\" on target trn1; expected 1 (a logical core of more than one NeuronCore exists "
       "only on trn2)"},
      {{"--target", "inf2", "--logical-nc-config", "2"},
       "err_invalid_lnc: --lnc \"2\" on target inf2; expected 1 (a logical core of more than one NeuronCore exists "
       "only on trn2)"},
      {{"--lnc", "3"}, "err_invalid_lnc: --lnc \"3\" on target trn2; expected 1 or 2"},
      {{"--distribution-strategy", "zero3"},
       "err_unknown_distribution_strategy: unknown --distribution-strategy \"zero3\"; expected one of fsdp, nemo, "
       "llm-training"},
      {{"--distribution-strategy", "nemo", "--distribution-type-llm-training"},
       "err_conflicting_flags: --distribution-type-llm-training means --distribution-strategy llm-training, but "
       "--distribution-strategy nemo was given"},
      {{"--layer-unroll-factor", "0"},
       "err_invalid_unroll_factor: --layer-unroll-factor \"0\"; expected an integer from 1 to 64"},
      {{"--cores", "5"},
       "err_invalid_cores: --cores 5 is not a multiple of --lnc 2; expected whole logical cores of 2 NeuronCores"},
      {{"--mesh", "data=2,tensor=3", "--cores", "8"},
       "err_invalid_mesh: --mesh \"data=2,tensor=3\": the axis sizes multiply to 6; expected 4 (--cores 8 / --lnc 2 "
       "logical cores)"},
      {{"--mesh", "dp=4"},
       "err_invalid_mesh: --mesh \"dp=4\": unknown axis \"dp\"; expected data, tensor or pipeline"},
      {{"--grid", "nc(16),1"}, "tensor_add: err_grid_exceeds_cores: grid \"nc(16),1\" spreads over 16 NeuronCores but the device has 8"},
  };
  for (const auto& [flags, message] : cases) {
    CAPTURE(fmt::format("{}", fmt::join(flags, " ")));
    for (const bool with_dump : {false, true}) {
      std::vector<std::string> args = with(kTensorAdd, flags);
      args.insert(args.end(), {"--output", out_dir});
      if (with_dump) args.insert(args.end(), {"--dump-options", dump});
      clitest::check_refused(run_cli(args), "nki compile: " + message, dir, out_dir);
      CHECK(!fs::exists(dump));
    }
  }
  CHECK(nki::cache::stats().entries == 0);
}

TEST_CASE("nki compile --output refuses a directory that holds files, and a missing parent") {
  test::TempDir dir;
  fs::create_directories(dir.file("full"));
  clitest::write_bytes(dir.file("full/keep.txt"), "mine");
  const clitest::CliResult full = run_cli(with(kTensorAdd, {"--output", dir.file("full")}));
  CHECK(full.status == 2);
  CHECK(full.err == fmt::format("nki compile: err_output_not_writable: {}: cannot write: it is not empty; expected a "
                                "directory that does not exist or is empty\n",
                                dir.file("full")));
  CHECK(test::read_bytes(dir.file("full/keep.txt")) == "mine");
  const clitest::CliResult parent = run_cli(with(kTensorAdd, {"--output", dir.file("no/such/out")}));
  CHECK(parent.status == 2);
  CHECK(parent.err == fmt::format("nki compile: err_output_not_writable: {}: cannot write: the directory \"{}\" does "
                                  "not exist\n",
                                  dir.file("no/such/out"), dir.file("no/such")));
}
