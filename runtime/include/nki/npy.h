/** \file NumPy .npy files of float32 (C order, little endian): what `nki run` reads and writes. */
#pragma once

#include <span>
#include <string>
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

}  // namespace nki
