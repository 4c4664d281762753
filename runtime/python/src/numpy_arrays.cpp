/** \file NumPy arrays in and out: the bytes of a C-order array decoded as a .npy's data would be. */
#include "numpy_arrays.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

#include "cli/argument_flags.h"
#include "nki/dtype_arrays.h"
#include "nki/error.h"

namespace nki::python {

namespace py = pybind11;

namespace {

/** A fresh array of `shape` of element type T holding `values`. */
template <class T, class V>
py::array filled(const Shape& shape, const std::vector<V>& values) {
  py::array_t<T> a(std::vector<py::ssize_t>(shape.begin(), shape.end()));
  T* out = a.mutable_data();
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = static_cast<T>(values[i]);
  return a;
}

}  // namespace

ArrayArgument::ArrayArgument(const py::handle& value, const std::string& subject) {
  const py::array a = py::module_::import("numpy").attr("asarray")(value);
  const std::string descr = py::cast<std::string>(a.dtype().attr("str"));
  shape_.assign(a.shape(), a.shape() + a.ndim());
  if (a.size() > 0 && (a.flags() & py::array::c_style) == 0) {
    std::vector<py::ssize_t> strides(a.strides(), a.strides() + a.ndim());
    throw UserError("err_invalid_array", "", {},
                    fmt::format("{}: shape {} of {} has strides ({}), not C order; expected a C-contiguous array "
                                "(numpy.ascontiguousarray makes one)",
                                subject, shape_str(shape_), py::cast<std::string>(py::str(a.dtype())),
                                fmt::join(strides, ", ")));
  }
  if (descr == "<f4") {
    const std::int64_t n = check_npy_shape(shape_, subject, "err_invalid_array");
    array_ = a;
    floats_ = {static_cast<const float*>(a.data()), static_cast<std::size_t>(n)};
    return;
  }
  const std::string_view bytes(static_cast<const char*>(a.data()), static_cast<std::size_t>(a.nbytes()));
  decoded_ = decode_npy_data("'" + descr + "'", shape_, bytes, subject, "err_invalid_array");
}

DType ArrayArgument::dtype(DType float_dtype) const {
  return decoded_ ? cli::argument_dtype(*decoded_, float_dtype) : float_dtype;
}

Tensor ArrayArgument::tensor(DType float_dtype, const sim::Device& device) const {
  if (decoded_) return cli::argument_tensor(*decoded_, float_dtype, device);
  return Tensor::from_floats(shape_, float_dtype, floats_, device);
}

py::array output_array(const Tensor& t) {
  switch (t.dtype()) {
    case DType::int8: return filled<std::int8_t>(t.shape(), t.to_values());
    case DType::int16: return filled<std::int16_t>(t.shape(), t.to_values());
    case DType::int32: return filled<std::int32_t>(t.shape(), t.to_values());
    case DType::uint8: return filled<std::uint8_t>(t.shape(), t.to_values());
    case DType::uint16: return filled<std::uint16_t>(t.shape(), t.to_values());
    case DType::uint32: return filled<std::uint32_t>(t.shape(), t.to_values());
    case DType::boolean: return filled<bool>(t.shape(), t.to_values());
    default: break;
  }
  if (is_integer(t.dtype())) throw InternalError(fmt::format("output_array: no NumPy dtype for {}", dtype_name(t.dtype())));
  // Float outputs as float32, converted straight into the array's buffer (no intermediate
  // vector): what Tensor::to_floats gives, for the common dtypes without its copy.
  py::array_t<float> a(std::vector<py::ssize_t>(t.shape().begin(), t.shape().end()));
  const std::span<float> out(a.mutable_data(), static_cast<std::size_t>(t.elements()));
  if (t.dtype() == DType::fp32) {
    std::memcpy(out.data(), t.data(), out.size_bytes());
  } else if (t.dtype() == DType::bf16 || t.dtype() == DType::fp16) {
    bits16_to_floats(reinterpret_cast<const std::uint16_t*>(t.data()), t.dtype(), out);
  } else {
    const std::vector<float> floats = t.to_floats();
    std::memcpy(out.data(), floats.data(), out.size_bytes());
  }
  return a;
}

}  // namespace nki::python
