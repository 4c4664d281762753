/** \file NumPy .npy files (C order, little endian): what `nki run` reads and writes. */
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nki/dtype.h"
#include "nki/shape.h"

namespace nki {

/**
 * A .npy array. `dtype` is the file's: fp32 ('<f4'), fp16 ('<f2'), int8 ('|i1'), int16 ('<i2'),
 * int32 ('<i4'), uint8 ('|u1'), uint16 ('<u2'), uint32 ('<u4') or bool ('|b1', any non-zero byte
 * reads as 1). NumPy's defaults are read too, narrowed: float64 ('<f8') to fp32 with round-to-nearest-even,
 * int64 ('<i8') to int32 (a value outside int32 is refused, naming it). `values` holds every element exactly (NaN bits kept); `data` holds them as fp32,
 * exact but for int32/uint32 values past 2^24, which round to nearest even.
 */
struct NpyArray {
  Shape shape;
  DType dtype = DType::fp32;
  std::vector<double> values;
  std::vector<float> data;
};

/**
 * Reads a .npy (format 1.0, 2.0 or 3.0) of one of the dtypes above. Throws nki::UserError
 * naming the file and what was wrong: missing, not .npy, another dtype (quoting it and
 * listing the accepted ones), Fortran order, or truncated.
 */
NpyArray read_npy(const std::string& path);

/** The array in `bytes`, the contents of a .npy file; errors as read_npy's, naming `path`. */
NpyArray parse_npy(std::string_view bytes, const std::string& path);

/**
 * The array of `shape` whose elements are `bytes`, C order, of the NumPy dtype `descr` as a
 * .npy header spells it ("'<f4'", "'|b1'"): read and narrowed as read_npy reads a file.
 * Throws nki::UserError `error_name` with `subject` ("a.npy", "argument 2") leading the message
 * for another dtype, an empty dimension, or bytes that are not the shape's.
 */
NpyArray decode_npy_data(std::string_view descr, Shape shape, std::string_view bytes, const std::string& subject,
                         std::string_view error_name = "err_invalid_npy");

/**
 * The number of elements of an array of `shape`, after the checks decode_npy_data makes of it:
 * nki::UserError `error_name`, led by `subject`, for a 0-d shape, an empty dimension or more
 * than 2^40 elements.
 */
std::int64_t check_npy_shape(const Shape& shape, const std::string& subject,
                             std::string_view error_name = "err_invalid_npy");

/** The bytes of a float32 .npy (format 1.0) holding `values` of `shape`. */
std::string encode_npy(const Shape& shape, std::span<const float> values);

/**
 * The bytes of a .npy (format 1.0) of `dtype` holding `values` of `shape`, each converted as
 * nki::store_element does. `dtype` is one a .npy can hold (fp32, fp16, the integers, bool);
 * bf16 and fp8 have no NumPy dtype and are an InternalError.
 */
std::string encode_npy(const Shape& shape, std::span<const double> values, DType dtype = DType::fp32);

/**
 * The bytes of a .npy of format `major`.0 (1, 2 or 3) whose header is the dict text
 * `header_dict`, padded with spaces and a newline as NumPy pads it (data on a 64-byte
 * boundary), followed by `data` as given.
 */
std::string frame_npy(int major, std::string_view header_dict, std::string_view data);

}  // namespace nki
