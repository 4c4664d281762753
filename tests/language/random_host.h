/**
 * \file A host implementation of the kernels' random-number generator (docs/reference.md,
 * "Random numbers"), written from its description, for the random tests to compare with.
 */
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace rh {

inline std::uint32_t rotl(std::uint32_t x, int r) { return r == 0 ? x : (x << r) | (x >> (32 - r)); }
inline std::uint32_t f(std::uint32_t x) { return (rotl(x, 1) & rotl(x, 8)) ^ rotl(x, 2); }
inline std::pair<std::uint32_t, std::uint32_t> feistel(std::uint32_t l, std::uint32_t r, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    const std::uint32_t next = r ^ f(l);
    r = l;
    l = next;
  }
  return {l, r};
}

/** The two key words of one partition's generator. */
struct Key {
  std::uint32_t k0, k1;
};
inline Key vector_builtin() { return {0x6A09E667u, 0xBB67AE85u}; }
inline Key gpsimd_builtin() { return {0x3C6EF372u, 0xA54FF53Au}; }
/** nl::random_seed / isa::set_rng_seed of `seed` (an int32 seed's bits). */
inline Key from_seed(std::int64_t seed) {
  const auto s = static_cast<std::uint32_t>(seed);
  return {s, s ^ 0x5BD1E995u};
}
/** isa::rand_set_state of one partition's words: even words into k0, odd into k1, word j rotated by j / 2. */
inline Key from_state(const std::vector<std::uint32_t>& words) {
  Key k{0, 0};
  for (std::size_t j = 0; j < words.size(); ++j) (j % 2 == 0 ? k.k0 : k.k1) ^= rotl(words[j], static_cast<int>(j / 2));
  return k;
}
/** The key words moved along by `calls` generator calls (what isa::rand_get_state writes in words 0 and 1). */
inline Key pre(Key k, std::uint64_t calls) {
  return {k.k0 ^ static_cast<std::uint32_t>(calls * 0x9E3779B9u), k.k1 ^ static_cast<std::uint32_t>(calls * 0x85EBCA6Bu)};
}
/** The 32 bits of call `calls` for the element at row-major `position` of instance/iteration `stream`. */
inline std::uint32_t bits(Key k, std::uint64_t calls, std::uint32_t stream, std::uint32_t position) {
  const Key p = pre(k, calls);
  const auto [a, b] = feistel(p.k0, p.k1, 4);
  return feistel(position ^ a, stream ^ b, 10).first;
}
/** A uniform value in [0, 1) from the top `nbits` of the bits. */
inline double uniform(std::uint32_t b, int nbits = 24) {
  return static_cast<double>(b >> (32 - nbits)) / static_cast<double>(1u << nbits);
}

}  // namespace rh
