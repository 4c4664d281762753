/**
 * \file The doctest main of the MPI suite: every rank runs the same test cases (their
 * collectives meet across ranks); the run fails when any rank fails. Rank 0 reports in
 * full, the others only their failures. NKI_TEST_MPI_MESSAGE_LIMIT lowers the bytes one MPI
 * message carries, so the suite also runs with every large message split.
 */
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "mpi_message_limit.h"
#include "nki/communicator.h"
#include "nki/mpi_world.h"

int main(int argc, char** argv) {
  nki::MpiWorld world(&argc, &argv);
  ::setenv("NKI_CACHE_DIR", NKI_TEST_CACHE_DIR, 0);
  // A small limit makes every message past it go as several (ctest mpi_suite_np2_small_messages).
  if (const char* limit = std::getenv("NKI_TEST_MPI_MESSAGE_LIMIT")) nki::set_mpi_message_limit(std::stoul(limit));
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
