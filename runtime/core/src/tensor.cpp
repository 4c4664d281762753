/** \file Tensors in simulated HBM. */
#include "nki/tensor.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

#include "nki/dtype_arrays.h"
#include "nki/error.h"

namespace nki {

namespace {

/** from_floats and from_values take one value per element. */
void check_value_count(std::size_t given, const Tensor& t) {
  if (static_cast<std::int64_t>(given) != t.elements()) {
    throw UserError("err_invalid_shape", "", {},
                    fmt::format("{} values given for a tensor of shape {} ({} elements)", given, shape_str(t.shape()),
                                t.elements()));
  }
}

}  // namespace

Tensor::Tensor(Shape shape, DType dtype, const sim::Device& device)
    : shape_(std::move(shape)), dtype_(dtype), device_(device) {
  for (std::int64_t d : shape_) {
    if (d <= 0) {
      throw UserError("err_invalid_shape", "", {},
                      fmt::format("tensor shape {} has a dimension of size {}; sizes must be positive",
                                  shape_str(shape_), d));
    }
  }
  if (elements() > INT64_MAX / dtype_bytes(dtype_)) {
    throw UserError("err_invalid_shape", "", {},
                    fmt::format("tensor shape {} of {} has more bytes than fit in 64 bits", shape_str(shape_),
                                dtype_name(dtype_)));
  }
  data_ = device.hbm().allocate(bytes());
}

Tensor Tensor::from_floats(Shape shape, DType dtype, std::span<const float> values, const sim::Device& device) {
  Tensor t(std::move(shape), dtype, device);
  check_value_count(values.size(), t);
  // The common dtypes straight from the float's bits: what store_element(load_element(f)) gives,
  // without the trip through double (widen then narrow is the identity, NaN payloads included).
  if (dtype == DType::fp32) {
    std::memcpy(t.data(), values.data(), values.size_bytes());
  } else if (dtype == DType::bf16 || dtype == DType::fp16) {
    floats_to_bits16(values, dtype, reinterpret_cast<std::uint16_t*>(t.data()));
  } else {
    const int eb = dtype_bytes(dtype);
    for (std::size_t i = 0; i < values.size(); ++i) store_element(t.data() + i * eb, dtype, load_element(&values[i], DType::fp32));
  }
  return t;
}

Tensor Tensor::from_values(const sim::Device& device, Shape shape, DType dtype, std::span<const double> values) {
  Tensor t(std::move(shape), dtype, device);
  check_value_count(values.size(), t);
  const int eb = dtype_bytes(dtype);
  for (std::size_t i = 0; i < values.size(); ++i) store_element(t.data() + i * eb, dtype, values[i]);
  return t;
}

std::vector<double> Tensor::to_values() const {
  std::vector<double> out(static_cast<std::size_t>(elements()));
  const int eb = dtype_bytes(dtype_);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = load_element(data() + i * eb, dtype_);
  return out;
}

std::vector<float> Tensor::to_floats() const {
  std::vector<float> out(static_cast<std::size_t>(elements()));
  // As in from_floats: the common dtypes from their bits, the same floats the generic path gives.
  if (dtype_ == DType::fp32) {
    std::memcpy(out.data(), data(), out.size() * sizeof(float));
  } else if (dtype_ == DType::bf16 || dtype_ == DType::fp16) {
    bits16_to_floats(reinterpret_cast<const std::uint16_t*>(data()), dtype_, out);
  } else {
    const int eb = dtype_bytes(dtype_);
    for (std::size_t i = 0; i < out.size(); ++i) store_element(&out[i], DType::fp32, load_element(data() + i * eb, dtype_));
  }
  return out;
}

std::vector<std::int64_t> Tensor::strides() const { return row_major_strides(shape_); }

std::span<std::uint16_t> Tensor::bits16() {
  if (dtype_bytes(dtype_) != 2) {
    throw UserError("err_dtype_mismatch", "", {},
                    fmt::format("bits16() on a {} tensor; it needs a 16-bit dtype", dtype_name(dtype_)));
  }
  return {reinterpret_cast<std::uint16_t*>(data()), static_cast<std::size_t>(elements())};
}

}  // namespace nki
