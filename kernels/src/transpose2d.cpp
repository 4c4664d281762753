/**
 * \file transpose2d: NKI's Transpose2D tutorial kernel. Every partition row holds a row-major
 * [Y, X] matrix; the kernel writes it as its [X, Y] transpose with one SBUF-to-SBUF copy whose
 * access patterns do the reordering (no data moves through the Tensor engine).
 *
 * NKI passes shape2D beside a flat [P, Y*X] input; here the input is [P, Y, X] and the output
 * [P, X, Y], so the shape carries shape2D, and the kernel flattens each row on its way into SBUF.
 */
#include <fmt/format.h>

#include "kernel_inputs.h"
#include "nki/kernels.h"
#include "nki/nki.h"

namespace nl = nki::language;

namespace nki::kernels {

const Kernel& transpose2d() {
  static const Kernel kernel = nki::jit(
      "transpose2d",
      [](nl::tensor in_tensor) {
        const std::int64_t sz_p = in_tensor.shape()[0], sz_y = in_tensor.shape()[1], sz_x = in_tensor.shape()[2];
        auto out_tensor = nl::ndarray({sz_p, sz_x, sz_y}, in_tensor.dtype(), nl::shared_hbm, "out_tensor");
        auto i_p0 = nl::arange(sz_p)[nl::_, nl::newaxis, nl::newaxis];
        auto i_f0 = nl::arange(sz_y)[nl::newaxis, nl::_, nl::newaxis];
        auto i_f1 = nl::arange(sz_x)[nl::newaxis, nl::newaxis, nl::_];
        // Each row as the tutorial sees it: the flat [Y * X] matrix.
        auto in_tile = nl::ndarray({sz_p, sz_y * sz_x}, in_tensor.dtype(), nl::sbuf, "in_tile");
        in_tile[i_p0, i_f0 * sz_x + i_f1] = nl::load(in_tensor[i_p0, i_f0, i_f1]);
        // The transposition: element (y, x) of a row goes to (x, y).
        auto out_tile = nl::ndarray({sz_p, sz_x * sz_y}, in_tensor.dtype(), nl::sbuf, "out_tile");
        out_tile[i_p0, i_f1 * sz_y + i_f0] = nl::copy(in_tile[i_p0, i_f0 * sz_x + i_f1]);
        auto j_x = nl::arange(sz_x)[nl::newaxis, nl::_, nl::newaxis];
        auto j_y = nl::arange(sz_y)[nl::newaxis, nl::newaxis, nl::_];
        nl::store(out_tensor[i_p0, j_x, j_y], out_tile[i_p0, j_x * sz_y + j_y]);
        return out_tensor;
      },
      {"in_tensor"});
  return kernel;
}

GridSpec transpose2d_grid(const std::vector<Shape>& shapes) {
  check_argument_count("transpose2d", shapes, 1);
  const Shape& s = shapes[0];
  if (s.size() != 3 || s[0] < 1 || s[0] > 128 || s[1] < 1 || s[2] < 1) {
    throw UserError("err_input_shape_mismatch", "transpose2d", {},
                    fmt::format("in_tensor {} must be [P, Y, X] with P <= 128 partitions", shape_str(s)));
  }
  return GridSpec{};
}

}  // namespace nki::kernels
