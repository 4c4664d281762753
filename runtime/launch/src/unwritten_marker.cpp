/** \file Marker patterns: fill, find, zero. */
#include "unwritten_marker.h"

#include <array>
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

void fill_marker(Tensor& t, int pass) {
  const int eb = dtype_bytes(t.dtype());
  const std::array<std::byte, 4> m = marker_bytes(eb, pass);
  std::byte* d = t.data();
  for (std::int64_t i = 0; i < t.elements(); ++i) std::memcpy(d + i * eb, m.data(), static_cast<std::size_t>(eb));
}

std::vector<std::int64_t> elements_holding_marker(const Tensor& t, int pass) {
  const int eb = dtype_bytes(t.dtype());
  const std::array<std::byte, 4> m = marker_bytes(eb, pass);
  const std::byte* d = t.data();
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < t.elements(); ++i)
    if (std::memcmp(d + i * eb, m.data(), static_cast<std::size_t>(eb)) == 0) out.push_back(i);
  return out;
}

void zero_elements(Tensor& t, const std::vector<std::int64_t>& flat) {
  const int eb = dtype_bytes(t.dtype());
  for (std::int64_t i : flat) std::memset(t.data() + i * eb, 0, static_cast<std::size_t>(eb));
}

}  // namespace nki
