/**
 * \file `nki compile` of a kernel that spans ranks: the mesh fixes the world (one rank per logical
 * core) and the groups of its axis-named collectives, which are in the artifact's key; SPMD
 * compiles one artifact for every rank, MPMD one per rank with the rank baked in.
 */
#include <regex>

#include "cli/cli_fixture.h"
#include "nki/compile.h"
#include "nki/compile_cache.h"

using clitest::run_cli;

namespace {

// The tutorial's kernel for one rank of a data=2, tensor=4 mesh: x [128, 512], w1 and w2 shards [512, 512].
const std::vector<std::string> kTp{"compile", "tensor_parallel_mlp", "--shape", "128x512", "--shape", "512x512",
                                   "--shape", "512x512", "--dtype", "bf16", "--lnc", "1"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

/** The artifact key of each "  rank R KEY compiled|reused, N instance" line, in order. */
std::vector<std::string> rank_keys(const std::string& out) {
  std::vector<std::string> keys;
  const std::regex line("  rank ([0-9]+) ([0-9a-f]+) (compiled|reused), 1 instance\n");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator(); ++it) keys.push_back((*it)[2]);
  return keys;
}

}  // namespace

// Eight MPMD compiles of the tutorial's kernel: the sanitizer lanes leave it out (the MPMD world
// launch test covers the same code with four ranks).
TEST_CASE("nki compile --mesh data=2,tensor=4: one artifact for 8 ranks in SPMD, 8 in MPMD" * doctest::skip(test::sanitized_build())) {
  test::FreshCache cache;
  const clitest::CliResult s = run_cli(with(kTp, {"--mesh", "data=2,tensor=4", "--spmd"}));
  REQUIRE(s.status == 0);
  CHECK(s.err.empty());
  CHECK(s.out.starts_with("tensor_parallel_mlp: SPMD on 8 ranks of mesh {\"pipeline\"=1, \"data\"=2, \"tensor\"=4} (8 "
                          "cores), no grid: 1 artifact compiled, 0 reused\n"));
  const std::vector<std::string> spmd = rank_keys(s.out);
  REQUIRE(spmd.size() == 8);
  for (const std::string& k : spmd) CHECK(k == spmd.front());

  const clitest::CliResult m = run_cli(with(kTp, {"--mesh", "data=2,tensor=4"}));
  REQUIRE(m.status == 0);
  CHECK(m.err == "nki compile: compiling MPMD, one artifact per rank; pass --spmd to compile one artifact that every "
                 "rank shares\n");
  CHECK(m.out.starts_with("tensor_parallel_mlp: MPMD on 8 ranks of mesh {\"pipeline\"=1, \"data\"=2, \"tensor\"=4} (8 "
                          "cores), no grid: 8 artifacts compiled, 0 reused\n"));
  const std::vector<std::string> mpmd = rank_keys(m.out);
  REQUIRE(mpmd.size() == 8);
  for (std::size_t i = 0; i < mpmd.size(); ++i)
    for (std::size_t j = i + 1; j < mpmd.size(); ++j) CHECK(mpmd[i] != mpmd[j]);
  // Each MPMD artifact's IR is its rank's: its rank and its own group baked in.
  const std::string ir5 = test::read_bytes((nki::cache::entry_directory(mpmd[5]) / "ir.txt").string());
  CHECK(ir5.find("  baked for rank 5\n") != std::string::npos);
  CHECK(ir5.find("over groups [[4,5,6,7]]") != std::string::npos);
  const std::string ir_spmd = test::read_bytes((nki::cache::entry_directory(spmd[0]) / "ir.txt").string());
  CHECK(ir_spmd.find("over axes {tensor}") != std::string::npos);
}

TEST_CASE("nki compile: the mesh's groups are in the key and in --dump-options, and a kernel that spans no ranks ignores them") {
  test::FreshCache cache;
  const clitest::CliResult a = run_cli(with(kTp, {"--mesh", "data=2,tensor=4", "--spmd"}));
  const clitest::CliResult b = run_cli(with(kTp, {"--mesh", "data=4,tensor=2", "--spmd"}));
  REQUIRE(a.status == 0);
  REQUIRE(b.status == 0);
  CHECK(rank_keys(a.out).front() != rank_keys(b.out).front());  // the tensor groups differ: [[0..3],[4..7]] vs pairs
  const std::string key = test::read_bytes((nki::cache::entry_directory(rank_keys(a.out).front()) / "key.txt").string());
  CHECK(key.find("mesh {\"pipeline\"=1, \"data\"=2, \"tensor\"=4}: {tensor} -> [[0,1,2,3],[4,5,6,7]]; \n") !=
        std::string::npos);
  const clitest::CliResult d = run_cli(with(kTp, {"--mesh", "data=2,tensor=4", "--spmd", "--dump-options"}));
  REQUIRE(d.status == 0);
  CHECK(d.out.find("\"tensor\": [\n        [\n          0,\n          1,\n          2,\n          3\n        ],") !=
        std::string::npos);
  // tensor_add has no collective: its grid is placed on the cores as before, whatever the mesh.
  const clitest::CliResult t = run_cli({"compile", "tensor_add", "--shape", "256x512", "--shape", "256x512", "--mesh",
                                        "data=4", "--lnc", "1", "--spmd"});
  REQUIRE(t.status == 0);
  CHECK(t.out.starts_with("tensor_add: SPMD on 4 cores, grid 2,1: 1 artifact compiled, 0 reused\n"));
}

TEST_CASE("nki::compile over a mesh: groups that do not fit are refused, a baked rank constant trips the guard rail") {
  test::FreshCache cache;
  namespace nl = nki::language;
  namespace nc = nki::collectives;
  nki::CompileOptions o;
  o.mode = nki::CompileMode::spmd;
  o.mesh = nki::Mesh::iota({8}, {"x"});
  const nki::Kernel pairs = nki::jit("first_pairs", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nc::all_reduce({x}, {out}, {.groups = {{0, 1}}}, nl::add);
    return out;
  });
  const std::string msg = test::user_error_of([&] { (void)nki::compile(pairs.launch({}), {{4, 8}}, {nki::DType::fp32}, o); });
  CHECK(msg.find("err_replica_group_mismatch: all_reduce: replica groups [[0,1]] hold ranks 0 to 1 (2 ranks) but the "
                 "world has 8 ranks (0 to 7)") != std::string::npos);
  CHECK(nki::cache::list().empty());  // nothing compiled

  // A rank's rows written as a constant (rank 2's, captured as a C++ integer) in a kernel that reads rank_id.
  ::setenv("NKI_SPMD_STRICT", "1", 1);
  const nki::Kernel baked = nki::jit("baked_rank_rows", [](nl::tensor x) {
    auto out = nl::ndarray({128, 8}, x.dtype(), nl::shared_hbm, "out");
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(8)[nl::newaxis, nl::_];
    nl::store(out[ip, jf], nl::load(x[nc::rank_id() * 128 + ip, jf]) + nl::load(x[2 * 128 + ip, jf]));
    return out;
  });
  const std::string strict = test::user_error_of([&] { (void)nki::compile(baked.launch({}), {{1024, 8}}, {nki::DType::fp32}, o); });
  ::unsetenv("NKI_SPMD_STRICT");
  CHECK(strict.find("err_spmd_rank_constant: index of tensor in0 on dimension 0 starts at the constant 256 (tile 2 of 8) "
                    "while the kernel also reads rank_id: a rank or program id captured as a C++ integer at trace time "
                    "gives every rank its own artifact; index with collectives::rank_id() instead") != std::string::npos);
}
