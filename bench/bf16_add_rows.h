/** \file The plain C++ bf16 add used as the STREAM-style baseline (no nki code). */
#pragma once

#include <cstddef>
#include <cstdint>

namespace nki_bench {

/**
 * c[i] = bf16(float(a[i]) + float(b[i])) for i in [0, n): the fp32 sum, a NaN sum made
 * the canonical quiet NaN 0x7fc00000 (as nki::ir::apply_binary), then rounded to nearest,
 * ties to even, a NaN kept quiet with its sign (as nki::float_to_bf16_bits).
 * Compiled in its own translation unit (bf16_add_rows.cpp) with the host's ISA so the
 * loop vectorizes as the Halide JIT code does.
 */
void bf16_add_rows(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* c, std::size_t n);

/**
 * The same add as torch computes it on the CPU (c10::BFloat16): the fp32 sum rounded to
 * nearest, ties to even, a NaN sum becoming 0x7fc0. The same bits as bf16_add_rows (whose
 * canonical NaN rounds to 0x7fc0), with one select instead of two.
 */
void bf16_add_rows_torch(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* c, std::size_t n);

/** STREAM's add kernel in fp32: c[i] = a[i] + b[i]. Built with the host's ISA as the loops above. */
void fp32_add_rows(const float* a, const float* b, float* c, std::size_t n);

}  // namespace nki_bench
