/** \file Input-shape checks the library kernels share. */
#include "kernel_inputs.h"

#include <fmt/format.h>

namespace nki::kernels {

void check_argument_count(const char* kernel, const std::vector<Shape>& shapes, std::size_t expected) {
  if (shapes.size() != expected)
    throw UserError("err_argument_count", kernel, {}, fmt::format("takes {} inputs, {} given", expected, shapes.size()));
}

MatmulDims matmul_dims(const char* kernel, const std::vector<Shape>& shapes) {
  check_argument_count(kernel, shapes, 2);
  const Shape& l = shapes[0];
  const Shape& r = shapes[1];
  if (l.size() != 2 || r.size() != 2 || l[0] != r[0]) {
    throw UserError("err_input_shape_mismatch", kernel, {},
                    fmt::format("lhsT {} and rhs {} must be [K,M] and [K,N] with the same K", shape_str(l), shape_str(r)));
  }
  return {l[0], l[1], r[1]};
}

void check_matmul_tiled(const char* kernel, const std::vector<Shape>& shapes, MatmulDims d, std::int64_t k_multiple,
                        std::int64_t m_multiple, std::int64_t n_multiple) {
  auto fits = [](std::int64_t v, std::int64_t multiple) { return v > 0 && v % multiple == 0; };
  if (fits(d.k, k_multiple) && fits(d.m, m_multiple) && fits(d.n, n_multiple)) return;
  throw UserError("err_input_shape_not_tiled", kernel, {},
                  fmt::format("lhsT {} and rhs {}: K must be a multiple of {}, M of {} and N of {}", shape_str(shapes[0]),
                              shape_str(shapes[1]), k_multiple, m_multiple, n_multiple));
}

Shape matrix_shape(const char* kernel, const Shape& s, const char* name) {
  if (s.size() != 2 || s[0] <= 0 || s[1] <= 0)
    throw UserError("err_input_shape_mismatch", kernel, {}, fmt::format("{} {} must be a 2-D [rows, cols] matrix", name, shape_str(s)));
  return s;
}

}  // namespace nki::kernels
