/** \file main() of the `nki` command. */
#include <iostream>
#include <optional>

#include "cli/huge_pages.h"
#include "nki/cli.h"
#include "nki/error.h"
#include "nki/kernels.h"
#include "nki/mpi_world.h"

int main(int argc, char** argv) {
  nki::cli::restart_with_huge_pages(argv);  // before anything else: glibc reads its tunables at start
  // Started by mpirun: one rank of an MPI world, whose size is MPI's.
  std::optional<nki::MpiWorld> mpi;
  if (nki::MpiWorld::launched_by_mpirun()) {
    try {
      mpi.emplace(&argc, &argv);
    } catch (const nki::UserError& e) {
      std::cerr << "nki: " << e.what() << "\n";
      return 2;
    }
  }
  nki::KernelRegistry registry;
  nki::cli::register_library_kernels(registry);
  return nki::cli::run(argc, argv, registry, std::cout, std::cerr);
}
