/**
 * \file `nki run` and `nki compile` as ranks of an MPI world (what `mpirun -np N nki ...`
 * does): the grid spreads over every rank's chip, rank 0 writes the output and prints.
 */
#include <nlohmann/json.hpp>
#include <sstream>

#include "nki/cli.h"
#include "mpi_support.h"
#include "nki/kernels.h"
#include "nki/npy.h"

namespace {

struct Ran {
  int status;
  std::string out, err;
};

Ran nki_command(const std::vector<std::string>& args) {
  nki::KernelRegistry registry;
  nki::cli::register_library_kernels(registry);
  std::vector<const char*> argv{"nki"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int status = nki::cli::run(static_cast<int>(argv.size()), argv.data(), registry, out, err);
  return {status, out.str(), err.str()};
}

}  // namespace

TEST_CASE("mpi nki run: the grid spreads over every rank's two cores and rank 0 writes the sum") {
  const mpi_test::SharedDir dir;
  const int ranks = nki::communicator().ranks();
  const std::vector<float> a = test::random_floats(512 * 1024, 21), b = test::random_floats(512 * 1024, 22);
  const std::string pa = (dir.path() / "a.npy").string(), pb = (dir.path() / "b.npy").string();
  const std::string pc = (dir.path() / "c.npy").string(), ps = (dir.path() / "s.json").string();
  if (nki::communicator().rank() == 0) {
    test::write_bytes(pa, nki::encode_npy({512, 1024}, a));
    test::write_bytes(pb, nki::encode_npy({512, 1024}, b));
  }
  (void)mpi_test::from_every_rank("");  // the inputs exist before any rank reads them
  // Logical grid [4, 2] with nc(ranks) x nc(2): each rank's chip runs a quarter or a half.
  const std::string grid = fmt::format("spmd_dim({},nc({})),spmd_dim(1,nc(2))", 4 / ranks, ranks);
  const Ran r = nki_command({"run", "tensor_add_nc2", "--input", pa, "--input", pb, "--output", pc, "--grid", grid,
                             "--schedule", ps});
  CHECK(r.status == 0);
  CHECK(r.err == "");
  if (nki::communicator().rank() != 0) return;
  const nki::NpyArray c = nki::read_npy(pc);
  REQUIRE(c.shape == nki::Shape{512, 1024});
  for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(c.data[i] == a[i] + b[i]);
  // The schedule lists every core of the world, each with its instances.
  const nlohmann::json s = nlohmann::json::parse(test::read_bytes(ps));
  REQUIRE(s["cores"].size() == static_cast<std::size_t>(2 * ranks));
  for (int core = 0; core < 2 * ranks; ++core) {
    CHECK(s["cores"][static_cast<std::size_t>(core)]["nc"] == core);
    CHECK(s["cores"][static_cast<std::size_t>(core)]["instances"].size() == 8 / static_cast<std::size_t>(2 * ranks));
  }
}

TEST_CASE("mpi nki run: an input missing on every rank fails on every rank and writes nothing") {
  const mpi_test::SharedDir dir;
  const std::string missing = (dir.path() / "missing.npy").string(), pc = (dir.path() / "c.npy").string();
  const Ran r = nki_command({"run", "tensor_add_nc2", "--input", missing, "--input", missing, "--output", pc});
  CHECK(r.status == 2);
  CHECK(r.err.starts_with("nki run: "));
  CHECK(r.err.find("missing.npy") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(pc));
}

TEST_CASE("mpi nki run: checked mode, which keeps a whole launch's writes in one process, is refused") {
  const mpi_test::SharedDir dir;
  const std::string pa = (dir.path() / "a.npy").string(), pc = (dir.path() / "c.npy").string();
  if (nki::communicator().rank() == 0) test::write_bytes(pa, nki::encode_npy({256, 512}, std::vector<float>(256 * 512, 1.0f)));
  (void)mpi_test::from_every_rank("");
  const Ran r = nki_command({"run", "tensor_add_nc2", "--input", pa, "--input", pa, "--output", pc, "--checked"});
  CHECK(r.status == 2);
  CHECK(r.err == fmt::format("nki run: tensor_add_nc2: err_checked_spans_ranks: checked mode runs a launch in one process, "
                             "but this one would spread over {} MPI ranks; run it without mpirun\n",
                             nki::communicator().ranks()));
  CHECK_FALSE(std::filesystem::exists(pc));
}

TEST_CASE("mpi nki compile --spmd: the world's cores share one artifact, rank 0 compiles and prints") {
  const mpi_test::SharedCache cache;
  const int ranks = nki::communicator().ranks();
  // A world of 4 cores: each of the ranks' chips holds 4 / ranks of them.
  const Ran r = nki_command({"compile", "tensor_add_nc2", "--shape", "512x1024", "--shape", "512x1024", "--spmd",
                             "--grid", "spmd_dim(1,nc(4)),2", "--cores", "4"});
  CHECK(r.status == 0);
  if (nki::communicator().rank() != 0) {
    CHECK(r.out == "");
    return;
  }
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  CHECK(line == fmt::format("tensor_add_nc2: SPMD on 4 cores, grid spmd_dim(1,nc(4)),2: 1 artifact compiled, {} reused",
                            ranks - 1));
  std::string key;
  for (int core = 0; core < 4; ++core) {
    REQUIRE(std::getline(lines, line));
    if (core == 0) key = line.substr(6, 16);
    CHECK(line == fmt::format("  NC{} {} {}, 2 instances", core, key, core == 0 ? "compiled" : "reused"));
  }
  REQUIRE(std::getline(lines, line));
  CHECK(line.starts_with("simulated latency "));
  CHECK(line.ends_with(" us on trn2"));
  CHECK_FALSE(std::getline(lines, line));
}
