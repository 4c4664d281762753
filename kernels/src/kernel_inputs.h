/** \file Input-shape checks the library kernels' launch functions share: one-line errors naming the shapes. */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nki/error.h"
#include "nki/shape.h"

namespace nki::kernels {

/** The number of inputs a kernel takes (err_argument_count otherwise). */
void check_argument_count(const char* kernel, const std::vector<Shape>& shapes, std::size_t expected);

/** [K, M, N] of matmul inputs lhsT [K, M] and rhs [K, N] (err_input_shape_mismatch otherwise). */
struct MatmulDims {
  std::int64_t k, m, n;
};
MatmulDims matmul_dims(const char* kernel, const std::vector<Shape>& shapes);

/**
 * Throws err_input_shape_not_tiled naming the shapes unless K, M and N are positive multiples
 * of the given sizes; `what` says which sizes in words.
 */
void check_matmul_tiled(const char* kernel, const std::vector<Shape>& shapes, MatmulDims d, std::int64_t k_multiple,
                        std::int64_t m_multiple, std::int64_t n_multiple);

/** The [rows, cols] of a 2-D input (err_input_shape_mismatch naming `name` otherwise). */
Shape matrix_shape(const char* kernel, const Shape& s, const char* name);

}  // namespace nki::kernels
