/**
 * \file NKI's microscaling (MX) instructions: isa.quantize_mx and isa.nc_matmul_mx.
 *
 * MX data is a tile of a packed type (fp8_e5m2_x4, fp8_e4m3fn_x4, fp4_e2m1fn_x4: four values
 * per element) with a scale tile. A group of 32 values, 8 partitions x one packed element,
 * shares one fp8_e8m0fnu scale; data [P, F] (F packed elements per partition) has scales
 * [P/8, F], row g holding the scales of partitions 8g..8g+7 (this layout is the project's:
 * NKI's docs leave the scale tile's layout to its architecture guide).
 */
#pragma once

#include "nki/language.h"

namespace nki::isa {

/** What isa::quantize_mx returns: the packed data and its scales. */
struct mx_tiles {
  nl::tile data;   ///< [P, F/4] of the packed type
  nl::tile scale;  ///< [P/8, F/4] of fp8_e8m0fnu (or uint8 codes)
};

/** Options of isa::quantize_mx. */
struct quantize_mx_options {
  DType scale_dtype = DType::fp8_e8m0fnu;  ///< fp8_e8m0fnu, or uint8 for the raw codes
};

/**
 * isa.quantize_mx on the Vector engine: `src` [P, F] in SBUF, fp16 or bf16, P a multiple of 32
 * up to 128 and F a multiple of 4, quantized to `dtype` (fp8_e5m2_x4 or fp8_e4m3fn_x4). Each
 * group's scale is 2^(floor(log2(max |v|)) - (E - 1)), E the element format's largest exponent
 * (8 for e4m3fn, 15 for e5m2); 2^-127 for an all-zero group, NaN if the group holds a NaN or
 * an infinity. Each value is divided by its scale and rounded to nearest even.
 */
mx_tiles quantize_mx(const nl::operand& src, DType dtype, const quantize_mx_options& o = {},
                     std::source_location loc = std::source_location::current());

/** Options of isa::nc_matmul_mx. */
struct matmul_mx_options {
  std::optional<DType> dtype;  ///< the PSUM result: fp32 (default) or bf16
};

/**
 * isa.nc_matmul_mx on the Tensor engine: stationary [K, M] and moving [K, N] of packed types in
 * SBUF, with their scales [K/8, M] and [K/8, N] (fp8_e8m0fnu or uint8) in SBUF. The contraction
 * runs over the K partitions and the 4 values of each element (4K products); K is a multiple of
 * 32 up to 128, M even up to 128, N up to 4096 (8192 for a bf16 result). The result [M, N] is
 * in PSUM, accumulated in fp32.
 */
nl::tile nc_matmul_mx(const nl::operand& stationary, const nl::operand& moving, const nl::operand& stationary_scale,
                      const nl::operand& moving_scale, const matmul_mx_options& o = {},
                      std::source_location loc = std::source_location::current());

}  // namespace nki::isa
