/** \file Marker patterns: fill, find, zero. */
#include "unwritten_marker.h"

#include <algorithm>
#include <array>
#include <span>
#include <cstring>

#include "nki/error.h"

namespace nki {

namespace {

/** Marker `pass` as the bytes of one element of `bytes` bytes (little endian). */
std::array<std::byte, 4> marker_bytes(int bytes, int pass) {
  std::uint32_t bits = 0;
  switch (bytes) {
    case 4: bits = 0x7FA5A5A5u; break;  // fp32 signaling NaN
    case 2: bits = 0x7FA5u; break;      // bf16 signaling NaN (an fp16 NaN too)
    case 1: bits = 0x7Du; break;        // fp8_e5m2 signaling NaN
    default: throw InternalError("fill_marker: an element of " + std::to_string(bytes) + " bytes");
  }
  if (pass == 2) bits = ~bits;
  std::array<std::byte, 4> out{};
  std::memcpy(out.data(), &bits, 4);
  return out;
}

}  // namespace

namespace {

// The elements as words of their size: fill and scan run as typed loops the compiler vectorizes.

template <class W>
W marker_word(const std::array<std::byte, 4>& m) {
  W w{};
  std::memcpy(&w, m.data(), sizeof(W));
  return w;
}

template <class W>
void fill_words(Tensor& t, const std::array<std::byte, 4>& m) {
  const std::span<W> words(reinterpret_cast<W*>(t.data()), static_cast<std::size_t>(t.elements()));
  std::fill(words.begin(), words.end(), marker_word<W>(m));
}

template <class W>
std::vector<std::int64_t> find_words(const Tensor& t, const std::array<std::byte, 4>& m) {
  const std::span<const W> words(reinterpret_cast<const W*>(t.data()), static_cast<std::size_t>(t.elements()));
  const W marker = marker_word<W>(m);
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < words.size(); ++i)
    if (words[i] == marker) out.push_back(static_cast<std::int64_t>(i));
  return out;
}

}  // namespace

void fill_marker(Tensor& t, int pass) {
  const int eb = dtype_bytes(t.dtype());
  const std::array<std::byte, 4> m = marker_bytes(eb, pass);
  if (eb == 4) return fill_words<std::uint32_t>(t, m);
  if (eb == 2) return fill_words<std::uint16_t>(t, m);
  fill_words<std::uint8_t>(t, m);
}

std::vector<std::int64_t> elements_holding_marker(const Tensor& t, int pass) {
  const int eb = dtype_bytes(t.dtype());
  const std::array<std::byte, 4> m = marker_bytes(eb, pass);
  if (eb == 4) return find_words<std::uint32_t>(t, m);
  if (eb == 2) return find_words<std::uint16_t>(t, m);
  return find_words<std::uint8_t>(t, m);
}

void zero_elements(Tensor& t, const std::vector<std::int64_t>& flat) {
  const int eb = dtype_bytes(t.dtype());
  for (std::int64_t i : flat) std::memset(t.data() + i * eb, 0, static_cast<std::size_t>(eb));
}

}  // namespace nki
