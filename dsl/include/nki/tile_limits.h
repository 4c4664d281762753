/** \file Architecture limits on tile sizes (nl.tile_size), shared by the DSL and its passes. */
#pragma once

#include <cstdint>

namespace nki::tile_limits {
inline constexpr std::int64_t pmax = 128;                  ///< partitions of an SBUF/PSUM tile
inline constexpr std::int64_t psum_fmax = 512;             ///< fp32 elements per partition per PSUM bank
inline constexpr std::int64_t gemm_stationary_fmax = 128;  ///< matmul stationary free size
inline constexpr std::int64_t gemm_moving_fmax = 512;      ///< matmul moving free size
inline constexpr std::int64_t bn_stats_fmax = 512;         ///< free size one bn_stats instruction takes
inline constexpr std::int64_t sbuf_partition_bytes = 192 * 1024;  ///< SBUF bytes per partition (24 MiB / 128)
inline constexpr std::int64_t psum_partition_bytes = 16 * 1024;   ///< PSUM bytes per partition (8 banks of 2 KiB)
}  // namespace nki::tile_limits
