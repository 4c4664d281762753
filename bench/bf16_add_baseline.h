/** \file The bf16 add benchmarks' shared parts: their inputs, the host reference, and the STREAM-style baseline. */
#pragma once

#include <cstddef>
#include <cstdint>

namespace nki_bench {

/** splitmix64: a quick deterministic generator; the values only need to look random. */
std::uint64_t mix(std::uint64_t x);

/**
 * bf16 bits of a normal number in about [2^-8, 2^9) with random sign and mantissa,
 * so no subnormal arithmetic slows either side down. A sparse sprinkle of NaN
 * (signalling and quiet) and infinities exercises the NaN rule of the rounding.
 */
std::uint16_t random_bf16(std::uint64_t seed, std::int64_t i);

/**
 * The host reference for one element, as the project defines a bf16 add: the fp32 sum
 * (a NaN sum is the canonical quiet NaN 0x7fc00000, as ir::apply_binary makes it, since
 * IEEE leaves NaN payloads open), rounded to bf16 by nki::float_to_bf16_bits.
 */
std::uint16_t reference_add(std::uint16_t a, std::uint16_t b);

/**
 * The STREAM-style baseline: c = a + b over n elements with bf16_add_rows, in `threads`
 * contiguous parts, one std::thread each (threads == 1: on the caller).
 */
void stream_bf16_add(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* c, std::size_t n, int threads);

}  // namespace nki_bench
