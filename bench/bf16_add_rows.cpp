/** \file The baselines' inner loops (bf16 and fp32 adds), written so the compiler vectorizes them. */
#include "bf16_add_rows.h"

#include <bit>

namespace nki_bench {

namespace {

/** bf16 bits -> fp32 (exact). */
inline float widen(std::uint16_t x) { return std::bit_cast<float>(static_cast<std::uint32_t>(x) << 16); }

/** The fp32 sum; a NaN sum is the canonical quiet NaN (as nki::ir::apply_binary), branch-free. */
inline float add(float x, float y) {
  const float s = x + y;
  return s != s ? std::bit_cast<float>(0x7fc00000u) : s;
}

/** fp32 -> bf16 bits as nki::float_to_bf16_bits, branch-free: both candidates are computed, one is selected. */
inline std::uint16_t narrow(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t rne = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const std::uint32_t nan = (bits >> 16) | 0x0040u;
  const bool is_nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return static_cast<std::uint16_t>(is_nan ? nan : rne);
}

/** fp32 -> bf16 bits as c10::BFloat16 rounds: nearest even, any NaN 0x7fc0. */
inline std::uint16_t narrow_torch(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t rne = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  return static_cast<std::uint16_t>(f != f ? 0x7fc0u : rne);
}

}  // namespace

void bf16_add_rows(const std::uint16_t* __restrict a, const std::uint16_t* __restrict b, std::uint16_t* __restrict c,
                   std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) c[i] = narrow(add(widen(a[i]), widen(b[i])));
}

void bf16_add_rows_torch(const std::uint16_t* __restrict a, const std::uint16_t* __restrict b,
                         std::uint16_t* __restrict c, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) c[i] = narrow_torch(widen(a[i]) + widen(b[i]));
}

void fp32_add_rows(const float* __restrict a, const float* __restrict b, float* __restrict c, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

}  // namespace nki_bench
