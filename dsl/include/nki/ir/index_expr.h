/** \file Affine index expressions: the values `program_id`, `arange` and their sums denote. */
#pragma once

#include <climits>
#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "nki/shape.h"

namespace nki::ir {

/** A symbol an index can depend on. */
struct Sym {
  enum class Kind : std::uint8_t {
    program_id,  ///< program_id(index): a runtime value of the launch
    axis,        ///< the coordinate along dimension `index` of the index's shape (from arange)
    loop,        ///< the variable of loop `index` (affine_range / sequential_range)
    rank,        ///< rank_id(): the world rank running the instance, a runtime value (index 0)
  };
  Kind kind;
  int index;
  auto operator<=>(const Sym&) const = default;
};

struct Term {
  Sym sym;
  std::int64_t coeff;
  bool operator==(const Term&) const = default;
};

/**
 * constant + sum(coeff * sym), broadcast over `shape`. Terms are kept sorted by
 * symbol with non-zero coefficients, so equal expressions compare equal.
 */
struct IndexExpr {
  std::int64_t constant = 0;
  std::vector<Term> terms;
  Shape shape;  ///< rank 0 for values that do not vary over the tile
  /// Set while the expression contains an arange that was never expanded with
  /// [_, newaxis] / [newaxis, _]: its size, for the error message.
  std::optional<std::int64_t> unexpanded_arange;

  bool operator==(const IndexExpr&) const = default;

  static IndexExpr constant_of(std::int64_t c);
  static IndexExpr symbol(Sym s, std::int64_t coeff = 1);

  std::int64_t coeff_of(Sym s) const;  ///< 0 when absent
  bool is_constant() const { return terms.empty(); }
};

/** Broadcast of two index or tile shapes (equal rank or rank 0; sizes equal or 1). nullopt if incompatible. */
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

/** Sum a + b. Throws std::invalid_argument when the shapes cannot broadcast. */
IndexExpr add(const IndexExpr& a, const IndexExpr& b);
/** a * k for an integer constant k. */
IndexExpr scale(const IndexExpr& a, std::int64_t k);

/** Canonical text, e.g. "128*pid0 + i0"; `axis_prefix` names the axis symbols. */
std::string to_string(const IndexExpr& e, const char* axis_prefix = "i");

/**
 * The value of `e` for program ids `pid`, loop variables `loop`, tile coordinate `coord`
 * (an axis whose size in e.shape is 1 broadcasts: it contributes 0) and world rank `rank`.
 */
std::int64_t evaluate(const IndexExpr& e, std::span<const std::int64_t> pid, std::span<const std::int64_t> loop,
                      std::span<const std::int64_t> coord, std::int64_t rank = 0);

/** Whether `e` has a term in a symbol of kind `k`. */
bool has_symbol(const IndexExpr& e, Sym::Kind k);
/** `e` with every rank term replaced by its value at `rank` (an MPMD artifact bakes its rank in). */
IndexExpr bake_rank(const IndexExpr& e, std::int64_t rank);

/** Inclusive range of an expression when each symbol ranges over [0, extent(sym)). */
struct IndexRange {
  std::int64_t lo, hi;
};
/// Computed in 128 bits and clamped to 64, so a huge coefficient cannot wrap into range.
template <class ExtentFn>
IndexRange range_of(const IndexExpr& e, ExtentFn extent) {
  __int128 lo = e.constant, hi = e.constant;
  for (const Term& t : e.terms) {
    const __int128 span = static_cast<__int128>(t.coeff) * (extent(t.sym) - 1);
    if (span >= 0) hi += span; else lo += span;
  }
  auto clamp = [](__int128 v) {
    constexpr __int128 lo64 = INT64_MIN, hi64 = INT64_MAX;
    return static_cast<std::int64_t>(v < lo64 ? lo64 : v > hi64 ? hi64 : v);
  };
  return {clamp(lo), clamp(hi)};
}

}  // namespace nki::ir
