/** \file Differential test: random elementwise kernels give identical bytes on both executors. */
#include "random_kernel/random_kernel.h"
#include "test_support.h"

TEST_CASE("random elementwise kernels: the halide path and the reference interpreter agree byte for byte") {
  for (std::uint32_t seed = 1; seed <= 24; ++seed) {
    CAPTURE(seed);
    CHECK(random_kernel::compare_executors(random_kernel::from_seed(seed)) == "");
  }
}

TEST_CASE("random kernel recipes: any bytes spell a kernel, and a different one for different bytes") {
  const random_kernel::Recipe none = random_kernel::from_bytes(nullptr, 0);
  CHECK(none.P == 1);
  CHECK(none.F == 1);
  CHECK(none.steps.size() == 1);
  const std::uint8_t bytes[] = {2, 4, 1, 2, 1, 1, 0, 2, 0, 1, 7};
  const random_kernel::Recipe r = random_kernel::from_bytes(bytes, sizeof bytes);
  CHECK(r.P == 128);
  CHECK(r.F == 96);
  CHECK(r.gx == 2);
  CHECK(r.gy == 3);
  CHECK(r.in_dt[0] == random_kernel::Dt::bf16);
  CHECK(r.out_dt[1] == random_kernel::Dt::fp16);
  CHECK(r.steps.size() == 8);
  CHECK(random_kernel::compare_executors(r) == "");
}
