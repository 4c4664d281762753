/** \file Shapes: printing, element counts, row-major strides. */
#include "nki/shape.h"

#include <fmt/format.h>

#include "nki/error.h"

namespace nki {

std::string shape_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ",")); }

std::int64_t shape_elements(const Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) {
      throw UserError("err_invalid_shape", "", {},
                      fmt::format("shape {} has no element count that fits 64 bits", shape_str(s)));
    }
  }
  return n;
}

std::vector<std::int64_t> row_major_strides(const Shape& s) {
  std::vector<std::int64_t> strides(s.size(), 1);
  for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * s[d + 1];
  return strides;
}

std::vector<std::int64_t> coord_of_flat(const Shape& shape, std::int64_t flat) {
  std::vector<std::int64_t> c(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    c[d] = flat % shape[d];
    flat /= shape[d];
  }
  return c;
}

bool next_coord(std::vector<std::int64_t>& coord, const Shape& shape) {
  for (std::size_t d = coord.size(); d-- > 0;) {
    if (++coord[d] < shape[d]) return true;
    coord[d] = 0;
  }
  return false;
}

}  // namespace nki
