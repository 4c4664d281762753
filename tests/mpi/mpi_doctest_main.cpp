/**
 * \file The doctest main of the MPI suite: every rank runs the same test cases (their
 * collectives meet across ranks); the run fails when any rank fails. Rank 0 reports in
 * full, the others only their failures.
 */
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "nki/communicator.h"
#include "nki/mpi_world.h"

int main(int argc, char** argv) {
  nki::MpiWorld world(&argc, &argv);
  ::setenv("NKI_CACHE_DIR", NKI_TEST_CACHE_DIR, 0);
  doctest::Context context(argc, argv);
  if (world.rank() != 0) {
    context.setOption("minimal", true);
    context.setOption("no-colors", true);
  }
  const int status = context.run();
  int worst = 0;
  for (const std::string& s : nki::communicator().all_gather_text(std::to_string(status))) worst = std::max(worst, std::stoi(s));
  return worst;
}
