/** \file `nki compile` into the cache, and `nki cache list | stats | clear [--json]`. */
#include <fcntl.h>
#include <sys/file.h>

#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"
#include "nki/autotune.h"

using clitest::run_cli;
namespace fs = std::filesystem;

TEST_CASE("nki compile: MPMD by default with a hint to pass --spmd, SPMD with --spmd, then reuse") {
  test::FreshCache cache;
  const std::vector<std::string> args{"compile", "tensor_add_nc2", "--shape", "512x1024", "--shape", "512x1024",
                                      "--dtype", "bf16"};
  const clitest::CliResult m = run_cli(args);
  CHECK(m.status == 0);
  CHECK(m.err.find("nki compile: compiling MPMD, one artifact per core; pass --spmd to compile one artifact that every "
                   "core shares\n") != std::string::npos);
  CHECK(m.out.starts_with("tensor_add_nc2: MPMD on 8 cores, grid spmd_dim(2,nc(2)),2: 2 artifacts compiled, 0 reused\n  NC0 "));
  std::vector<std::string> spmd = args;
  spmd.push_back("--spmd");
  const clitest::CliResult s1 = run_cli(spmd);
  CHECK(s1.status == 0);
  CHECK(s1.err.empty());
  CHECK(s1.out.starts_with("tensor_add_nc2: SPMD on 8 cores, grid spmd_dim(2,nc(2)),2: 1 artifact compiled, 0 reused\n"));
  const clitest::CliResult s2 = run_cli(spmd);
  CHECK(s2.out.starts_with("tensor_add_nc2: SPMD on 8 cores, grid spmd_dim(2,nc(2)),2: 0 artifacts compiled, 1 reused\n"));

  const clitest::CliResult st = run_cli({"cache", "stats", "--json"});
  CHECK(st.status == 0);
  const nlohmann::json j = nlohmann::json::parse(st.out);
  CHECK(j.at("entries").get<int>() == 3);
  CHECK(j.at("compiles").get<int>() == 3);
  CHECK(j.at("misses").get<int>() == 3);
  CHECK(j.at("hits").get<int>() == 0);  // the second SPMD compile found it in memory
  CHECK(j.at("bytes").get<std::int64_t>() > 0);

  const clitest::CliResult list = run_cli({"cache", "list", "--json"});
  const nlohmann::json l = nlohmann::json::parse(list.out);
  REQUIRE(l.at("entries").size() == 3);
  int spmd_entries = 0;
  for (const auto& e : l.at("entries")) {
    CHECK(e.at("kernel") == "tensor_add");
    CHECK(e.at("key").get<std::string>().size() == 16);
    spmd_entries += e.at("mode") == "spmd" ? 1 : 0;
  }
  CHECK(spmd_entries == 1);

  const clitest::CliResult cleared = run_cli({"cache", "clear"});
  CHECK(cleared.status == 0);
  CHECK(cleared.out == fmt::format("removed 3 entries from {}\n", nki::cache::directory().string()));
  const nlohmann::json after = nlohmann::json::parse(run_cli({"cache", "stats", "--json"}).out);
  CHECK(after.at("entries").get<int>() == 0);
  CHECK(after.at("compiles").get<int>() == 0);
}

TEST_CASE("nki cache clear removes the autotuning records with the entries") {
  test::FreshCache cache;
  const nki::TunableKernel k = nki::kernels::tensor_add_tiled_tunable();
  const std::vector<nki::TensorSpec> args{{{512, 2048}, nki::DType::bf16}, {{512, 2048}, nki::DType::bf16}};
  nki::autotune::store(k, args, "trn2", {k.defaults(), "simulated", 1.0});
  REQUIRE(nki::autotune::lookup(k, args, "trn2").record);
  const clitest::CliResult cleared = run_cli({"cache", "clear"});
  CHECK(cleared.status == 0);
  CHECK(cleared.out == fmt::format("removed 0 entries from {}\n", nki::cache::directory().string()));
  CHECK(nki::autotune::lookup(k, args, "trn2").miss == "no record");
}

TEST_CASE("nki compile refuses bad input with one line and exit 2") {
  test::FreshCache cache;
  const clitest::CliResult unknown = run_cli({"compile", "no_such_kernel", "--shape", "4x4"});
  CHECK(unknown.status == 2);
  CHECK(unknown.err == "nki compile: err_unknown_kernel: unknown kernel \"no_such_kernel\"; known kernels: " +
                       clitest::kKnownKernels + "\n");
  const clitest::CliResult count = run_cli({"compile", "tensor_add", "--shape", "512x1024"});
  CHECK(count.status == 2);
  CHECK(count.err == "nki compile: tensor_add: err_argument_count: takes 2 arguments (--input or --shape), 1 given\n");
  const clitest::CliResult shape = run_cli({"compile", "tensor_add", "--shape", "512xx", "--shape", "512x1024"});
  CHECK(shape.status == 2);
  CHECK(shape.err == "nki compile: err_invalid_shape: --shape \"512xx\": \"\" is not a positive size; expected sizes "
                     "joined by x, e.g. 16x16\n");
  const clitest::CliResult dtype = run_cli({"compile", "tensor_add", "--shape", "4x4", "--shape", "4x4", "--dtype", "f64"});
  CHECK(dtype.status == 2);
  CHECK(dtype.err.starts_with("nki compile: err_unknown_dtype: unknown --dtype \"f64\"; expected one of fp32, bf16"));
  CHECK(nki::cache::stats().entries == 0);
}

TEST_CASE("nki cache list shows the autotuning records, in text and in --json") {
  test::FreshCache cache;
  const nki::TunableKernel k = nki::kernels::tensor_add_tiled_tunable();
  const std::vector<nki::TensorSpec> args{{{512, 2048}, nki::DType::bf16}, {{512, 2048}, nki::DType::bf16}};
  nki::TuningConfig c = k.defaults();
  c.values[0].second = 64;
  nki::autotune::store(k, args, "trn1", {c, "simulated", 12.5});
  const clitest::CliResult text = run_cli({"cache", "list"});
  CHECK(text.status == 0);
  CHECK(text.out == "autotune  tensor_add_tiled [512,2048] [512,2048] bf16 on trn1: P=64 F=512 (simulated 12.500 us)\n");
  const nlohmann::json j = nlohmann::json::parse(run_cli({"cache", "list", "--json"}).out);
  CHECK(j.at("entries").empty());
  REQUIRE(j.at("autotune").size() == 1);
  const nlohmann::json& r = j.at("autotune")[0];
  CHECK(r.at("kernel") == "tensor_add_tiled");
  CHECK(r.at("args") == "[512,2048] [512,2048] bf16");
  CHECK(r.at("target") == "trn1");
  CHECK(r.at("config").at("P") == 64);
  CHECK(r.at("config").at("F") == 512);
  CHECK(r.at("metric") == "simulated");
  CHECK(r.at("value") == 12.5);
}

TEST_CASE("nki cache clear keeps, and names, the entries and temporaries of a key whose compile lock is held") {
  test::FreshCache cache;
  const clitest::CliResult compiled = run_cli({"compile", "tensor_add", "--shape", "256x1024", "--shape", "256x1024", "--spmd"});
  REQUIRE(compiled.status == 0);
  const std::vector<nki::cache::EntryInfo> entries = nki::cache::list();
  REQUIRE(entries.size() == 1);
  const std::string busy = entries.front().key;
  const fs::path root = nki::cache::version_directory();
  // A compile of `busy` in progress: its lock held, a temporary being written; and a stale temporary
  // of another key, left by a compiler that was killed (its lock free).
  fs::create_directories(root / "tmp" / (busy + ".4242.0000abcd"));
  fs::create_directories(root / "tmp" / "00000000deadbeef.4243.00001234");
  const int fd = ::open((root / "locks" / (busy + ".lock")).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  const clitest::CliResult held = run_cli({"cache", "clear"});
  CHECK(held.status == 0);
  CHECK(held.out == fmt::format("removed 0 entries from {}; kept 1 in use by a compile (its lock is held): {}\n",
                                nki::cache::directory().string(), busy));
  CHECK(fs::exists(nki::cache::entry_directory(busy)));
  CHECK(fs::exists(root / "tmp" / (busy + ".4242.0000abcd")));
  CHECK_FALSE(fs::exists(root / "tmp" / "00000000deadbeef.4243.00001234"));
  const nlohmann::json j = nlohmann::json::parse(run_cli({"cache", "clear", "--json"}).out);
  CHECK(j.at("removed") == 0);
  CHECK(j.at("in_use") == nlohmann::json::array({busy}));
  ::flock(fd, LOCK_UN);
  ::close(fd);
  // The compile done, its lock free: the next clear removes it.
  CHECK(run_cli({"cache", "clear"}).out == fmt::format("removed 1 entry from {}\n", nki::cache::directory().string()));
  CHECK_FALSE(fs::exists(nki::cache::entry_directory(busy)));
  CHECK_FALSE(fs::exists(root / "tmp" / (busy + ".4242.0000abcd")));
}
