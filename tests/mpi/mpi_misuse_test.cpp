/**
 * \file Misuse only a process under mpirun can make: a second nki::MpiWorld, a collective from
 * another thread, a message larger than MPI's int counts carry. Every rank gets the same error.
 */
#include <climits>
#include <thread>

#include "mpi_message_limit.h"
#include "mpi_support.h"
#include "nki/collectives.h"
#include "nki/mpi_world.h"

TEST_CASE("mpi misuse: a second nki::MpiWorld in the process is err_mpi_initialized") {
  CHECK(test::user_error_of([] { nki::MpiWorld again(nullptr, nullptr); }) ==
        "err_mpi_initialized: MPI is already initialized; make one nki::MpiWorld");
}

TEST_CASE("mpi misuse: a collective from a thread other than MPI's is err_mpi_thread, before any message") {
  const nki::sim::Device chip("trn2", 1);
  const std::vector<nki::Tensor> mine{nki::Tensor::from_floats({4}, nki::DType::fp32, std::vector<float>{1, 2, 3, 4}, chip)};
  std::string msg;
  std::thread other([&] { msg = test::user_error_of([&] { (void)nki::all_reduce(mine, nki::ReduceOp::sum); }); });
  other.join();
  CHECK(msg == "all_reduce: err_mpi_thread: under MPI, collectives, launches and compiles run on the thread that "
               "created the nki::MpiWorld");
  // The main thread's collective still works: nothing was half sent.
  const std::vector<nki::Tensor> sum = nki::all_reduce(mine, nki::ReduceOp::sum);
  CHECK(sum.front().to_floats()[3] == 4.0f * static_cast<float>(nki::communicator().ranks()));
}

TEST_CASE("mpi misuse: a message over the MPI message limit is err_collective_too_large on every rank") {
  const nki::sim::Device chip("trn2", 1);
  const std::vector<nki::Tensor> mine{
      nki::Tensor::from_floats({2048}, nki::DType::fp32, std::vector<float>(2048, 1.0f), chip)};
  nki::set_mpi_message_limit(4096);  // MPI's own limit is INT_MAX bytes; 8 KiB stands for 2 GiB
  const std::string msg = test::user_error_of([&] { (void)nki::all_gather(mine, 0); });
  nki::set_mpi_message_limit(static_cast<std::size_t>(INT_MAX));
  CHECK(msg == "all_gather: err_collective_too_large: one rank would send 8192 bytes in one MPI message; the limit is "
               "4096 bytes");
  CHECK(nki::all_gather(mine, 0).front().shape() == nki::Shape{2048 * nki::communicator().ranks()});
}

TEST_CASE("mpi misuse: a launch spanning ranks that writes an argument in place is refused on every rank") {
  namespace nl = nki::language;
  const nki::Kernel in_place = nki::jit(
      "doubles_in_place",
      [](nl::tensor a) {
        auto i = nl::program_id(0) * 128 + nl::arange(128)[nl::_, nl::newaxis];
        auto j = nl::arange(8)[nl::newaxis, nl::_];
        auto t = nl::load(a[i, j]);
        nl::store(a[i, j], t + t);
      },
      {"a"});
  const nki::sim::Device chip("trn2", 2);
  const int ranks = nki::communicator().ranks();
  nki::Tensor a = nki::Tensor::from_floats({128 * 2 * ranks, 8}, nki::DType::fp32,
                                           std::vector<float>(static_cast<std::size_t>(128 * 2 * ranks * 8), 1.0f), chip);
  nki::LaunchOptions spread;
  spread.span_ranks = true;
  const int line = __LINE__ + 1;
  const std::string msg = test::user_error_of([&] { (void)in_place[nl::nc(2 * ranks)].with(spread).run({a}); });
  CHECK(msg == fmt::format("doubles_in_place (tests/mpi/mpi_misuse_test.cpp:{}): err_argument_written_across_ranks: "
                           "the kernel writes argument 0 (a) in place, but this launch spreads over {} MPI ranks and "
                           "joins only its outputs: each rank would keep its own instances' writes; write the result "
                           "to an output instead",
                           line, ranks));
  CHECK(a.to_floats()[0] == 1.0f);  // refused before anything ran
}
