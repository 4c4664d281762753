/** \file A step that fails on one rank fails on every rank, so none goes on to wait for the failed one. */
#include "mpi_support.h"

TEST_CASE("on_every_rank: one rank's failure is every rank's, each saying which rank failed and why") {
  nki::Communicator& world = nki::communicator();
  const std::string msg = test::user_error_of([&] {
    nki::on_every_rank(world, [&] {
      if (world.rank() == 1) throw nki::UserError("err_npy_not_found", "", {}, "cannot open in.npy");
    });
  });
  CHECK(msg == (world.rank() == 1 ? std::string("err_npy_not_found: cannot open in.npy")
                                  : fmt::format("err_rank_failed: rank 1 of {} failed: err_npy_not_found: cannot open "
                                                "in.npy",
                                                world.ranks())));
  nki::on_every_rank(world, [] {});  // and a step that fails nowhere passes everywhere
}
