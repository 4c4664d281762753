/**
 * \file NKI's fused-mamba tutorial: the selective-scan (SSM) step of a Mamba layer as one kernel,
 * in the tutorial's three versions. Arguments in NKI's order, fp32 or any float dtype:
 * delta, u [batch, channels, seq_len]; A [channels, state_size]; B, C [batch, state_size, seq_len];
 * the result is [batch, channels, seq_len]. Channels are a multiple of 128 (partition tiles).
 */
#pragma once

#include <cstdint>
#include <vector>

#include "nki/kernel.h"
#include "nki/tunable_kernel.h"

namespace nki::kernels {

/** The sizes of a mamba launch. */
struct MambaDims {
  std::int64_t batch, channels, seq_len, state_size;
};
/**
 * The sizes of the five inputs after checking them (err_argument_count, err_input_shape_mismatch
 * naming the shapes; err_input_shape_not_tiled unless channels is a multiple of 128 and seq_len
 * a multiple of `seq_multiple`).
 */
MambaDims mamba_dims(const char* kernel, const std::vector<Shape>& shapes, std::int64_t seq_multiple);

/** v1: for each batch, states outermost, channel tiles inside; scanC accumulated in a 3-D SBUF array. */
const Kernel& mamba_v1();
GridSpec mamba_v1_grid(const std::vector<Shape>& shapes);
/** v2: channel tiles outermost, so delta and u load once per channel tile and the accumulator is one tile. */
const Kernel& mamba_v2();
GridSpec mamba_v2_grid(const std::vector<Shape>& shapes);
/** The free size of one sequence tile of mamba_v3. */
inline constexpr std::int64_t kMambaSeqTile = 512;
/** v3: v2 with the sequence in tiles of 512, each scan starting from the last column of the one before. */
const Kernel& mamba_v3();
GridSpec mamba_v3_grid(const std::vector<Shape>& shapes);
/** v3 with sequence tiles of `seq_tile` (one Kernel per size, made once); seq_len must be a multiple of it. */
Kernel mamba_v3(std::int64_t seq_tile);
GridSpec mamba_v3_grid(std::int64_t seq_tile, const std::vector<Shape>& shapes);
/**
 * mamba_v3 as a tunable kernel for `nki bench`: F (64..8192, powers of two, default 512), the
 * tutorial's "magic number decided through profiling". Every F gives bit-identical results (the
 * carry between tiles is the exact fp32 scan state).
 */
TunableKernel mamba_v3_tunable();

}  // namespace nki::kernels
