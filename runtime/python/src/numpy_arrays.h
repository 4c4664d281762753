/** \file NumPy arrays to kernel arguments and kernel outputs back, converted as `nki run` converts .npy files. */
#pragma once

#include <pybind11/numpy.h>

#include <optional>
#include <span>
#include <string>

#include "nki/npy.h"
#include "nki/simulator/device.h"
#include "nki/tensor.h"

namespace nki::python {

/**
 * An array argument as `nki run` reads a .npy of it: float32, float16, the integers to 32 bits
 * and bool as they are, float64 and int64 narrowed (int64 only when every value fits int32).
 * A float32 array is used in place (its bytes are what a .npy of it holds); another is decoded.
 */
class ArrayArgument {
 public:
  /**
   * `value`: a numpy array, or anything numpy.asarray takes. Throws nki::UserError
   * err_invalid_array, led by `subject` ("argument 2"), for another dtype, a 0-d or empty
   * array, or an array not in C order.
   */
  ArrayArgument(const pybind11::handle& value, const std::string& subject);

  const Shape& shape() const { return shape_; }
  /** The dtype it has for a kernel whose float arguments are `float_dtype` (cli::argument_dtype). */
  DType dtype(DType float_dtype) const;
  /** As a tensor on `device` (cli::argument_tensor); needs no GIL. */
  Tensor tensor(DType float_dtype, const sim::Device& device) const;

 private:
  Shape shape_;
  pybind11::array array_;           ///< a float32 array, kept alive while its buffer is used
  std::span<const float> floats_;   ///< its elements
  std::optional<NpyArray> decoded_;  ///< any other dtype
};

/** An output as `nki run` writes it: an integer or bool tensor as that dtype, a float one as float32. */
pybind11::array output_array(const Tensor& t);

}  // namespace nki::python
