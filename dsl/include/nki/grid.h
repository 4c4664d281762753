/** \file Launch grids: plain sizes, spmd_dim and nc, as NKI spells them. */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nki {

/** One factor of a grid axis; `nc` marks a factor spread over that many NeuronCores. */
struct GridFactor {
  std::int64_t size;
  bool nc = false;
  bool operator==(const GridFactor&) const = default;
};

/**
 * One logical grid axis: the row-major product of its factors. Its logical index
 * is i_0 * s_1 * ... + ... + i_last (spmd_dim(a, b): i_a * b + i_b).
 */
struct GridAxis {
  std::vector<GridFactor> factors;

  GridAxis() = default;
  GridAxis(std::int64_t n) : factors{{n, false}} {}  // NOLINT: a plain size is an axis
  explicit GridAxis(std::vector<GridFactor> f) : factors(std::move(f)) {}

  std::int64_t size() const;
  bool operator==(const GridAxis&) const = default;
};

/** A launch grid: kernel[axis0, axis1, ...]. */
struct GridSpec {
  std::vector<GridAxis> axes;

  std::vector<std::int64_t> logical_shape() const;
  std::int64_t instances() const;
  /** Product of the nc factors: the NeuronCores the grid spreads over (1 without nc). */
  std::int64_t nc_cores() const;
  /** NKI spelling, e.g. "spmd_dim(2,nc(2)),4"; parse_grid(str()) == *this. */
  std::string str() const;
  bool operator==(const GridSpec&) const = default;
};

/**
 * Parses NKI's spelling: comma-separated axes, each an integer, `nc(n)`,
 * `spmd_dim(f, f, ...)`, or a product `f * f` of factors. Throws nki::UserError
 * (named err_invalid_grid) quoting the text and what was expected.
 */
GridSpec parse_grid(std::string_view text);

namespace language {

/** nc(n): a grid factor distributed over n NeuronCores. */
struct nc_factor {
  std::int64_t n;
};
inline nc_factor nc(std::int64_t n) { return {n}; }

/** An argument of spmd_dim or of a launch: a size, an nc factor, or an spmd_dim axis. */
struct grid_arg {
  GridAxis axis;
  grid_arg(std::int64_t n) : axis(n) {}                               // NOLINT
  grid_arg(int n) : axis(static_cast<std::int64_t>(n)) {}             // NOLINT
  grid_arg(nc_factor f) : axis(std::vector<GridFactor>{{f.n, true}}) {}  // NOLINT
  grid_arg(GridAxis a) : axis(std::move(a)) {}                        // NOLINT
};

/** spmd_dim(a, b, ...): one logical axis of size a*b*..., factors in row-major order. */
GridAxis spmd_dim(std::initializer_list<grid_arg> factors);
template <class... A>
GridAxis spmd_dim(A... factors) {
  return spmd_dim({grid_arg(factors)...});
}

/** nc(2) * 2 == spmd_dim(nc(2), 2); 2 * nc(2) == spmd_dim(2, nc(2)). */
inline GridAxis operator*(nc_factor a, std::int64_t b) { return spmd_dim(a, b); }
inline GridAxis operator*(std::int64_t a, nc_factor b) { return spmd_dim(a, b); }

}  // namespace language
}  // namespace nki
