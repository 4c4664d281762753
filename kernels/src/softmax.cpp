/**
 * \file softmax: softmax over each row, exp(x - max) / sum(exp(x - max)), in row tiles of 128
 * partitions computed in fp32; the last tile is masked when the row count is not a multiple of 128.
 */
#include "kernel_inputs.h"
#include "row_tiles.h"
#include "nki/kernels.h"
#include "nki/nki.h"

namespace nl = nki::language;

namespace nki::kernels {

const Kernel& softmax() {
  static const Kernel kernel = nki::jit(
      "softmax",
      [](nl::tensor x_tensor) {
        auto out_tensor = nl::ndarray(x_tensor.shape(), x_tensor.dtype(), nl::shared_hbm, "out_tensor");
        const std::int64_t num_rows = x_tensor.shape()[0], d = x_tensor.shape()[1];
        auto ix = nl::arange(128)[nl::_, nl::newaxis];
        auto iy = nl::arange(d)[nl::newaxis, nl::_];
        const RowTiles tiles = row_tiles(num_rows);
        for (auto t : nl::affine_range(tiles.count)) {
          const nl::index i = tiles.first + t;
          auto rows = i * 128 + ix < num_rows;
          auto x = nl::load(x_tensor[i * 128 + ix, iy], {.mask = rows, .dtype = nl::float32});
          auto row_max = nl::max(x, 1, {.keepdims = true});
          auto e = nl::exp(nl::subtract(x, row_max));
          auto row_sum = nl::sum(e, 1, {.keepdims = true});
          auto y = nl::multiply(e, nl::reciprocal(row_sum), {.mask = rows});
          nl::store(out_tensor[i * 128 + ix, iy], y, {.mask = rows});
        }
        return out_tensor;
      },
      {"x"});
  return kernel;
}

GridSpec softmax_grid(const std::vector<Shape>& shapes) {
  check_argument_count("softmax", shapes, 1);
  matrix_shape("softmax", shapes[0], "x");
  return GridSpec{};
}

}  // namespace nki::kernels
