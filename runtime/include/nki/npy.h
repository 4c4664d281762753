/** \file NumPy .npy files of float32 (C order, little endian): what `nki run` reads and writes. */
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nki/shape.h"

namespace nki {

struct NpyArray {
  Shape shape;
  std::vector<float> data;
};

/**
 * Reads a float32 .npy (format 1.0, 2.0 or 3.0). Throws nki::UserError naming the
 * file and what was wrong: missing, not .npy, not float32 (quoting its dtype),
 * Fortran order, or truncated.
 */
NpyArray read_npy(const std::string& path);

/** The bytes of a float32 .npy (format 1.0) holding `values` of `shape`. */
std::string encode_npy(const Shape& shape, std::span<const float> values);

/**
 * The bytes of a .npy of format `major`.0 (1, 2 or 3) whose header is the dict text
 * `header_dict`, padded with spaces and a newline as NumPy pads it (data on a 64-byte
 * boundary), followed by `data` as given.
 */
std::string frame_npy(int major, std::string_view header_dict, std::string_view data);

}  // namespace nki
