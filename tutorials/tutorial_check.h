/** \file What every tutorial does at the end: show the placement, compare with a host reference. */
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "nki/nki.h"

namespace tutorial {

/** A tensor of `shape` with uniform random values in [lo, hi), converted to `dtype`. */
inline nki::Tensor random_tensor(const nki::Shape& shape, nki::DType dtype, float lo, float hi, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(nki::shape_elements(shape)));
  for (float& x : v) x = dist(rng);
  return nki::Tensor::from_floats(shape, dtype, v);
}

/** Prints, per NeuronCore, the instances it ran in order. */
inline void print_placement(const nki::LaunchResult& r) {
  fmt::print("grid {} (logical {}), {} instances\n", r.grid.str(), nki::shape_str(r.grid.logical_shape()),
             r.grid.instances());
  for (const nki::CoreSchedule& c : r.cores) {
    std::vector<std::string> ids;
    for (const auto& pid : c.instances) ids.push_back(fmt::format("[{}]", fmt::join(pid, ",")));
    fmt::print("  NC{} ran {} instances: {}\n", c.nc, c.instances.size(), fmt::join(ids, " "));
  }
}

/**
 * numpy.allclose(actual, expected, atol, rtol): |a - e| <= atol + rtol * |e|, NaNs never equal.
 * Prints the verdict; on mismatch the first few elements that differ. Returns the exit status.
 */
inline int check_allclose(const std::vector<float>& actual, const std::vector<float>& expected, double atol,
                          double rtol) {
  int shown = 0;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double a = actual[i], e = expected[i];
    if (!(std::fabs(a - e) <= atol + rtol * std::fabs(e))) {
      if (shown++ < 5) fmt::print("mismatch at element {}: expected {}, got {}\n", i, e, a);
      ++bad;
    }
  }
  if (bad != 0 || actual.size() != expected.size()) {
    fmt::print("NKI and reference differ in {} of {} elements\n", bad, expected.size());
    return 1;
  }
  fmt::print("NKI and reference match\n");
  return 0;
}

}  // namespace tutorial
