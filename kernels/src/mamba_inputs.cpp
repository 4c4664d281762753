/** \file The input checks and launch grids the three mamba kernels share. */
#include <fmt/format.h>

#include "kernel_inputs.h"
#include "nki/mamba.h"

namespace nki::kernels {

MambaDims mamba_dims(const char* kernel, const std::vector<Shape>& shapes, std::int64_t seq_multiple) {
  check_argument_count(kernel, shapes, 5);
  const Shape &delta = shapes[0], &u = shapes[1], &A = shapes[2], &B = shapes[3], &C = shapes[4];
  const bool ranks = delta.size() == 3 && u.size() == 3 && A.size() == 2 && B.size() == 3 && C.size() == 3;
  if (!ranks || u != delta || B != C || A[0] != delta[1] || B[0] != delta[0] || B[1] != A[1] || B[2] != delta[2]) {
    throw UserError("err_input_shape_mismatch", kernel, {},
                    fmt::format("delta {}, u {}, A {}, B {}, C {} must be [batch, channels, seq_len] twice, "
                                "[channels, state_size], then [batch, state_size, seq_len] twice",
                                shape_str(delta), shape_str(u), shape_str(A), shape_str(B), shape_str(C)));
  }
  const MambaDims d{delta[0], delta[1], delta[2], A[1]};
  if (d.channels % 128 != 0 || d.seq_len % seq_multiple != 0) {
    throw UserError("err_input_shape_not_tiled", kernel, {},
                    fmt::format("delta {}: channels must be a multiple of 128 and seq_len a multiple of {}",
                                shape_str(delta), seq_multiple));
  }
  return d;
}

GridSpec mamba_v1_grid(const std::vector<Shape>& shapes) {
  mamba_dims("mamba_v1", shapes, 1);
  return GridSpec{};
}
GridSpec mamba_v2_grid(const std::vector<Shape>& shapes) {
  mamba_dims("mamba_v2", shapes, 1);
  return GridSpec{};
}
GridSpec mamba_v3_grid(const std::vector<Shape>& shapes) { return mamba_v3_grid(kMambaSeqTile, shapes); }

}  // namespace nki::kernels
