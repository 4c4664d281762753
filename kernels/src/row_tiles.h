/** \file How the row-wise kernels share their 128-row tiles among the instances of a launch grid. */
#pragma once

#include <cstdint>

#include "nki/language.h"

namespace nki::kernels {

/**
 * This instance's run of row tiles: with no grid, all ceil(rows / 128) of them; with a grid [g]
 * (e.g. spmd_dim(1, nc(2))), the program_id(0)-th of g runs of ceil(tiles / g) tiles. Tile `first
 * + t` covers rows from (first + t) * 128; rows past the end are masked off by the kernel.
 */
struct RowTiles {
  nki::language::index first;
  std::int64_t count;
};
inline RowTiles row_tiles(std::int64_t rows) {
  namespace nl = nki::language;
  const std::int64_t tiles = (rows + 127) / 128;
  if (nl::program_ndim() == 0) return {nl::index(0), tiles};
  const std::int64_t per = (tiles + nl::num_programs(0) - 1) / nl::num_programs(0);
  return {nl::program_id(0) * per, per};
}

}  // namespace nki::kernels
