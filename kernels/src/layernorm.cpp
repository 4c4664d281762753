/**
 * \file layernorm: NKI's LayerNorm tutorial kernel (the nki.language version), out = (x - mean) /
 * sqrt(var + epsilon) * gamma + beta over each row, in row tiles of 128 partitions computed in fp32;
 * the last tile is masked when the row count is not a multiple of 128.
 */
#include <fmt/format.h>

#include "kernel_inputs.h"
#include "row_tiles.h"
#include "kernel_memo.h"
#include "nki/kernels.h"
#include "nki/nki.h"

namespace nl = nki::language;

namespace nki::kernels {

Kernel layernorm(double epsilon) {
  return memo_kernel(epsilon, [](double eps) {
    return nki::jit(
        "layernorm",
        [eps](nl::tensor input_tensor, nl::tensor gamma_vector, nl::tensor beta_vector) {
          auto output_tensor = nl::ndarray(input_tensor.shape(), input_tensor.dtype(), nl::shared_hbm, "output_tensor");
          const std::int64_t num_rows = input_tensor.shape()[0], d = input_tensor.shape()[1];
          auto ix = nl::arange(128)[nl::_, nl::newaxis];
            auto iy = nl::arange(d)[nl::newaxis, nl::_];
          // gamma and beta, loaded once: every partition reads row 0 (a broadcast along the partitions).
          auto gamma = nl::load(gamma_vector[0 * ix, iy], {.dtype = nl::float32});
          auto beta = nl::load(beta_vector[0 * ix, iy], {.dtype = nl::float32});
          const RowTiles tiles = row_tiles(num_rows);
          for (auto t : nl::affine_range(tiles.count)) {
            const nl::index i = tiles.first + t;
            auto rows = i * 128 + ix < num_rows;
            auto x = nl::load(input_tensor[i * 128 + ix, iy], {.mask = rows, .dtype = nl::float32});
            auto mean = nl::mean(x, 1, {.keepdims = true});
            auto shifted = nl::subtract(x, mean);
            auto var = nl::mean(nl::square(shifted), 1, {.keepdims = true});
            auto rstd = nl::rsqrt(nl::add(var, eps));
            auto normalized = nl::multiply(shifted, rstd);
            auto y = nl::add(nl::multiply(normalized, gamma), beta, {.mask = rows});
            nl::store(output_tensor[i * 128 + ix, iy], y, {.mask = rows});
          }
          return output_tensor;
        },
        {"input_tensor", "gamma_vector", "beta_vector"});
  });
}

const Kernel& layernorm() {
  static const Kernel kernel = layernorm(kLayernormEpsilon);
  return kernel;
}

GridSpec layernorm_grid(const std::vector<Shape>& shapes) {
  check_argument_count("layernorm", shapes, 3);
  const Shape x = matrix_shape("layernorm", shapes[0], "input_tensor");
  for (std::size_t i = 1; i < 3; ++i) {
    const Shape& v = shapes[i];
    if (v.size() != 2 || v[0] != 1 || v[1] != x[1]) {
      throw UserError("err_input_shape_mismatch", "layernorm", {},
                      fmt::format("{} {} must be [1,{}] for input_tensor {}", i == 1 ? "gamma_vector" : "beta_vector",
                                  shape_str(v), x[1], shape_str(x)));
    }
  }
  return GridSpec{};
}

}  // namespace nki::kernels
