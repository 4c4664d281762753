/**
 * \file A launch spanning MPI ranks (LaunchOptions::span_ranks) from the C++ API: each rank runs
 * its chip's instances and the outputs are joined by what changed, so every rank's output must
 * start alike, even when an earlier tensor left different bytes in each rank's HBM block.
 */
#include "mpi_support.h"
#include "nki/nki.h"

TEST_CASE("mpi span launch: an output each rank writes in part is joined whole, whatever its HBM block held before") {
  namespace nl = nki::language;
  // Plain stores write the output whole over the grid (ir::stored_whole), so it is not zeroed
  // when bound; each rank writes only its own instances' rows.
  const nki::Kernel doubled = nki::jit(
      "doubled_rows",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
        auto i = nl::program_id(0) * 128 + nl::arange(128)[nl::_, nl::newaxis];
        auto j = nl::arange(8)[nl::newaxis, nl::_];
        auto t = nl::load(a[i, j]);
        nl::store(out[i, j], t + t);
        return out;
      },
      {"a"});
  const nki::sim::Device chip("trn2", 2);
  const int ranks = nki::communicator().ranks(), rank = nki::communicator().rank();
  const std::int64_t rows = 128 * 2 * ranks;
  std::vector<float> values(static_cast<std::size_t>(rows * 8));
  for (std::size_t k = 0; k < values.size(); ++k) values[k] = static_cast<float>(k % 61);
  const nki::Tensor a = nki::Tensor::from_floats({rows, 8}, nki::DType::fp32, values, chip);
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(std::string(nki::executor_name(ex)));
    {
      // Bytes that differ between ranks in the block the output gets next.
      const nki::Tensor earlier = nki::Tensor::from_floats(
          {rows, 8}, nki::DType::fp32, std::vector<float>(values.size(), 7.0f + static_cast<float>(rank)), chip);
    }
    nki::LaunchOptions spread{ex, &chip};
    spread.span_ranks = true;
    const std::vector<float> out = doubled[nl::nc(2 * ranks)].with(spread).run({a}).outputs.front().to_floats();
    std::size_t wrong = 0;
    for (std::size_t k = 0; k < values.size(); ++k) wrong += out[k] != 2.0f * values[k];
    CHECK(wrong == 0);
  }
}
