/** \file nki::language (nl): the tile language kernels are written in. */
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ranges>
#include <source_location>
#include <string>
#include <type_traits>
#include <vector>

#include "nki/dtype.h"
#include "nki/error.h"
#include "nki/grid.h"
#include "nki/ir/kernel_ir.h"
#include "nki/shape.h"
#include "nki/tile_limits.h"

namespace nki::language {

using std::source_location;

// ---- dtypes and buffers ----
inline constexpr DType float32 = DType::fp32;
inline constexpr DType bfloat16 = DType::bf16;
inline constexpr DType float16 = DType::fp16;
inline constexpr DType float8_e4m3 = DType::fp8_e4m3;
inline constexpr DType float8_e5m2 = DType::fp8_e5m2;
inline constexpr DType int8 = DType::int8;
inline constexpr DType int16 = DType::int16;
inline constexpr DType int32 = DType::int32;
inline constexpr DType uint8 = DType::uint8;
inline constexpr DType uint16 = DType::uint16;
inline constexpr DType uint32 = DType::uint32;
inline constexpr DType bool_ = DType::boolean;
inline constexpr DType tfloat32 = DType::tf32;
inline constexpr DType float8_e4m3fn = DType::fp8_e4m3fn;
inline constexpr DType float8_e8m0fnu = DType::fp8_e8m0fnu;
inline constexpr DType float8_e5m2_x4 = DType::fp8_e5m2_x4;
inline constexpr DType float8_e4m3fn_x4 = DType::fp8_e4m3fn_x4;
inline constexpr DType float4_e2m1fn_x4 = DType::fp4_e2m1fn_x4;

/** Where an allocation lives. */
enum class buffer : std::uint8_t { shared_hbm, private_hbm, sbuf, psum };
inline constexpr buffer shared_hbm = buffer::shared_hbm;
inline constexpr buffer private_hbm = buffer::private_hbm;
inline constexpr buffer hbm = buffer::private_hbm;  ///< NKI's alias of private_hbm
inline constexpr buffer sbuf = buffer::sbuf;
inline constexpr buffer psum = buffer::psum;

/** nl.tile_size: architecture limits. */
namespace tile_size {
inline constexpr std::int64_t pmax = tile_limits::pmax;
inline constexpr std::int64_t psum_fmax = tile_limits::psum_fmax;
inline constexpr std::int64_t gemm_stationary_fmax = tile_limits::gemm_stationary_fmax;
inline constexpr std::int64_t gemm_moving_fmax = tile_limits::gemm_moving_fmax;
inline constexpr std::int64_t psum_bank_fmax = tile_limits::psum_fmax;                ///< fp32 elements per bank
inline constexpr std::int64_t psum_bank_fmax_bytes = tile_limits::psum_fmax * 4;      ///< 2 KiB per bank
inline constexpr std::int64_t psum_num_banks = tile_limits::psum_partition_bytes / psum_bank_fmax_bytes;
inline constexpr std::int64_t bn_stats_fmax = tile_limits::bn_stats_fmax;
inline constexpr std::int64_t sbuf_fmax_bytes = tile_limits::sbuf_partition_bytes;    ///< per partition
inline constexpr std::int64_t sbuf_fmax = tile_limits::sbuf_partition_bytes / 4;      ///< fp32 elements per partition
inline constexpr std::int64_t sbuf_size_bytes = tile_limits::sbuf_partition_bytes * tile_limits::pmax;
/** Deprecated in NKI for its misleading name: the usable SBUF bytes of one partition. */
inline constexpr std::int64_t total_available_sbuf_size = tile_limits::sbuf_partition_bytes;
}  // namespace tile_size

/** nl.is_hbm / is_on_chip / is_psum / is_sbuf: what kind of memory a buffer (or a tensor's memory) is. */
constexpr bool is_hbm(buffer b) { return b == buffer::shared_hbm || b == buffer::private_hbm; }
constexpr bool is_psum(buffer b) { return b == buffer::psum; }
constexpr bool is_sbuf(buffer b) { return b == buffer::sbuf; }
constexpr bool is_on_chip(buffer b) { return is_psum(b) || is_sbuf(b); }
inline bool is_hbm(ir::Memory m) { return ir::is_hbm(m); }
inline bool is_psum(ir::Memory m) { return m == ir::Memory::psum; }
inline bool is_sbuf(ir::Memory m) { return m == ir::Memory::sbuf; }
inline bool is_on_chip(ir::Memory m) { return is_psum(m) || is_sbuf(m); }

// ---- index expressions ----

/** `_`: in arange(n)[_, newaxis] the dimension the arange runs along; in t[_, ...] a whole dimension. */
struct slice_all {};
inline constexpr slice_all _{};
/** `newaxis` in arange(n)[_, newaxis]: a dimension of size 1. */
struct new_axis {};
inline constexpr new_axis newaxis{};

class predicate;

/** An affine index: program ids, loop variables, expanded aranges and integers combined with + - and * by integers. */
class index {
 public:
  index(std::int64_t c) : e_(ir::IndexExpr::constant_of(c)) {}  // NOLINT: integers are indices
  index(int c) : e_(ir::IndexExpr::constant_of(c)) {}           // NOLINT
  explicit index(ir::IndexExpr e, SourceLoc where = {}) : e_(std::move(e)), where_(std::move(where)) {}

  const ir::IndexExpr& expr() const { return e_; }
  const Shape& shape() const { return e_.shape; }
  /** Where the program_id, loop or arange this index grew from was written (for messages). */
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
index operator-(const index& a, const index& b);
index operator-(const index& a);
index operator*(const index& a, std::int64_t k);
index operator*(std::int64_t k, const index& a);

/**
 * A mask: affine comparisons of indices combined with `&` (NKI's mask=). `|` is not a mask
 * expression (err_unsupported_expression_in_mask).
 */
class predicate {
 public:
  predicate() = default;
  explicit predicate(ir::Predicate p, SourceLoc where = {}) : p_(std::move(p)), where_(std::move(where)) {}
  const ir::Predicate& ir() const { return p_; }
  const SourceLoc& where() const { return where_; }
  bool empty() const { return p_.empty(); }

 private:
  ir::Predicate p_;
  SourceLoc where_;
};
predicate operator<(const index& a, const index& b);
predicate operator<=(const index& a, const index& b);
predicate operator>(const index& a, const index& b);
predicate operator>=(const index& a, const index& b);
predicate operator==(const index& a, const index& b);
predicate operator!=(const index& a, const index& b);
predicate operator&(const predicate& a, const predicate& b);
/** Masks are conjunctions: `|` does not compile (NKI: err_unsupported_expression_in_mask). */
template <class Never = void>
predicate operator|(const predicate&, const predicate&) {
  static_assert(!std::is_void_v<Never> && false,
                "err_unsupported_expression_in_mask: a mask is a conjunction of affine comparisons joined with &; "
                "| (or) is not supported, split the operation into two masked operations");
  return {};
}

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
/** start, start+1, ..., stop-1 as a 1-D index (NKI: nl.arange(start, stop)); expand it like arange(n). */
index arange(std::int64_t start, std::int64_t stop, source_location loc = source_location::current());

/** nl.mgrid[0:P, 0:F]: a (p, x) pair of indices, p of shape (P, 1) and x of shape (1, F). */
struct mgrid_pair {
  index p, x;
};
struct mgrid_t {
  mgrid_pair operator()(std::int64_t partitions, std::int64_t free,
                        source_location loc = source_location::current()) const;
};
/** Call as nl::mgrid(P, F) (NKI: nl.mgrid[0:P, 0:F]). */
inline constexpr mgrid_t mgrid{};
/** A whole mgrid pair as one subscript: t[g] is t[g.p, g.x] (NKI: t[i] with i = nl.mgrid[0:P, 0:F]). */
struct mgrid_subscript {
  mgrid_pair g;
  source_location loc;
  mgrid_subscript(const mgrid_pair& p, source_location l = source_location::current())  // NOLINT
      : g(p), loc(l) {}
};

/** Basic slicing: `size` consecutive elements from `start` (NKI: nl.ds(start, size) / t[start:start+size]). */
struct ds {
  index start;
  std::int64_t size;
  ds(index s, std::int64_t n) : start(std::move(s)), size(n) {}
};

/** One subscript of a tensor access (an index, an integer, a slice or `_`); records where it was written. */
struct index_arg {
  enum class kind : std::uint8_t { value, slice, all, omitted };  ///< omitted: a trailing dim not written
  kind k;
  ir::IndexExpr expr;  ///< value: the index; slice: its start
  std::int64_t size = 0;
  source_location loc;
  index_arg(const index& i, source_location l = source_location::current())  // NOLINT
      : k(kind::value), expr(i.expr()), loc(l) {}
  index_arg(std::int64_t c, source_location l = source_location::current())  // NOLINT
      : k(kind::value), expr(ir::IndexExpr::constant_of(c)), loc(l) {}
  index_arg(int c, source_location l = source_location::current())  // NOLINT
      : k(kind::value), expr(ir::IndexExpr::constant_of(c)), loc(l) {}
  index_arg(const ds& s, source_location l = source_location::current())  // NOLINT
      : k(kind::slice), expr(s.start.expr()), size(s.size), loc(l) {}
  index_arg(slice_all, source_location l = source_location::current())  // NOLINT
      : k(kind::all), loc(l) {}
  index_arg(kind omitted, source_location l) : k(omitted), loc(l) {}
};

// ---- tensors, accesses and tiles (handles into the trace; they hold no data) ----

class tile;
struct operand;

/**
 * tensor[indices]: a tile-shaped window of a tensor. Load and store it; an on-chip window
 * is also an operand (a read), and `window = value` / `window += value` write it.
 */
class access {
 public:
  access(int tensor, std::vector<index_arg> subscripts, source_location loc)
      : tensor_(tensor), subscripts_(std::move(subscripts)), loc_(loc) {}
  access(const access&) = default;
  int tensor() const { return tensor_; }
  const std::vector<index_arg>& subscripts() const { return subscripts_; }
  const source_location& loc() const { return loc_; }

  /** Writes `value` into this window (an on-chip array). */
  access& operator=(const operand& value);
  access& operator=(const access& value);
  access& operator=(const tile& value);
  /** Accumulates `value` into this window (PSUM, fp32 add): psum[...] += nl::matmul(...). */
  access& operator+=(const operand& value);

 private:
  int tensor_;
  std::vector<index_arg> subscripts_;
  source_location loc_;
};

/** A tensor: a kernel argument, an HBM ndarray, or an on-chip array (sbuf / psum). */
class tensor {
 public:
  explicit tensor(int id) : id_(id) {}
  int id() const { return id_; }
  Shape shape() const;
  DType dtype() const;
  ir::Memory memory() const;

  access operator[](index_arg i0) const { return {id_, {i0}, i0.loc}; }
  access operator[](const mgrid_subscript& g) const {
    return {id_, {index_arg(g.g.p, g.loc), index_arg(g.g.x, g.loc)}, g.loc};
  }
  access operator[](index_arg i0, index_arg i1) const { return {id_, {i0, i1}, i0.loc}; }
  access operator[](index_arg i0, index_arg i1, index_arg i2) const { return {id_, {i0, i1, i2}, i0.loc}; }
  access operator[](index_arg i0, index_arg i1, index_arg i2, index_arg i3) const {
    return {id_, {i0, i1, i2, i3}, i0.loc};
  }
  access operator[](index_arg i0, index_arg i1, index_arg i2, index_arg i3, index_arg i4) const {
    return {id_, {i0, i1, i2, i3, i4}, i0.loc};
  }
  /** The whole tensor (t[...] in NKI). */
  access all(source_location loc = source_location::current()) const { return {id_, {}, loc}; }
  /**
   * tensor.reshape: a tensor over the same HBM storage with `shape` (the same element count),
   * row-major; no data is copied, and writes through it are writes of this tensor.
   */
  tensor reshape(const Shape& shape, source_location loc = source_location::current()) const;
  /**
   * tensor.view(dtype): the same HBM bytes read as `dtype`; the last dimension scales by the ratio
   * of the element sizes (fp32 -> uint8: x4; uint8 -> fp32: /4, which must divide it).
   */
  tensor view(DType dtype, source_location loc = source_location::current()) const;

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

  /**
   * A window of the tile, numpy's basic indexing: tile[nl::ds(0, 128), 511] is the last
   * column as a [128] tile, tile[_, nl::ds(s, 512)] a [P, 512] slice. Subscripts are
   * integers, affine scalar indices, slices or `_`; trailing dimensions not written are whole.
   */
  tile operator[](index_arg i0) const { return subscript({i0}); }
  tile operator[](index_arg i0, index_arg i1) const { return subscript({i0, i1}); }
  tile operator[](index_arg i0, index_arg i1, index_arg i2) const { return subscript({i0, i1, i2}); }
  tile operator[](index_arg i0, index_arg i1, index_arg i2, index_arg i3) const {
    return subscript({i0, i1, i2, i3});
  }
  /** The tile broadcast to `shape` (same rank; each dimension equal or from size 1), as tile.broadcast_to in NKI. */
  tile broadcast_to(const Shape& shape, source_location loc = source_location::current()) const;

 private:
  tile subscript(std::vector<index_arg> subscripts) const;
  int id_;
};

/** An operand of tile arithmetic: a tile, an on-chip window (read where it is used), or a weakly typed scalar. */
struct operand {
  int tile_id;
  double scalar;
  bool scalar_is_float;
  source_location loc;
  operand(const tile& t, source_location l = source_location::current())  // NOLINT
      : tile_id(t.id()), scalar(0), scalar_is_float(true), loc(l) {}
  operand(const access& a, source_location l = source_location::current());  // NOLINT
  operand(const tensor& t, source_location l = source_location::current());  // NOLINT
  operand(float s, source_location l = source_location::current())  // NOLINT
      : tile_id(-1), scalar(s), scalar_is_float(true), loc(l) {}
  operand(double s, source_location l = source_location::current())  // NOLINT
      : tile_id(-1), scalar(s), scalar_is_float(true), loc(l) {}
  operand(int s, source_location l = source_location::current())  // NOLINT
      : tile_id(-1), scalar(s), scalar_is_float(false), loc(l) {}
  operand(std::int64_t s, source_location l = source_location::current())  // NOLINT: num_programs() etc.
      : tile_id(-1), scalar(static_cast<double>(s)), scalar_is_float(false), loc(l) {}
  bool is_scalar() const { return tile_id < 0; }
};

// ---- allocation ----

/** nl.par_dim(n): marks the partition dimension of a multi-dimensional on-chip array. */
struct par_dim {
  std::int64_t size;
  explicit par_dim(std::int64_t n) : size(n) {}
};
/** A dimension of an allocation: a size, or par_dim(size). */
struct dim {
  std::int64_t size;
  bool partition = false;
  dim(std::int64_t n) : size(n) {}                        // NOLINT
  dim(int n) : size(n) {}                                 // NOLINT
  dim(par_dim p) : size(p.size), partition(true) {}       // NOLINT
};
/** The shape of an allocation: {4, par_dim(128), 512} or a Shape. Without par_dim the partition dim is 0. */
struct shape_spec {
  std::vector<dim> dims;
  shape_spec(std::initializer_list<dim> d) : dims(d) {}  // NOLINT
  shape_spec(const Shape& s) {                           // NOLINT
    for (std::int64_t n : s) dims.emplace_back(n);
  }
};

/** Allocates a tensor; shared_hbm is visible to every instance and returned to the caller. */
tensor ndarray(const shape_spec& shape, DType dtype, buffer buf = sbuf, const std::string& name = "",
               source_location loc = source_location::current());
tensor zeros(const shape_spec& shape, DType dtype, buffer buf = sbuf, const std::string& name = "",
             source_location loc = source_location::current());
tensor ones(const shape_spec& shape, DType dtype, buffer buf = sbuf, const std::string& name = "",
            source_location loc = source_location::current());
tensor full(const shape_spec& shape, double value, DType dtype, buffer buf = sbuf, const std::string& name = "",
            source_location loc = source_location::current());
/** What *_like takes its shape and dtype from (it reads no data): a tensor or a tile. */
struct like_source {
  int tensor_id = -1, tile_id = -1;
  like_source(const tensor& t) : tensor_id(t.id()) {}  // NOLINT
  like_source(const tile& t) : tile_id(t.id()) {}      // NOLINT
};
tensor ndarray_like(const like_source& like, buffer buf = sbuf, source_location loc = source_location::current());
/**
 * nl.shared_constant: a read-only HBM tensor holding host values (row-major, `shape`), each
 * converted to `dtype` (round to nearest even, as .npy input). The values travel in the IR
 * and are bound at launch like an argument; load it with nl::load.
 */
tensor shared_constant(const Shape& shape, const std::vector<double>& values, DType dtype,
                       source_location loc = source_location::current());
tensor zeros_like(const like_source& like, buffer buf = sbuf, source_location loc = source_location::current());
tensor ones_like(const like_source& like, buffer buf = sbuf, source_location loc = source_location::current());
tensor full_like(const like_source& like, double value, buffer buf = sbuf,
                 source_location loc = source_location::current());
/** nl.empty_like: an uninitialized tensor of the shape and dtype of `like` (ndarray_like under NKI's newer name). */
tensor empty_like(const like_source& like, buffer buf = sbuf, source_location loc = source_location::current());
/**
 * nl.shared_identity_matrix(n, dtype): the [n, n] identity as an SBUF tile (uint8 unless told), as
 * NKI's (a constant in SBUF); built on chip from an iota of p - f compared with 0, so the
 * kernel carries no values and one n serves every dtype.
 */
tile shared_identity_matrix(std::int64_t n, DType dtype = DType::uint8, source_location loc = source_location::current());

// ---- loops ----

/**
 * A traced loop: the body runs once during tracing with a symbolic loop variable.
 * affine_range: iterations independent (only PSUM += accumulation may repeat a location);
 * sequential_range: iterations in order, carried dependencies allowed.
 */
class loop_range {
 public:
  /** Python's range(start, stop, step): the variable takes start, start + step, ... short of stop. */
  loop_range(ir::LoopKind kind, std::int64_t start, std::int64_t stop, std::int64_t step, source_location loc);
  ~loop_range();
  loop_range(const loop_range&) = delete;
  loop_range& operator=(const loop_range&) = delete;

  struct sentinel {};
  /** The range-for's one pass: begin() and ++ tell the trace where the loop body starts and ends. */
  struct iterator {
    const loop_range* r;
    bool done = false;
    index operator*() const { return r->var_; }
    iterator& operator++();
    bool operator!=(sentinel) const { return !done; }
  };
  iterator begin() const;
  sentinel end() const { return {}; }

 private:
  index var_;
  int loop_ = -1;
  void* trace_ = nullptr;
};
inline loop_range affine_range(std::int64_t n, source_location loc = source_location::current()) {
  return loop_range(ir::LoopKind::affine, 0, n, 1, loc);
}
/** affine_range(start, stop[, step]): as Python's range; the loop variable is start + step * i. */
inline loop_range affine_range(std::int64_t start, std::int64_t stop, std::int64_t step = 1,
                               source_location loc = source_location::current()) {
  return loop_range(ir::LoopKind::affine, start, stop, step, loc);
}
inline loop_range sequential_range(std::int64_t n, source_location loc = source_location::current()) {
  return loop_range(ir::LoopKind::sequential, 0, n, 1, loc);
}
inline loop_range sequential_range(std::int64_t start, std::int64_t stop, std::int64_t step = 1,
                                   source_location loc = source_location::current()) {
  return loop_range(ir::LoopKind::sequential, start, stop, step, loc);
}
/** The number of values range(start, stop, step) yields; a step of 0 is err_invalid_loop_range. */
std::int64_t range_trip_count(const char* op, std::int64_t start, std::int64_t stop, std::int64_t step,
                              source_location loc);
/** Unrolled at trace time: the body is traced once per iteration with a plain integer. */
inline auto static_range(std::int64_t n) { return std::views::iota(std::int64_t{0}, std::max<std::int64_t>(n, 0)); }
/** static_range(start, stop[, step]): as Python's range, unrolled at trace time. */
inline auto static_range(std::int64_t start, std::int64_t stop, std::int64_t step = 1,
                         source_location loc = source_location::current()) {
  const std::int64_t n = range_trip_count("static_range", start, stop, step, loc);
  return std::views::iota(std::int64_t{0}, n) |
         std::views::transform([start, step](std::int64_t i) { return start + step * i; });
}

// ---- data movement ----

struct load_options {
  predicate mask;
  std::optional<DType> dtype;  ///< convert while loading
};
struct store_options {
  predicate mask;
};
/** Options of compute ops: the result dtype (default: promotion of the operands) and a mask. */
struct op_options {
  std::optional<DType> dtype;
  predicate mask;
};

/** HBM -> SBUF: the tile at `src`, of the tensor's dtype (or options.dtype). */
tile load(const access& src, const load_options& o = {}, source_location loc = source_location::current());
tile load(const tensor& src, const load_options& o = {}, source_location loc = source_location::current());
/** SBUF -> HBM: writes `value`, rounded to the tensor's dtype, at `dst`. */
void store(const access& dst, const operand& value, const store_options& o = {},
           source_location loc = source_location::current());
/** nl.copy: the value (of an on-chip window too), converted to `dtype` if given. */
tile copy(const operand& x, const op_options& o = {}, source_location loc = source_location::current());

/** nl.expand_dims: a view of tile `x` with a dimension of size 1 inserted at `axis` (1 ... rank: partitions stay first). */
tile expand_dims(const operand& x, int axis, source_location loc = source_location::current());
/** nl.broadcast_to: `x` broadcast to `shape` (numpy rules, same rank), converted to `dtype` if given. */
tile broadcast_to(const operand& x, const Shape& shape, const op_options& o = {},
                  source_location loc = source_location::current());

// ---- elementwise ----

/** A binary elementwise function (nl.add, ...): callable, and usable as isa::tensor_tensor's op. */
struct binary_fn {
  ir::BinaryKind kind;
  tile operator()(const operand& a, const operand& b, const op_options& o = {},
                  source_location loc = source_location::current()) const;
};
inline constexpr binary_fn add{ir::BinaryKind::add};
inline constexpr binary_fn subtract{ir::BinaryKind::subtract};
inline constexpr binary_fn multiply{ir::BinaryKind::multiply};
inline constexpr binary_fn divide{ir::BinaryKind::divide};
inline constexpr binary_fn maximum{ir::BinaryKind::maximum};
inline constexpr binary_fn minimum{ir::BinaryKind::minimum};
inline constexpr binary_fn power{ir::BinaryKind::power};
inline constexpr binary_fn equal{ir::BinaryKind::equal};
inline constexpr binary_fn not_equal{ir::BinaryKind::not_equal};
inline constexpr binary_fn greater{ir::BinaryKind::greater};
inline constexpr binary_fn greater_equal{ir::BinaryKind::greater_equal};
inline constexpr binary_fn less{ir::BinaryKind::less};
inline constexpr binary_fn less_equal{ir::BinaryKind::less_equal};
inline constexpr binary_fn logical_and{ir::BinaryKind::logical_and};
inline constexpr binary_fn logical_or{ir::BinaryKind::logical_or};
inline constexpr binary_fn logical_xor{ir::BinaryKind::logical_xor};
/** Bitwise ops: integer tiles and integer scalars only, computed in the result dtype (an integer type). */
inline constexpr binary_fn bitwise_and{ir::BinaryKind::bitwise_and};
inline constexpr binary_fn bitwise_or{ir::BinaryKind::bitwise_or};
inline constexpr binary_fn bitwise_xor{ir::BinaryKind::bitwise_xor};
inline constexpr binary_fn left_shift{ir::BinaryKind::left_shift};
inline constexpr binary_fn right_shift{ir::BinaryKind::right_shift};
inline constexpr binary_fn abs_max{ir::BinaryKind::abs_max};
inline constexpr binary_fn abs_min{ir::BinaryKind::abs_min};
inline constexpr binary_fn fmod{ir::BinaryKind::fmod};
inline constexpr binary_fn mod{ir::BinaryKind::mod};
/** nl.average: (x + y) / 2 element-wise; as the op of isa::tensor_partition_reduce, the mean. */
inline constexpr binary_fn average{ir::BinaryKind::average};
/** nl.bypass: x unchanged (y ignored); as op0 or op1 of a two-op instruction, a stage that does nothing. */
inline constexpr binary_fn bypass{ir::BinaryKind::bypass};

/** nl.invert: bitwise NOT of an integer tile (XOR with all ones of the result dtype). */
tile invert(const operand& x, const op_options& o = {}, source_location loc = source_location::current());
/** nl.logical_not: XOR of the truth value with 1, so 1 where x is 0 and 0 elsewhere (NaN is true). */
tile logical_not(const operand& x, const op_options& o = {}, source_location loc = source_location::current());
/** nl.prelu: x > 0 ? x : alpha * x, alpha a scalar or a tile; on the Scalar engine as an activation. */
tile prelu(const operand& x, const operand& alpha, const op_options& o = {},
           source_location loc = source_location::current());

/** A unary activation (nl.exp, ...): callable, and usable as isa::activation's op. */
struct unary_fn {
  ir::ActKind kind;
  tile operator()(const operand& x, const op_options& o = {}, source_location loc = source_location::current()) const;
};
inline constexpr unary_fn exp{ir::ActKind::exp};
inline constexpr unary_fn log{ir::ActKind::log};
inline constexpr unary_fn tanh{ir::ActKind::tanh};
inline constexpr unary_fn sigmoid{ir::ActKind::sigmoid};
inline constexpr unary_fn relu{ir::ActKind::relu};
inline constexpr unary_fn gelu{ir::ActKind::gelu};
inline constexpr unary_fn sqrt{ir::ActKind::sqrt};
inline constexpr unary_fn rsqrt{ir::ActKind::rsqrt};
inline constexpr unary_fn reciprocal{ir::ActKind::reciprocal};
inline constexpr unary_fn abs{ir::ActKind::abs};
inline constexpr unary_fn negative{ir::ActKind::negative};
inline constexpr unary_fn square{ir::ActKind::square};
inline constexpr unary_fn sin{ir::ActKind::sin};
inline constexpr unary_fn cos{ir::ActKind::cos};
inline constexpr unary_fn tan{ir::ActKind::tan};
inline constexpr unary_fn arctan{ir::ActKind::arctan};
inline constexpr unary_fn floor{ir::ActKind::floor};
inline constexpr unary_fn ceil{ir::ActKind::ceil};
inline constexpr unary_fn trunc{ir::ActKind::trunc};
inline constexpr unary_fn sign{ir::ActKind::sign};
inline constexpr unary_fn erf{ir::ActKind::erf};
inline constexpr unary_fn erf_dx{ir::ActKind::erf_dx};
inline constexpr unary_fn silu{ir::ActKind::silu};
inline constexpr unary_fn silu_dx{ir::ActKind::silu_dx};
inline constexpr unary_fn gelu_dx{ir::ActKind::gelu_dx};
inline constexpr unary_fn gelu_apprx_tanh{ir::ActKind::gelu_apprx_tanh};
inline constexpr unary_fn gelu_apprx_sigmoid{ir::ActKind::gelu_apprx_sigmoid};
inline constexpr unary_fn gelu_apprx_sigmoid_dx{ir::ActKind::gelu_apprx_sigmoid_dx};
inline constexpr unary_fn mish{ir::ActKind::mish};
inline constexpr unary_fn softplus{ir::ActKind::softplus};

tile operator+(const operand& a, const operand& b);
tile operator-(const operand& a, const operand& b);
tile operator*(const operand& a, const operand& b);
tile operator/(const operand& a, const operand& b);

/** nl.where: cond ? x : y elementwise (cond non-zero is true). */
tile where(const operand& cond, const operand& x, const operand& y, const op_options& o = {},
           source_location loc = source_location::current());

// ---- reductions (free axes only) ----

/** The axes of a reduction: one axis or a list. */
struct axes {
  std::vector<int> list;
  axes(int a) : list{a} {}                            // NOLINT
  axes(std::initializer_list<int> l) : list(l) {}     // NOLINT
};
struct reduce_options {
  std::optional<DType> dtype;
  predicate mask;
  bool keepdims = false;
};
tile sum(const operand& x, const axes& a, const reduce_options& o = {}, source_location loc = source_location::current());
tile max(const operand& x, const axes& a, const reduce_options& o = {}, source_location loc = source_location::current());
tile min(const operand& x, const axes& a, const reduce_options& o = {}, source_location loc = source_location::current());
tile mean(const operand& x, const axes& a, const reduce_options& o = {},
          source_location loc = source_location::current());
tile prod(const operand& x, const axes& a, const reduce_options& o = {},
          source_location loc = source_location::current());
/** numpy's var (mean of squared deviations from the mean); as NKI, the result keeps the reduced axes (size 1). */
tile var(const operand& x, const axes& a, const reduce_options& o = {}, source_location loc = source_location::current());
/** 1 where every element along the axes is non-zero (NaN counts as non-zero), else 0. */
tile all(const operand& x, const axes& a, const reduce_options& o = {}, source_location loc = source_location::current());

// ---- composites (traced as the ops above; docs/reference.md lists the sequence) ----

struct softmax_options {
  std::optional<DType> dtype;  ///< of the result (default: x's); the steps run in fp32
};
/** exp(x - max(x)) / sum(exp(x - max(x))) along `a` (default: the last axis); the max is subtracted for range. */
tile softmax(const operand& x, const axes& a = -1, const softmax_options& o = {},
             source_location loc = source_location::current());
struct rms_norm_options {
  double epsilon = 1e-6;
  std::optional<DType> dtype;          ///< of the result (default: x's)
  std::optional<DType> compute_dtype;  ///< of the intermediate tiles (default: fp32)
};
/** x / sqrt(sum(x * x, axis) / n + epsilon) * w; w broadcasts along free dims like a binary operand. */
tile rms_norm(const operand& x, const operand& w, const axes& a, std::int64_t n, const rms_norm_options& o = {},
              source_location loc = source_location::current());

// ---- random numbers (dsl/src/random.cpp: a counter-based generator traced as bitwise ops) ----

/** nl.rand: a tile of uniform values in [0, 1) of a float dtype, in SBUF (default) or PSUM. */
tile rand(const Shape& shape, DType dtype, buffer buf = sbuf, source_location loc = source_location::current());
/** nl.random_seed: seeds the generator of nl::rand and nl::dropout from a [1, 1] 32-bit integer tile. */
void random_seed(const operand& seed, source_location loc = source_location::current());
/**
 * nl.dropout: x with each element replaced by 0 with probability `rate` (a scalar or a [P, 1]
 * tile), the kept elements unchanged (NKI does not rescale them); converted to o.dtype if given.
 */
tile dropout(const operand& x, const operand& rate, const op_options& o = {},
             source_location loc = source_location::current());

// ---- matmul and transpose ----

/**
 * x @ y into PSUM (fp32). With transpose_x, x is already [K, M] (the stationary operand);
 * otherwise x is [M, K] and is transposed first. y is [K, N].
 */
tile matmul(const operand& x, const operand& y, bool transpose_x = false, const op_options& o = {},
            source_location loc = source_location::current());
/** The 2-D transpose of a tile ([P, F] -> [F, P], F <= 128), into SBUF. */
tile transpose(const operand& x, const op_options& o = {}, source_location loc = source_location::current());

}  // namespace nki::language

/** nki.isa: instruction-level ops. */
namespace nki::isa {

namespace nl = nki::language;

/** nisa.engine: where NKI lets the author pick the engine of an instruction (unknown: the default). */
enum class engine : std::uint8_t { unknown, tensor, vector, scalar, gpsimd };
inline constexpr engine unknown_engine = engine::unknown;
inline constexpr engine tensor_engine = engine::tensor;
inline constexpr engine vector_engine = engine::vector;
inline constexpr engine scalar_engine = engine::scalar;
inline constexpr engine gpsimd_engine = engine::gpsimd;

/** nisa.nc_version: a NeuronCore generation (gen2: trn1/inf2, gen3: trn2, gen4: trn3). */
enum class nc_version : std::uint8_t { gen2 = 2, gen3 = 3, gen4 = 4 };
/**
 * nisa.get_nc_version: the generation of the target the kernel is being traced for (a launch's
 * device, `--target` of profile/compile), for a body that adapts to it. Asking makes the trace
 * depend on it: the IR records the answer, so the artifact is keyed by it too.
 */
isa::nc_version get_nc_version(std::source_location loc = std::source_location::current());
/** nisa.get_nc_sub_version: the silicon revision within the generation; every simulated target is its first (0). */
int get_nc_sub_version(std::source_location loc = std::source_location::current());

/** nisa.reduce_cmd: what an accumulating instruction does with its engine's reduce registers. */
enum class reduce_cmd : std::uint8_t { idle, reset, reduce, reset_reduce, load_reduce };

/** Options of an instruction whose engine the author may pick. */
struct engine_options {
  std::optional<DType> dtype;
  nl::predicate mask;
  isa::engine engine = isa::engine::unknown;
};

/** nisa.matmul_perf_mode: none, or double_row (NeuronCore-v3+: fp8 pairs, twice the rows per pass). */
enum class matmul_perf_mode : std::uint8_t { none, double_row };
/** Options of isa::nc_matmul. */
struct nc_matmul_options {
  std::optional<DType> dtype;  ///< the PSUM result: fp32 (the default; others are refused)
  nl::predicate mask;
  isa::matmul_perf_mode perf_mode = isa::matmul_perf_mode::none;
  /// Transpose mode (NeuronCore-v3+): bit-accurate data movement, stationary^T for an identity
  /// moving operand, in the stationary dtype. On NeuronCore-v2 an ordinary matmul.
  bool is_transpose = false;
  /// Tiling mode: {start_row, start_column} and {row_size, column_size} of the PE array, both set
  /// or neither (the whole 128x128 array); they change timing, not values.
  std::vector<std::int64_t> tile_position, tile_size;
  /// Hints that an operand holds only ones and zeros (timing only: an fp32 operand streams 2x faster).
  bool is_stationary_onezero = false, is_moving_onezero = false;
};
/**
 * stationary^T @ moving into PSUM (fp32): stationary [K, M<=128], moving [K, N<=512], K <= 128.
 * With perf_mode double_row (fp8 operands, NeuronCore-v3+): stationary [K, 2, M] and moving
 * [K, 2, N], a contraction over 2K rows in the time of K.
 */
nl::tile nc_matmul(const nl::operand& stationary, const nl::operand& moving, const nc_matmul_options& o = {},
                   std::source_location loc = std::source_location::current());
/**
 * The transpose [P, F] -> [F, P]: on the Tensor engine (default, up to [128, 128], into PSUM)
 * or, with engine = vector_engine, on the Vector engine (up to [32, 32], into SBUF).
 */
nl::tile nc_transpose(const nl::operand& x, const engine_options& o = {},
                      std::source_location loc = std::source_location::current());

/** Options of isa::activation: the result dtype and mask, and the reduction of the activated values. */
struct activation_options {
  std::optional<DType> dtype;
  nl::predicate mask;
  std::optional<nl::binary_fn> reduce_op;  ///< nl::add: sum the activated fp32 values per partition
  std::optional<nl::access> reduce_res;    ///< where the [P, 1] reduction goes
  isa::reduce_cmd reduce_cmd = isa::reduce_cmd::idle;
};
/**
 * op(data * scale + bias) on the Scalar engine; bias and scale are scalars or [P, 1] tiles.
 * With reduce_op, reduce_res and reduce_cmd = reset_reduce, the same instruction also writes
 * the sum of the fp32 activated values of each partition into reduce_res.
 */
nl::tile activation(const nl::unary_fn& op, const nl::operand& data, const nl::operand& bias = 0.0,
                    const nl::operand& scale = 1.0, const activation_options& o = {},
                    std::source_location loc = std::source_location::current());
/** isa.activation_reduce: activation with reduce_cmd = reset_reduce, the reduction written to reduce_res. */
nl::tile activation_reduce(const nl::unary_fn& op, const nl::operand& data, const nl::binary_fn& reduce_op,
                           const nl::access& reduce_res, const nl::operand& bias = 0.0, const nl::operand& scale = 1.0,
                           const nl::op_options& o = {}, std::source_location loc = std::source_location::current());
/** op(data, data2) elementwise on the Vector engine (or GpSimd). */
nl::tile tensor_tensor(const nl::operand& data1, const nl::operand& data2, const nl::binary_fn& op,
                       const engine_options& o = {}, std::source_location loc = std::source_location::current());
/** (data op0 operand0) op1 operand1, in fp32 throughout; operands are scalars or [P, 1] tiles. */
nl::tile tensor_scalar(const nl::operand& data, const nl::binary_fn& op0, const nl::operand& operand0,
                       const engine_options& o = {}, std::source_location loc = std::source_location::current());
nl::tile tensor_scalar(const nl::operand& data, const nl::binary_fn& op0, const nl::operand& operand0,
                       const nl::binary_fn& op1, const nl::operand& operand1, const engine_options& o = {},
                       std::source_location loc = std::source_location::current());
/** Options of isa::scalar_tensor_tensor: the reversals of NKI (operand op data instead of data op operand). */
struct scalar_tensor_tensor_options {
  std::optional<DType> dtype;
  nl::predicate mask;
  bool reverse0 = false, reverse1 = false;
};
/**
 * (data op0 operand0) op1 operand1 on the Vector engine: operand0 a scalar or [P, 1] tile,
 * operand1 a tile of data's shape; the intermediate stays fp32 (isa.scalar_tensor_tensor).
 */
nl::tile scalar_tensor_tensor(const nl::operand& data, const nl::binary_fn& op0, const nl::operand& operand0,
                              const nl::binary_fn& op1, const nl::operand& operand1,
                              const scalar_tensor_tensor_options& o = {},
                              std::source_location loc = std::source_location::current());
/** Options of isa::tensor_scalar_reduce. */
struct tensor_scalar_reduce_options {
  std::optional<DType> dtype;
  nl::predicate mask;
  isa::reduce_cmd reduce_cmd = isa::reduce_cmd::reset_reduce;
  bool reduce_res_negate = false;  ///< reduce_res gets -reduction
};
/**
 * data op0 operand0 on the Vector engine, and in the same instruction reduce_op (add,
 * multiply, maximum, minimum) of the fp32 results over all free axes into reduce_res [P, 1].
 */
nl::tile tensor_scalar_reduce(const nl::operand& data, const nl::binary_fn& op0, const nl::operand& operand0,
                              const nl::binary_fn& reduce_op, const nl::access& reduce_res,
                              const tensor_scalar_reduce_options& o = {},
                              std::source_location loc = std::source_location::current());
/** A reduction on the Vector engine: op is nl::add (sum), nl::maximum or nl::minimum. */
nl::tile tensor_reduce(const nl::operand& data, const nl::binary_fn& op, const nl::axes& axis, bool keepdims = false,
                       const nl::op_options& o = {}, std::source_location loc = std::source_location::current());
/** Options of isa::tensor_reduce in NKI's argument order. */
struct tensor_reduce_options {
  bool negate = false;  ///< the result times -1 (arithmetic ops only)
  bool keepdims = false;
  std::optional<DType> dtype;
  nl::predicate mask;
};
/** isa.tensor_reduce(op, data, axis, negate=, keepdims=): NKI's argument order; axes are the last free axes. */
nl::tile tensor_reduce(const nl::binary_fn& op, const nl::operand& data, const nl::axes& axis,
                       const tensor_reduce_options& o = {}, std::source_location loc = std::source_location::current());
/** A copy of an on-chip tile on the Vector (default), Scalar or GpSimd engine, converted to dtype. */
nl::tile tensor_copy(const nl::operand& src, const engine_options& o = {},
                     std::source_location loc = std::source_location::current());
/** 1 / x elementwise on the Vector engine. */
nl::tile reciprocal(const nl::operand& data, const nl::op_options& o = {},
                    std::source_location loc = std::source_location::current());
/** Options of isa::exponential. */
struct exponential_options {
  std::optional<DType> dtype;
  nl::predicate mask;
  std::optional<nl::access> reduce_res;  ///< the per-partition sum of the results (fp32)
  isa::reduce_cmd reduce_cmd = isa::reduce_cmd::idle;
};
/** exp(src - max_value) on the Vector engine; max_value is a scalar or a [P, 1] tile. */
nl::tile exponential(const nl::operand& src, const nl::operand& max_value = 0.0, const exponential_options& o = {},
                     std::source_location loc = std::source_location::current());
/** The value of an affine expression over the tile, e.g. iota(i_p * 512 + i_f, int32). */
nl::tile iota(const nl::index& expr, DType dtype, const nl::op_options& o = {},
              std::source_location loc = std::source_location::current());
/** pred ? on_true : on_false_value, with an affine predicate (isa.affine_select). */
nl::tile affine_select(const nl::predicate& pred, const nl::operand& on_true, const nl::operand& on_false_value,
                       const nl::op_options& o = {}, std::source_location loc = std::source_location::current());
/** Keyword arguments of isa::tensor_tensor_scan. */
struct scan_options {
  bool reverse0 = false;  ///< op0(carry, data0) instead of op0(data0, carry)
  bool reverse1 = false;  ///< op1(data1, x) instead of op1(x, data1)
  std::optional<DType> dtype;
};
/**
 * isa.tensor_tensor_scan on the Vector engine: per partition, along the free axis,
 * result[:, i] = op1(op0(data0[:, i], result[:, i-1]), data1[:, i]) with result[:, -1] =
 * initial (a scalar or a [P, 1] tile). data0 and data1 are [P, F] tiles, not both in PSUM;
 * fp32 math, the result rounded to o.dtype (default: the promoted dtype of data0 and data1).
 */
nl::tile tensor_tensor_scan(const nl::operand& data0, const nl::operand& data1, const nl::operand& initial,
                            const nl::binary_fn& op0, const nl::binary_fn& op1, const scan_options& o = {},
                            std::source_location loc = std::source_location::current());
// ---- ISA ops composed of the ops above (isa_composites.cpp; docs/reference.md lists the sequences) ----

/** The 8 largest values of each partition of a [P, F] tile (8 <= F <= 16384), descending, as [P, 8]; fp32 inside. */
nl::tile max8(const nl::operand& src, const nl::op_options& o = {},
              std::source_location loc = std::source_location::current());
/**
 * For each of the 8 values of each partition of vals ([P, 8]), the index of its first
 * occurrence in data ([P, F], 8 <= F <= 16384), as [P, 8] uint32 (or uint16); a value not
 * found gives all ones. Duplicate vals take successive matching positions in ascending order.
 */
nl::tile nc_find_index8(const nl::operand& data, const nl::operand& vals, const nl::op_options& o = {},
                        std::source_location loc = std::source_location::current());
/** Options of isa::nc_match_replace8. */
struct match_replace8_options {
  std::optional<DType> dtype;
  std::optional<nl::access> dst_idx;  ///< where the [P, 8] uint32 indices of the matches go
};
/**
 * data with the first occurrence of each of the 8 vals of its partition replaced by imm.
 * Duplicate vals are matched from vals[7] down, so the first matching position lands in the
 * highest dst_idx column of the duplicates.
 */
nl::tile nc_match_replace8(const nl::operand& data, const nl::operand& vals, double imm,
                           const match_replace8_options& o = {},
                           std::source_location loc = std::source_location::current());
/** Options of isa::tensor_scalar_cumulative. */
struct cumulative_options {
  bool reverse0 = false;  ///< op0(imm0, src) instead of op0(src, imm0)
  isa::reduce_cmd reduce_cmd = isa::reduce_cmd::reset_reduce;
  std::optional<DType> dtype;
};
/**
 * Along the free axis of each partition: reg = op1(op0(src[i], imm0), reg), dst[i] = reg, with
 * reg starting at op1's identity (reset_reduce) or at imm1 (load_reduce); fp32 inside.
 */
nl::tile tensor_scalar_cumulative(const nl::operand& src, const nl::binary_fn& op0, const nl::binary_fn& op1,
                                  const nl::operand& imm0, const nl::operand& imm1 = 0.0,
                                  const cumulative_options& o = {},
                                  std::source_location loc = std::source_location::current());
/** The reduction across partitions of a [P, F] tile (op: add, maximum, minimum), as [1, F]. */
nl::tile tensor_partition_reduce(const nl::binary_fn& op, const nl::operand& data, const nl::op_options& o = {},
                                 std::source_location loc = std::source_location::current());
/** Per partition of a [P, F<=512] tile: count, mean, variance * count of the even and of the odd elements ([P, 6]). */
nl::tile bn_stats(const nl::operand& data, const nl::op_options& o = {},
                  std::source_location loc = std::source_location::current());
/** Combines (count, mean, variance * count) triples of each partition ([P, 3k]) into mean and variance ([P, 2]). */
nl::tile bn_aggr(const nl::operand& data, const nl::op_options& o = {},
                 std::source_location loc = std::source_location::current());

/** Writes src (a tile or a scalar) into the on-chip window dst where predicate (an unsigned integer tile) is non-zero. */
void tensor_copy_predicated(const nl::access& dst, const nl::operand& src, const nl::operand& predicate,
                            bool reverse_pred = false, std::source_location loc = std::source_location::current());

/** Options of isa::select_reduce and isa::range_select: the per-partition maximum of the result. */
struct select_reduce_options {
  std::optional<nl::access> reduce_res;  ///< where the [P, 1] maximum goes
  isa::reduce_cmd reduce_cmd = isa::reduce_cmd::idle;
  std::optional<nl::binary_fn> reduce_op;  ///< nl::maximum only
  bool reverse_pred = false;
  std::optional<DType> dtype;
};
/** predicate ? on_true : on_false (a scalar or a [P, 1] tile); with reduce_res and reset_reduce also the row max. */
nl::tile select_reduce(const nl::operand& predicate, const nl::operand& on_true, const nl::operand& on_false,
                       const select_reduce_options& o = {},
                       std::source_location loc = std::source_location::current());

/** Options of isa::range_select. */
struct range_select_options {
  std::optional<nl::access> reduce_res;  ///< where the [P, 1] maximum goes
  isa::reduce_cmd reduce_cmd = isa::reduce_cmd::reset_reduce;
  std::int64_t range_start = 0;
  double on_false_value = -3.4028234663852886e38;  ///< FP32_MIN, the only value the hardware takes
  std::optional<DType> dtype;
};
/**
 * on_true where comp_op0(range_start + f, bound0) and comp_op1(range_start + f, bound1) hold
 * (f the free index, compared in fp32; bounds [P, 1] fp32 tiles), on_false_value elsewhere.
 */
nl::tile range_select(const nl::operand& on_true, const nl::binary_fn& comp_op0, const nl::binary_fn& comp_op1,
                      const nl::operand& bound0, const nl::operand& bound1, const range_select_options& o = {},
                      std::source_location loc = std::source_location::current());

// ---- random numbers (dsl/src/random.cpp) ----

/**
 * isa.rng: 32 random bits per element, truncated to o.dtype (an integer type, default uint32)
 * by keeping the least significant bits; on the Vector engine (default) or GpSimd.
 */
nl::tile rng(const Shape& shape, const engine_options& o = {},
             std::source_location loc = std::source_location::current());
/** isa.rand2: uniform fp32 values in [min, max] (scalars or [P, 1] tiles), converted to o.dtype; Vector engine. */
nl::tile rand2(const Shape& shape, const nl::operand& min, const nl::operand& max, const nl::op_options& o = {},
               std::source_location loc = std::source_location::current());
/**
 * isa.dropout: data with each element replaced by 0 with probability `prob` (a scalar or a
 * [P, 1] tile, fp32 when data is an integer tile); the result has data's dtype. Vector engine.
 */
nl::tile dropout(const nl::operand& data, const nl::operand& prob, const nl::op_options& o = {},
                 std::source_location loc = std::source_location::current());
/** isa.set_rng_seed: seeds the Vector engine's generator from a [1, 1] 32-bit integer tile. */
void set_rng_seed(const nl::operand& src_seeds, std::source_location loc = std::source_location::current());
/** isa.rand_set_state: sets an engine's per-partition generator state from a uint32 SBUF tile [P, 6] (GpSimd) or [P, 24] (Vector). */
void rand_set_state(const nl::operand& src_seeds, isa::engine engine = isa::engine::gpsimd,
                    std::source_location loc = std::source_location::current());
/** isa.rand_get_state: an engine's current generator state as a uint32 tile [P, 6] (GpSimd) or [P, 24] (Vector). */
nl::tile rand_get_state(const Shape& shape, isa::engine engine = isa::engine::gpsimd,
                        std::source_location loc = std::source_location::current());

/** Fills an on-chip window with a value (isa.memset). */
void memset(const nl::access& dst, double value, std::source_location loc = std::source_location::current());

}  // namespace nki::isa
#include "nki/dynamic_control.h"  // IWYU pragma: export
#include "nki/mx.h"  // IWYU pragma: export

#include "nki/isa_activate2.h"  // IWYU pragma: export
#include "nki/isa_index_ops.h"  // IWYU pragma: export

#include "nki/dma.h"  // IWYU pragma: export (DMA instructions and gathers)
#include "nki/kernel_collectives.h"  // IWYU pragma: export (nki.collectives: rank_id and collectives inside kernels)
#include "nki/isa_core_sync.h"       // IWYU pragma: export (isa.core_barrier, isa.sendrecv)
