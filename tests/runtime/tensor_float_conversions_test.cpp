/**
 * \file Tensor::from_floats and to_floats convert fp32, bf16 and fp16 straight from the bits:
 * every result equals the element-wise store_element / load_element path, NaN payloads included.
 */
#include <bit>
#include <cstdint>
#include <cstring>

#include "nki/dtype_arrays.h"
#include "test_support.h"

namespace {

using D = nki::DType;

/** Floats covering every exponent, both signs, subnormals, infinities, quiet and signaling NaNs, and rounding ties. */
std::vector<float> float_patterns() {
  std::vector<float> out;
  for (std::uint32_t hi = 0; hi < 0x10000u; ++hi) {
    for (std::uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      out.push_back(std::bit_cast<float>((hi << 16) | lo));
    }
  }
  return out;
}

std::vector<std::uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<std::uint32_t> out(v.size());
  std::memcpy(out.data(), v.data(), v.size() * sizeof(float));
  return out;
}

}  // namespace

TEST_CASE("tensor: from_floats gives the bits store_element gives, for fp32, bf16 and fp16") {
  const std::vector<float> floats = float_patterns();
  const nki::Shape shape{static_cast<std::int64_t>(floats.size())};
  for (D t : {D::fp32, D::bf16, D::fp16}) {
    CAPTURE(nki::dtype_name(t));
    const nki::Tensor fast = nki::Tensor::from_floats(shape, t, floats);
    const int eb = nki::dtype_bytes(t);
    std::vector<std::byte> want(floats.size() * static_cast<std::size_t>(eb));
    for (std::size_t i = 0; i < floats.size(); ++i)
      nki::store_element(want.data() + i * eb, t, nki::load_element(&floats[i], D::fp32));
    CHECK(std::memcmp(fast.data(), want.data(), want.size()) == 0);
  }
}

TEST_CASE("tensor: to_floats gives the floats load_element gives, for every bf16 and fp16 bit pattern") {
  std::vector<std::uint16_t> patterns(0x10000);
  for (std::uint32_t i = 0; i < 0x10000u; ++i) patterns[i] = static_cast<std::uint16_t>(i);
  for (D t : {D::bf16, D::fp16}) {
    CAPTURE(nki::dtype_name(t));
    nki::Tensor tensor({0x10000}, t);
    std::memcpy(tensor.data(), patterns.data(), patterns.size() * 2);
    std::vector<float> want(patterns.size());
    for (std::size_t i = 0; i < patterns.size(); ++i)
      nki::store_element(&want[i], D::fp32, nki::load_element(&patterns[i], t));
    CHECK(bits_of(tensor.to_floats()) == bits_of(want));
  }
}

TEST_CASE("dtype arrays: another dtype than bf16 and fp16 is an internal error") {
  const std::vector<float> in{1.0f};
  std::uint16_t out = 0;
  CHECK_THROWS_AS(nki::floats_to_bits16(in, D::fp32, &out), nki::InternalError);
  std::vector<float> back(1);
  CHECK_THROWS_AS(nki::bits16_to_floats(&out, D::fp8_e4m3, back), nki::InternalError);
}
