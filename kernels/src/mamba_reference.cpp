/** \file The mamba kernels' float64 host reference. */
#include "nki/mamba_reference.h"

#include <cmath>
#include <cstddef>

namespace nki::kernels::reference {

std::vector<double> mamba(const std::vector<double>& delta, const std::vector<double>& u, const std::vector<double>& A,
                          const std::vector<double>& B, const std::vector<double>& C, const MambaDims& d) {
  const std::int64_t L = d.seq_len, S = d.state_size, CH = d.channels;
  std::vector<double> out(static_cast<std::size_t>(d.batch * CH * L), 0.0);
  auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  for (std::int64_t b = 0; b < d.batch; ++b) {
    for (std::int64_t c = 0; c < CH; ++c) {
      const std::int64_t row = (b * CH + c) * L;  // delta, u and out [b, c, :]
      for (std::int64_t s = 0; s < S; ++s) {
        const std::int64_t bc = (b * S + s) * L;  // B and C [b, s, :]
        double scan = 0.0;
        for (std::int64_t t = 0; t < L; ++t) {
          const double dt = delta[at(row + t)];
          scan = std::exp(dt * A[at(c * S + s)]) * scan + dt * B[at(bc + t)] * u[at(row + t)];
          out[at(row + t)] += C[at(bc + t)] * scan;
        }
      }
    }
  }
  return out;
}

}  // namespace nki::kernels::reference
