/** \file Tensor::from_values / to_values: exact for every dtype; the float helpers keep working. */
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "test_support.h"

namespace {
using D = nki::DType;
constexpr double inf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("tensor: from_values then to_values gives back every value exactly, for every dtype") {
  const nki::sim::Device& dev = nki::sim::Device::default_device();
  struct Case {
    D t;
    std::vector<double> v;
  };
  const Case cases[] = {
      {D::fp32, {0.1f, -0.0, inf, -inf, 0x1p-149, 3.4028234663852886e38, 16777217.0 - 1}},
      {D::bf16, {1.0, 1.0078125, -3.0, 0x1p-133, inf}},
      {D::fp16, {65504.0, 0x1p-24, -0.0, 1.0009765625}},
      {D::fp8_e4m3, {240.0, -240.0, 0x1p-9, 1.125, -inf}},
      {D::fp8_e5m2, {57344.0, 0x1p-16, -1.25, inf}},
      {D::int8, {-128, 127, 0, -1}},
      {D::int16, {-32768, 32767, 12345}},
      {D::int32, {-2147483648.0, 2147483647.0, 16777217.0, -16777217.0}},
      {D::uint8, {0, 255, 128}},
      {D::uint16, {0, 65535, 40000}},
      {D::uint32, {0, 4294967295.0, 4294967294.0, 16777217.0}},
      {D::boolean, {0, 1, 1, 0}},
  };
  for (const Case& c : cases) {
    CAPTURE(nki::dtype_name(c.t));
    const auto t = nki::Tensor::from_values(dev, {1, static_cast<std::int64_t>(c.v.size())}, c.t, c.v);
    CHECK(t.dtype() == c.t);
    const std::vector<double> back = t.to_values();
    REQUIRE(back.size() == c.v.size());
    for (std::size_t i = 0; i < c.v.size(); ++i) {
      CHECK(back[i] == c.v[i]);
      CHECK(std::signbit(back[i]) == std::signbit(c.v[i]));
    }
  }
}

TEST_CASE("tensor: from_values converts as store_element does: rounding, saturation, NaN, bool") {
  const nki::sim::Device& dev = nki::sim::Device::default_device();
  const std::vector<double> in{2.5, 3.5, -1e9, 1e9, std::nan(""), -0.0};
  CHECK(nki::Tensor::from_values(dev, {6}, D::int8, in).to_values() == std::vector<double>{2, 4, -128, 127, 0, 0});
  CHECK(nki::Tensor::from_values(dev, {6}, D::uint16, in).to_values() == std::vector<double>{2, 4, 0, 65535, 0, 0});
  CHECK(nki::Tensor::from_values(dev, {6}, D::boolean, in).to_values() == std::vector<double>{1, 1, 1, 1, 1, 0});
  const auto e4 = nki::Tensor::from_values(dev, {2, 3}, D::fp8_e4m3, in).to_values();
  CHECK(e4[0] == 2.5);
  CHECK(e4[2] == -inf);  // -1e9 overflows to infinity
  CHECK(std::isnan(e4[4]));
  CHECK(dtype_bytes(D::fp8_e4m3) * 6 == nki::Tensor::from_values(dev, {6}, D::fp8_e4m3, in).bytes());
}

TEST_CASE("tensor: from_values with the wrong number of values is err_invalid_shape") {
  const nki::sim::Device& dev = nki::sim::Device::default_device();
  CHECK(test::user_error_of([&] { nki::Tensor::from_values(dev, {2, 3}, D::int32, std::vector<double>(5, 0.0)); }) ==
        "err_invalid_shape: 5 values given for a tensor of shape [2,3] (6 elements)");
}

TEST_CASE("tensor: to_floats of an integer tensor, and from_floats keeps NaN bits") {
  const nki::sim::Device& dev = nki::sim::Device::default_device();
  const auto t = nki::Tensor::from_values(dev, {3}, D::int32, std::vector<double>{-7, 16777217.0, 300});
  CHECK(t.to_floats() == std::vector<float>{-7.0f, 16777216.0f, 300.0f});  // past 2^24: nearest even
  const float snan = std::bit_cast<float>(0x7f800001u);
  const auto f = nki::Tensor::from_floats({2}, D::fp32, std::vector<float>{snan, 1.5f}, dev);
  CHECK(std::bit_cast<std::uint32_t>(f.to_floats()[0]) == 0x7f800001u);
  const auto b = nki::Tensor::from_floats({1}, D::bf16, std::vector<float>{std::bit_cast<float>(0x7f810000u)}, dev);
  std::uint16_t bits;
  std::memcpy(&bits, b.data(), 2);
  CHECK(bits == 0x7f81);
}
