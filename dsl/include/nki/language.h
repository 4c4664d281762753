/** \file nki::language (nl): the tile language kernels are written in. */
#pragma once

#include <cstdint>
#include <source_location>
#include <string>

#include "nki/dtype.h"
#include "nki/error.h"
#include "nki/grid.h"
#include "nki/ir/index_expr.h"
#include "nki/shape.h"
#include "nki/tile_limits.h"

namespace nki::language {

using std::source_location;

// ---- dtypes and buffers ----
inline constexpr DType float32 = DType::fp32;
inline constexpr DType bfloat16 = DType::bf16;
inline constexpr DType float16 = DType::fp16;

/** Where ndarray allocates. */
enum class buffer : std::uint8_t { shared_hbm };
inline constexpr buffer shared_hbm = buffer::shared_hbm;

/** nl.tile_size: architecture limits. */
namespace tile_size {
inline constexpr std::int64_t pmax = tile_limits::pmax;
inline constexpr std::int64_t psum_fmax = tile_limits::psum_fmax;
inline constexpr std::int64_t gemm_stationary_fmax = tile_limits::gemm_stationary_fmax;
inline constexpr std::int64_t gemm_moving_fmax = tile_limits::gemm_moving_fmax;
}  // namespace tile_size

// ---- index expressions ----

/** `_` in arange(n)[_, newaxis]: the dimension the arange runs along. */
struct slice_all {};
inline constexpr slice_all _{};
/** `newaxis` in arange(n)[_, newaxis]: a dimension of size 1. */
struct new_axis {};
inline constexpr new_axis newaxis{};

/** An affine index: program ids, expanded aranges and integers combined with + - and * by integers. */
class index {
 public:
  index(std::int64_t c) : e_(ir::IndexExpr::constant_of(c)) {}  // NOLINT: integers are indices
  explicit index(ir::IndexExpr e, SourceLoc where = {}) : e_(std::move(e)), where_(std::move(where)) {}

  const ir::IndexExpr& expr() const { return e_; }
  const Shape& shape() const { return e_.shape; }
  /** Where the program_id or arange this index grew from was written (for messages). */
  const SourceLoc& where() const { return where_; }

  /** Expands a 1-D arange: [_, newaxis] gives shape (n, 1), [newaxis, _] gives (1, n). */
  template <class... S>
    requires((std::is_same_v<S, slice_all> || std::is_same_v<S, new_axis>) && ...)
  index operator[](S...) const {
    return expand({std::is_same_v<S, slice_all>...});
  }

 private:
  index expand(std::initializer_list<bool> is_slice) const;
  ir::IndexExpr e_;
  SourceLoc where_;
};

index operator+(const index& a, const index& b);
index operator+(const index& a, std::int64_t b);
index operator+(std::int64_t a, const index& b);
index operator-(const index& a, const index& b);
index operator-(const index& a, std::int64_t b);
index operator-(std::int64_t a, const index& b);
index operator*(const index& a, std::int64_t k);
index operator*(std::int64_t k, const index& a);

/** The logical index of this instance along grid `axis`. */
index program_id(int axis, source_location loc = source_location::current());
/** The logical grid size along `axis`. */
std::int64_t num_programs(int axis, source_location loc = source_location::current());
/** The total number of instances of the launch. */
std::int64_t num_programs(source_location loc = source_location::current());
/** The grid rank (0 when launched without a grid). */
int program_ndim(source_location loc = source_location::current());
/** 0, 1, ..., n-1 as a 1-D index; expand it with [_, newaxis] or [newaxis, _] before use. */
index arange(std::int64_t n, source_location loc = source_location::current());

/** One subscript of a tensor access; records where the access was written. */
struct index_arg {
  ir::IndexExpr expr;
  source_location loc;
  index_arg(const index& i, source_location l = source_location::current()) : expr(i.expr()), loc(l) {}  // NOLINT
  index_arg(std::int64_t c, source_location l = source_location::current())  // NOLINT
      : expr(ir::IndexExpr::constant_of(c)), loc(l) {}
  index_arg(int c, source_location l = source_location::current())  // NOLINT
      : expr(ir::IndexExpr::constant_of(c)), loc(l) {}
};

// ---- tensors, accesses and tiles (handles into the trace; they hold no data) ----

/** tensor[indices]: a tile-shaped window of a tensor, for load and store. */
struct access {
  int tensor;
  std::vector<ir::IndexExpr> indices;
  source_location loc;
};

/** A tensor in HBM: a kernel argument or an ndarray. */
class tensor {
 public:
  explicit tensor(int id) : id_(id) {}
  int id() const { return id_; }
  Shape shape() const;
  DType dtype() const;

  access operator[](index_arg i0) const { return {id_, {i0.expr}, i0.loc}; }
  access operator[](index_arg i0, index_arg i1) const { return {id_, {i0.expr, i1.expr}, i0.loc}; }
  access operator[](index_arg i0, index_arg i1, index_arg i2) const {
    return {id_, {i0.expr, i1.expr, i2.expr}, i0.loc};
  }
  access operator[](index_arg i0, index_arg i1, index_arg i2, index_arg i3) const {
    return {id_, {i0.expr, i1.expr, i2.expr, i3.expr}, i0.loc};
  }

 private:
  int id_;
};

/** An on-chip tile value (partition dimension first). */
class tile {
 public:
  explicit tile(int id) : id_(id) {}
  int id() const { return id_; }
  Shape shape() const;
  DType dtype() const;

 private:
  int id_;
};

/** An operand of tile arithmetic: a tile or a weakly typed scalar. */
struct operand {
  int tile_id;
  float scalar;
  source_location loc;
  operand(const tile& t, source_location l = source_location::current()) : tile_id(t.id()), scalar(0), loc(l) {}  // NOLINT
  operand(float s, source_location l = source_location::current()) : tile_id(-1), scalar(s), loc(l) {}  // NOLINT
  operand(double s, source_location l = source_location::current())  // NOLINT
      : tile_id(-1), scalar(static_cast<float>(s)), loc(l) {}
  operand(int s, source_location l = source_location::current())  // NOLINT
      : tile_id(-1), scalar(static_cast<float>(s)), loc(l) {}
  operand(std::int64_t s, source_location l = source_location::current())  // NOLINT: num_programs() etc.
      : tile_id(-1), scalar(static_cast<float>(s)), loc(l) {}
};

/** Allocates a tensor; with shared_hbm it is visible to every instance and returned to the caller. */
tensor ndarray(const Shape& shape, DType dtype, buffer buf, const std::string& name = "",
               source_location loc = source_location::current());

/** HBM -> SBUF: the tile at `src`, of the tensor's dtype. */
tile load(const access& src, source_location loc = source_location::current());
/** SBUF -> HBM: writes `value`, rounded to the tensor's dtype, at `dst`. */
void store(const access& dst, const tile& value, source_location loc = source_location::current());

// Elementwise arithmetic: computed in fp32, rounded to the promoted dtype; broadcasts along free dims.
tile add(const operand& a, const operand& b);
tile subtract(const operand& a, const operand& b);
tile multiply(const operand& a, const operand& b);
tile divide(const operand& a, const operand& b);
tile maximum(const operand& a, const operand& b);
tile minimum(const operand& a, const operand& b);

tile operator+(const operand& a, const operand& b);
tile operator-(const operand& a, const operand& b);
tile operator*(const operand& a, const operand& b);
tile operator/(const operand& a, const operand& b);

}  // namespace nki::language
