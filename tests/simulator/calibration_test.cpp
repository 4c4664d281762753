/**
 * \file The cost model against NKI's published matmul latencies: the tutorial's four kernels at
 * [4096, 8192] @ [8192, 8192] in bf16 on one trn1 NeuronCore, each within 10%, ranked as published.
 */
#include "test_support.h"

#include "nki/kernels.h"
#include "nki/profile.h"

namespace nk = nki::kernels;

namespace {

struct Row {
  const nki::Kernel& kernel;
  double published_us;  // NKI's matrix multiplication tutorial, trn1
};

double estimated_us(const nki::Kernel& k) {
  const std::vector<nki::TensorSpec> args{{{8192, 4096}, nki::DType::bf16}, {{8192, 8192}, nki::DType::bf16}};
  return nki::profile(k.launch(nki::GridSpec{}), args, "trn1").latency_us;
}

}  // namespace

TEST_CASE("calibration - the four matmul tutorial kernels within 10% of NKI's published trn1 latencies, ranked alike") {
  const Row rows[] = {{nk::matmul_tiled(), 51800},
                      {nk::matmul_hoist_load(), 42960},
                      {nk::matmul_block_free_dimension(), 22070},
                      {nk::matmul_fully_optimized(), 6970}};
  double slower = 0;
  for (const Row& r : rows) {
    const double us = estimated_us(r.kernel);
    CAPTURE(r.kernel.name());
    CAPTURE(us);
    CHECK(us / r.published_us > 0.9);
    CHECK(us / r.published_us < 1.1);
    if (slower > 0) CHECK(us < slower);  // each step of the tutorial is faster than the last
    slower = us;
  }
}
