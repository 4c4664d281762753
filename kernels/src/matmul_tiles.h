/** \file The tile sizes of NKI's matmul tutorial kernels (nl.tile_size). */
#pragma once

#include <cstdint>

#include "nki/language.h"

namespace nki::kernels {

inline constexpr std::int64_t TILE_M = nki::language::tile_size::gemm_stationary_fmax;  // 128
inline constexpr std::int64_t TILE_K = nki::language::tile_size::pmax;                  // 128
inline constexpr std::int64_t TILE_N = nki::language::tile_size::gemm_moving_fmax;      // 512

}  // namespace nki::kernels
