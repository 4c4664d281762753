/**
 * \file The host reference of the mamba kernels, the tutorial's PyTorch math (mamba_torch.py) in
 * double precision: deltaA = exp(delta * A), deltaBu = delta * B * u, a sequential scan
 * scan[t] = deltaA[t] * scan[t-1] + deltaBu[t] from 0, and out = sum over states of C * scan.
 */
#pragma once

#include <vector>

#include "nki/mamba.h"

namespace nki::kernels::reference {

/** out [batch, channels, seq_len] from row-major delta, u, A, B, C of the shapes of MambaDims. */
std::vector<double> mamba(const std::vector<double>& delta, const std::vector<double>& u, const std::vector<double>& A,
                          const std::vector<double>& B, const std::vector<double>& C, const MambaDims& d);

}  // namespace nki::kernels::reference
