/** \file Inputs, host reference and the threaded STREAM-style baseline of the bf16 add benchmarks. */
#include "bf16_add_baseline.h"

#include <bit>
#include <cmath>
#include <thread>
#include <vector>

#include "bf16_add_rows.h"
#include "nki/dtype.h"

namespace nki_bench {

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint16_t random_bf16(std::uint64_t seed, std::int64_t i) {
  const std::uint64_t r = mix(seed * 0x100000001b3ull + static_cast<std::uint64_t>(i));
  // Specials sit at different positions in a and b: which NaN an x86 add returns when both
  // operands are NaN depends on operand order, which C++ leaves to the compiler.
  if ((i + static_cast<std::int64_t>(seed) * 9973) % 65521 == 0) {
    constexpr std::uint16_t specials[] = {0x7f81, 0xffc1, 0x7f80, 0xff80};  // sNaN, -qNaN, +inf, -inf
    return specials[(r >> 8) & 3];
  }
  const std::uint32_t sign = static_cast<std::uint32_t>(r & 1) << 15;
  const std::uint32_t exponent = 119u + static_cast<std::uint32_t>((r >> 1) % 17);  // biased
  const std::uint32_t mantissa = static_cast<std::uint32_t>(r >> 8) & 0x7fu;
  return static_cast<std::uint16_t>(sign | (exponent << 7) | mantissa);
}

std::uint16_t reference_add(std::uint16_t a, std::uint16_t b) {
  const float sum = nki::bf16_bits_to_float(a) + nki::bf16_bits_to_float(b);
  return nki::float_to_bf16_bits(std::isnan(sum) ? std::bit_cast<float>(0x7fc00000u) : sum);
}

void stream_bf16_add(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* c, std::size_t n, int threads) {
  if (threads <= 1) {
    bf16_add_rows(a, b, c, n);
    return;
  }
  const std::size_t part = n / static_cast<std::size_t>(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    const std::size_t begin = part * static_cast<std::size_t>(t);
    const std::size_t count = t + 1 == threads ? n - begin : part;
    workers.emplace_back([=] { bf16_add_rows(a + begin, b + begin, c + begin, count); });
  }
  for (std::thread& w : workers) w.join();
}

}  // namespace nki_bench
