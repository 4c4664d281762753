/** \file nki::Tensor: a tensor with data, living in a simulated device's HBM. */
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "nki/dtype.h"
#include "nki/shape.h"
#include "nki/simulator/device.h"

namespace nki {

/** Row-major (C order) tensor data in HBM. Copies share the storage. */
class Tensor {
 public:
  /** Allocates `shape` of `dtype` in the device's HBM; contents undefined. */
  Tensor(Shape shape, DType dtype, const sim::Device& device = sim::Device::default_device());
  /** From fp32 values, converted to `dtype` with round-to-nearest-even. */
  static Tensor from_floats(Shape shape, DType dtype, std::span<const float> values,
                            const sim::Device& device = sim::Device::default_device());
  /** Every element as fp32: exact for every float dtype and for integers of up to 16 bits; int32 and
   *  uint32 values past 2^24 round to nearest even. NaN bits are kept. */
  std::vector<float> to_floats() const;
  /** From values of any dtype, converted to `dtype` as nki::store_element does (floats: to fp32 then
   *  `dtype`, nearest even; integers: nearest even, saturated, NaN -> 0; bool: non-zero -> 1). */
  static Tensor from_values(const sim::Device& device, Shape shape, DType dtype, std::span<const double> values);
  /** Every element as double (exact for every dtype). */
  std::vector<double> to_values() const;

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  std::int64_t elements() const { return shape_elements(shape_); }
  std::int64_t bytes() const { return elements() * dtype_bytes(dtype_); }
  /** Row-major strides in elements. */
  std::vector<std::int64_t> strides() const;

  std::byte* data() { return data_.get(); }
  const std::byte* data() const { return data_.get(); }
  /** Raw 16-bit storage of a bf16/fp16 tensor (for bit-exact checks). */
  std::span<std::uint16_t> bits16();
  const sim::Device& device() const { return device_; }

 private:
  Shape shape_;
  DType dtype_;
  sim::Device device_;  ///< a handle sharing the device's HBM, so the tensor outlives nothing it needs
  std::shared_ptr<std::byte> data_;
};

}  // namespace nki
