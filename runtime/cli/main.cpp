/** \file main() of the `nki` command. */
#include <iostream>

#include "cli.h"
#include "nki/kernels.h"

int main(int argc, char** argv) {
  nki::KernelRegistry registry;
  nki::kernels::register_library_kernels(registry);
  return nki::cli::run(argc, argv, registry, std::cout, std::cerr);
}
