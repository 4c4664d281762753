/**
 * \file average_pool2d: NKI's AveragePool2D tutorial kernel. The [C, H, W] input (C on the
 * partitions) is read through a 5-D access pattern [C, H/pool, pool, W/pool, pool] and reduced over
 * the two pool axes, then divided by pool * pool.
 */
#include <fmt/format.h>

#include "kernel_inputs.h"
#include "kernel_memo.h"
#include "nki/kernels.h"
#include "nki/nki.h"

namespace nl = nki::language;

namespace nki::kernels {

Kernel average_pool2d(std::int64_t pool_size) {
  return memo_kernel(pool_size, [](std::int64_t pool) {
    return nki::jit(
        "average_pool2d",
        [pool](nl::tensor in_tensor) {
          const std::int64_t sz_cin = in_tensor.shape()[0], sz_hin = in_tensor.shape()[1], sz_win = in_tensor.shape()[2];
          const std::int64_t sz_hout = sz_hin / pool, sz_wout = sz_win / pool;
          auto out_tensor = nl::ndarray({sz_cin, sz_hout, sz_wout}, in_tensor.dtype(), nl::shared_hbm, "out_tensor");
          // The pool index pattern: two extra dimensions for the pool window.
          auto i0 = nl::arange(sz_cin)[nl::_, nl::newaxis, nl::newaxis, nl::newaxis, nl::newaxis];
          auto i1 = nl::arange(sz_hout)[nl::newaxis, nl::_, nl::newaxis, nl::newaxis, nl::newaxis];
          auto i2 = nl::arange(pool)[nl::newaxis, nl::newaxis, nl::_, nl::newaxis, nl::newaxis];
          auto i3 = nl::arange(sz_wout)[nl::newaxis, nl::newaxis, nl::newaxis, nl::_, nl::newaxis];
          auto i4 = nl::arange(pool)[nl::newaxis, nl::newaxis, nl::newaxis, nl::newaxis, nl::_];
          auto in_tile = nl::ndarray({sz_cin, sz_hin, sz_win}, in_tensor.dtype(), nl::sbuf, "in_tile");
          in_tile[nl::_, nl::_, nl::_] = nl::load(in_tensor.all());
          // Axes 1 and 2 index the rows (outer and inside a window), 3 and 4 the columns: reduce 2 and 4.
          auto out_tile = nl::divide(nl::sum(in_tile[i0, pool * i1 + i2, pool * i3 + i4], {2, 4}),
                                     static_cast<double>(pool * pool));
          nl::store(out_tensor.all(), out_tile);
          return out_tensor;
        },
        {"in_tensor"});
  });
}

const Kernel& average_pool2d() {
  static const Kernel kernel = average_pool2d(kAveragePoolSize);
  return kernel;
}

GridSpec average_pool2d_grid(const std::vector<Shape>& shapes, std::int64_t pool_size) {
  check_argument_count("average_pool2d", shapes, 1);
  const Shape& s = shapes[0];
  if (pool_size < 1 || s.size() != 3 || s[0] < 1 || s[0] > 128 || s[1] < pool_size || s[2] < pool_size ||
      s[1] % pool_size != 0 || s[2] % pool_size != 0) {
    throw UserError("err_input_shape_mismatch", "average_pool2d", {},
                    fmt::format("in_tensor {} must be [C, H, W] with C <= 128 partitions and H, W multiples of the pool "
                                "size {}",
                                shape_str(s), pool_size));
  }
  return GridSpec{};
}

}  // namespace nki::kernels
