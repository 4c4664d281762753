/**
 * \file fma_chains: the FMA peak loop, in a leaf file compiled for the host ISA with contraction on
 * (bench/CMakeLists.txt), so each `a * m + c` below is one vfmadd on a full-width vector.
 */
#include "fma_peak.h"

namespace nki_bench {

float fma_chains(std::int64_t iterations) {
  using v16 = float __attribute__((vector_size(64)));
  v16 acc[12];
  const v16 mul = v16{} + 1.0000001f, add = v16{} + 1e-7f;
  for (int c = 0; c < 12; ++c) acc[c] = v16{} + static_cast<float>(c);
  for (std::int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < 12; ++c) acc[c] = acc[c] * mul + add;
  }
  float sum = 0;
  for (int c = 0; c < 12; ++c)
    for (int l = 0; l < 16; ++l) sum += acc[c][l];
  return sum;
}

}  // namespace nki_bench
