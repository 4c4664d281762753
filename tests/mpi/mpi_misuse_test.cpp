/**
 * \file Misuse only a process under mpirun can make: a second nki::MpiWorld, a collective from
 * another thread; and a message larger than MPI's int counts carry, which goes as several.
 */
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

TEST_CASE("mpi misuse: a message over the MPI message limit goes as several, and arrives whole") {
  const nki::sim::Device chip("trn2", 1);
  const int ranks = nki::communicator().ranks(), me = nki::communicator().rank();
  std::vector<float> values(2049);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(me * 10000 + static_cast<int>(i));
  const std::vector<nki::Tensor> mine{nki::Tensor::from_floats({2049}, nki::DType::fp32, values, chip)};
  const std::size_t before = nki::mpi_message_limit();
  nki::set_mpi_message_limit(1000);  // MPI's own limit is INT_MAX bytes; 1000 stands for it: 8196 bytes need 9 pieces
  const std::vector<nki::Tensor> gathered = nki::all_gather(mine, 0);
  const std::vector<nki::Tensor> summed = nki::all_reduce(mine, nki::ReduceOp::sum);
  const std::vector<std::string> texts = nki::communicator().all_gather_text(std::string(3000 + static_cast<std::size_t>(me), 'a' + static_cast<char>(me)));
  nki::set_mpi_message_limit(before);
  REQUIRE(gathered.front().shape() == nki::Shape{2049 * ranks});
  const std::vector<float> g = gathered.front().to_floats(), s = summed.front().to_floats();
  for (int r = 0; r < ranks; ++r) {
    CHECK(g[static_cast<std::size_t>(r) * 2049] == static_cast<float>(r * 10000));
    CHECK(g[static_cast<std::size_t>(r) * 2049 + 2048] == static_cast<float>(r * 10000 + 2048));
    CHECK(texts[static_cast<std::size_t>(r)] == std::string(3000 + static_cast<std::size_t>(r), 'a' + static_cast<char>(r)));
  }
  const float rank_sum = 10000.0f * static_cast<float>(ranks * (ranks - 1) / 2);
  CHECK(s[0] == rank_sum);
  CHECK(s[2048] == rank_sum + 2048.0f * static_cast<float>(ranks));
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
