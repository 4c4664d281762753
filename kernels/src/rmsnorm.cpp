/**
 * \file rmsnorm: NKI's RMSNorm tutorial kernel, out = a / sqrt(mean(a^2)) * g over each row, in row
 * tiles of 128 partitions; the last tile is masked when the row count is not a multiple of 128.
 * The weight g is a vector [D], read through a [1, D] reshape as the tutorial does.
 */
#include <fmt/format.h>

#include "kernel_inputs.h"
#include "row_tiles.h"
#include "nki/kernels.h"
#include "nki/nki.h"

namespace nl = nki::language;

namespace nki::kernels {

const Kernel& rmsnorm() {
  static const Kernel kernel = nki::jit(
      "rmsnorm",
      [](nl::tensor a_tensor, nl::tensor g_tensor) {
        auto out_tensor = nl::ndarray(a_tensor.shape(), a_tensor.dtype(), nl::shared_hbm, "out_tensor");
        const std::int64_t num_rows = a_tensor.shape()[0], d = a_tensor.shape()[1];
        auto ix = nl::arange(128)[nl::_, nl::newaxis];
        auto iy = nl::arange(d)[nl::newaxis, nl::_];
        // The weight [d] as a [1, d] view (no copy), loaded once: every partition reads row 0
        // (NKI: g_tensor.reshape((1, g_tensor.shape[0])), then g_tile.broadcast_to).
        auto g_row = g_tensor.reshape({1, d});
        auto g_tile = nl::load(g_row[0 * ix, iy], {.dtype = nl::float32});
        const RowTiles tiles = row_tiles(num_rows);
        for (auto t : nl::affine_range(tiles.count)) {
          const nl::index i = tiles.first + t;
          auto rows = i * 128 + ix < num_rows;
          auto a_tile = nl::load(a_tensor[i * 128 + ix, iy], {.mask = rows, .dtype = nl::float32});
          auto square_sum = nl::sum(nl::square(a_tile), 1, {.keepdims = true});
          auto mean = square_sum / static_cast<double>(d);
          auto rms_reciprocal = nl::rsqrt(mean);
          auto out_tile = nl::multiply(a_tile, rms_reciprocal);
          auto weighted = nl::multiply(out_tile, g_tile, {.mask = rows});
          nl::store(out_tensor[i * 128 + ix, iy], weighted, {.mask = rows});
        }
        return out_tensor;
      },
      {"a_tensor", "g_tensor"});
  return kernel;
}

GridSpec rmsnorm_grid(const std::vector<Shape>& shapes) {
  check_argument_count("rmsnorm", shapes, 2);
  const Shape a = matrix_shape("rmsnorm", shapes[0], "a_tensor");
  const Shape& g = shapes[1];
  if (g.size() != 1 || g[0] != a[1]) {
    throw UserError("err_input_shape_mismatch", "rmsnorm", {},
                    fmt::format("g_tensor {} must be the vector [{}] for a_tensor {}", shape_str(g), a[1], shape_str(a)));
  }
  return GridSpec{};
}

}  // namespace nki::kernels
