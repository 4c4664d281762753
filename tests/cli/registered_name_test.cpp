/**
 * \file A launch by name speaks of the kernel by that name: tensor_add_nc2 is tensor_add's Kernel
 * on another grid (one artifact for both), yet its errors and reports say tensor_add_nc2.
 */
#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"
#include "cli/registered_name.h"

using namespace clitest;

TEST_CASE("cli: an error raised inside a launch of tensor_add_nc2 names tensor_add_nc2") {
  TempDir dir;
  write_iota_npy(dir.file("a.npy"), {512, 1024});
  write_iota_npy(dir.file("b.npy"), {512, 1024});
  // The grid has the default's logical shape [4, 2], so the command takes it; the launch's placement refuses it.
  const CliResult r = run_cli({"run", "tensor_add_nc2", "--input", dir.file("a.npy"), "--input", dir.file("b.npy"),
                               "--output", dir.file("c.npy"), "--grid", "spmd_dim(1,nc(4)),2"});
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "nki run: tensor_add_nc2: err_grid_exceeds_cores: grid \"spmd_dim(1,nc(4)),2\" spreads over 4 "
                 "NeuronCores but the device has 2\n");
  CHECK(!fs::exists(dir.file("c.npy")));
  // The same launch of tensor_add itself keeps its name; neither carries a line of the command's own code.
  const CliResult plain = run_cli({"run", "tensor_add", "--input", dir.file("a.npy"), "--input", dir.file("b.npy"),
                                   "--output", dir.file("c.npy"), "--grid", "spmd_dim(1,nc(4)),2"});
  CHECK(plain.err == "nki run: tensor_add: err_grid_exceeds_cores: grid \"spmd_dim(1,nc(4)),2\" spreads over 4 "
                     "NeuronCores but the device has 2\n");
}

TEST_CASE("cli: nki compile and nki profile report a kernel by the name it was asked for") {
  test::FreshCache cache;
  const CliResult c = run_cli({"compile", "tensor_add_nc2", "--shape", "512x1024", "--shape", "512x1024", "--spmd"});
  CHECK(c.status == 0);
  CHECK(c.out.starts_with("tensor_add_nc2: SPMD on "));
  const CliResult p = run_cli({"profile", "tensor_add_nc2", "--shape", "512x1024", "--shape", "512x1024", "--json"});
  CHECK(p.status == 0);
  CHECK(nlohmann::json::parse(p.out)["kernel"] == "tensor_add_nc2");
}

TEST_CASE("in_registered_name renames only errors in the name of the registered kernel's Kernel") {
  nki::KernelRegistry registry;
  registry.add({"tensor_add_twice", "tensor_add under another name", nki::kernels::tensor_add(),
                [](const std::vector<nki::Shape>&) { return nki::GridSpec{}; }});
  const nki::UserError own("err_x", "tensor_add", {"k.cpp", 7}, "detail");
  CHECK(std::string(nki::cli::in_registered_name(own, registry, "tensor_add_twice").what()) ==
        "tensor_add_twice (k.cpp:7): err_x: detail");
  const nki::UserError other("err_x", "another_kernel", {}, "detail");
  CHECK(std::string(nki::cli::in_registered_name(other, registry, "tensor_add_twice").what()) ==
        "another_kernel: err_x: detail");
  const nki::UserError unnamed("err_x", "", {}, "detail");
  CHECK(std::string(nki::cli::in_registered_name(unnamed, registry, "tensor_add_twice").what()) == "err_x: detail");
  CHECK(std::string(nki::cli::in_registered_name(own, registry, "no_such_kernel").what()) ==
        "tensor_add (k.cpp:7): err_x: detail");
}
