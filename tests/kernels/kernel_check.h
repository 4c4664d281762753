/** \file Helpers of the kernel-library tests: both executors, byte-identical, and allclose to the host reference. */
#pragma once

#include <string>
#include <vector>

#include "nki/kernel_references.h"
#include "nki/kernels.h"
#include "test_support.h"

namespace kt {

namespace ref = nki::kernels::reference;

/** Input values as floats in [lo, hi], converted to `dt` the way the kernel sees them. */
inline nki::Tensor input(const nki::Shape& s, nki::DType dt, std::uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::int64_t n = 1;
  for (std::int64_t d : s) n *= d;
  return nki::Tensor::from_floats(s, dt, test::random_floats(static_cast<std::size_t>(n), seed, lo, hi));
}

/**
 * Runs the kernel on both executors; their outputs must be byte-identical, and the output must be
 * allclose to `want` with `tol`. Returns the output.
 */
inline nki::Tensor check_kernel(const nki::Kernel& k, const nki::GridSpec& grid, const std::vector<nki::Tensor>& args,
                                const std::vector<double>& want, ref::Tolerance tol) {
  const nki::LaunchResult h = k.launch(grid).with({nki::Executor::halide}).run(args);
  const nki::LaunchResult r = k.launch(grid).with({nki::Executor::reference}).run(args);
  REQUIRE(h.outputs.size() == 1);
  REQUIRE(r.outputs.size() == 1);
  const std::int64_t d = test::first_difference(h.outputs[0], r.outputs[0]);
  CHECK_MESSAGE(d < 0, "executors differ at element " << d);
  const std::string mismatch = ref::allclose_mismatch(h.outputs[0].to_values(), want, tol);
  CHECK_MESSAGE(mismatch.empty(), mismatch);
  return h.outputs[0];
}

}  // namespace kt
