/** \file N-dimensional box copies between row-major buffers. */
#include "core/box_copy.h"

#include <cstring>

namespace nki {

void copy_box(ConstBoxBuffer src, const std::vector<std::int64_t>& src_start, BoxBuffer dst,
              const std::vector<std::int64_t>& dst_start, const Shape& box, int elem_bytes) {
  const std::size_t rank = box.size();
  for (std::int64_t b : box)
    if (b <= 0) return;
  if (rank == 0) {
    std::memcpy(dst.data, src.data, static_cast<std::size_t>(elem_bytes));
    return;
  }
  const std::vector<std::int64_t> ss = row_major_strides(src.shape), ds = row_major_strides(dst.shape);
  const auto row_bytes = static_cast<std::size_t>(box[rank - 1] * elem_bytes);
  std::vector<std::int64_t> idx(rank, 0);  // over all but the last dimension
  while (true) {
    std::int64_t so = 0, dof = 0;
    for (std::size_t k = 0; k < rank; ++k) {
      so += (src_start[k] + idx[k]) * ss[k];
      dof += (dst_start[k] + idx[k]) * ds[k];
    }
    std::memcpy(dst.data + dof * elem_bytes, src.data + so * elem_bytes, row_bytes);
    std::size_t k = rank - 1;
    while (k-- > 0) {
      if (++idx[k] < box[k]) break;
      idx[k] = 0;
    }
    if (k == static_cast<std::size_t>(-1)) return;
  }
}

}  // namespace nki
