/** \file tensor_add: NKI's tensor-add tutorial kernel, on one core and split over two. */
#include <fmt/format.h>

#include "nki/kernels.h"
#include "nki/nki.h"

namespace nl = nki::language;

namespace nki::kernels {

const Kernel& tensor_add() {
  static const Kernel kernel = nki::jit(
      "tensor_add",
      [](nl::tensor a, nl::tensor b) {
        auto c = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        // One [128, 512] tile per instance.
        auto ix = nl::program_id(0) * 128 + nl::arange(128)[nl::_, nl::newaxis];  // (128, 1)
        auto iy = nl::program_id(1) * 512 + nl::arange(512)[nl::newaxis, nl::_];  // (1, 512)
        auto a_tile = nl::load(a[ix, iy]);  // (128, 512)
        auto b_tile = nl::load(b[ix, iy]);  // (128, 512)
        nl::store(c[ix, iy], a_tile + b_tile);
        return c;
      },
      {"a", "b"});
  return kernel;
}

namespace {

/** The [P, F] shape both inputs share, checked to be a whole number of [p_tile, 512] tiles. */
Shape checked_shape(const char* kernel, const std::vector<Shape>& shapes, std::int64_t p_tile) {
  if (shapes.size() != 2) {
    throw UserError("err_argument_count", kernel, {}, fmt::format("takes 2 inputs, {} given", shapes.size()));
  }
  if (shapes[0] != shapes[1]) {
    throw UserError("err_input_shape_mismatch", kernel, {},
                    fmt::format("inputs have different shapes {} and {}", shape_str(shapes[0]), shape_str(shapes[1])));
  }
  const Shape& s = shapes[0];
  if (s.size() != 2 || s[0] % p_tile != 0 || s[1] % 512 != 0) {
    throw UserError("err_input_shape_not_tiled", kernel, {},
                    fmt::format("input shape {} is not a 2-D multiple of the tile [{},512]", shape_str(s), p_tile));
  }
  return s;
}

}  // namespace

GridSpec tensor_add_grid(const std::vector<Shape>& shapes) {
  const Shape s = checked_shape("tensor_add", shapes, 128);
  return GridSpec{{GridAxis(s[0] / 128), GridAxis(s[1] / 512)}};
}

GridSpec tensor_add_nc2_grid(const std::vector<Shape>& shapes) {
  const Shape s = checked_shape("tensor_add_nc2", shapes, 256);
  return GridSpec{{nl::spmd_dim(s[0] / 256, nl::nc(2)), GridAxis(s[1] / 512)}};
}

}  // namespace nki::kernels
