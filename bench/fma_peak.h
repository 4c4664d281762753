/** \file The host's fp32 fused multiply-add peak: the ceiling a matmul's GFLOP/s is read against. */
#pragma once

#include <cstdint>

namespace nki_bench {

/**
 * Runs `iterations` rounds of 12 independent chains of fp32 FMAs on 16-lane vectors (enough
 * chains to keep every FMA pipe busy through its latency) and returns a value depending on all
 * of them. FLOPs done: iterations x 12 x 16 x 2.
 */
float fma_chains(std::int64_t iterations);

/** FLOPs one fma_chains round does. */
inline constexpr double kFmaChainFlops = 12.0 * 16 * 2;

}  // namespace nki_bench
