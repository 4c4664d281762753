/** \file The kernel IR: tensors, loops, tile ops and the traced kernel that holds them. */
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "nki/dtype.h"
#include "nki/error.h"
#include "nki/ir/index_expr.h"
#include "nki/shape.h"

namespace nki::ir {

/** Where a tensor lives. */
enum class Memory : std::uint8_t {
  hbm_input,    ///< a kernel argument, in HBM
  shared_hbm,   ///< ndarray(..., buffer=shared_hbm): one buffer all instances see; returned
  private_hbm,  ///< per instance, in HBM
  sbuf,         ///< state buffer, per instance (on chip)
  psum,         ///< matmul accumulator, per instance (on chip)
  constant_hbm, ///< nl.shared_constant: read-only HBM whose values the IR carries (TensorDecl::values)
};
const char* memory_name(Memory m);
inline bool is_hbm(Memory m) {
  return m == Memory::hbm_input || m == Memory::shared_hbm || m == Memory::private_hbm || m == Memory::constant_hbm;
}
/** Tensors that live per instance and are (re)allocated where an AllocOp runs. */
inline bool is_per_instance(Memory m) { return m == Memory::private_hbm || m == Memory::sbuf || m == Memory::psum; }

/**
 * Where nki.compiler's allocators put an on-chip array (sbuf / psum alloc, mod_alloc). The
 * dimensions before par_dim are block dimensions; `storage` is the shape the executors
 * allocate: along a block dimension d it holds storage[d] <= shape[d] blocks, and block b
 * lives at b mod storage[d], so blocks b and b + storage[d] share memory as on the hardware.
 */
struct Placement {
  bool placed = false;
  std::int64_t partition = 0;  ///< the first partition of block 0
  std::int64_t address = 0;    ///< SBUF: byte address per partition; PSUM: byte offset inside each bank
  std::int64_t bank = 0;       ///< PSUM: the bank of block 0; block i (physical, row-major) is in bank + i
  Shape storage;               ///< the physical shape (equals the shape but for the wrapped block dimensions)
  bool operator==(const Placement&) const = default;
};

struct TensorDecl {
  int id;
  std::string name;
  Shape shape;
  DType dtype;
  Memory memory;
  SourceLoc loc;
  int par_dim = 0;                   ///< the partition dimension of an on-chip array (nl::par_dim)
  std::optional<double> fill;        ///< zeros / ones / full: the value every element starts with
  std::vector<double> values;        ///< constant_hbm: every element, row-major, exact in dtype
  /// tensor.reshape / tensor.view(dtype): the tensor whose storage this one reinterprets (always one
  /// with its own storage, row-major, the same bytes); -1: the tensor has its own storage.
  int view_of = -1;
  Placement placement;               ///< sbuf / psum: set by nki.compiler's allocators
};

/** The shape of the memory the executors allocate for `t`: its placement's storage, else its shape. */
inline const Shape& storage_shape(const TensorDecl& t) { return t.placement.placed ? t.placement.storage : t.shape; }
/** Where coordinate `v` of dimension `d` of `t` is stored: a wrapped block dimension takes it modulo its blocks. */
inline std::int64_t storage_index(const TensorDecl& t, std::size_t d, std::int64_t v) {
  if (!t.placement.placed) return v;
  const std::int64_t n = t.placement.storage[d];
  return n == t.shape[d] ? v : v % n;
}

/**
 * The engine an instruction runs on where NKI lets the author choose (engine=); `unknown`
 * leaves the choice to the cost model's default for the op. It changes timing, never values.
 */
enum class Engine : std::uint8_t { unknown, tensor, vector, scalar, gpsimd };
const char* engine_name(Engine e);

/**
 * A predicate over affine indices: all conditions hold. A condition is `expr >= 0`, or
 * `expr != 0` when `not_equal`. Expressions broadcast over the op's tile like indices.
 * An empty predicate is true everywhere (no mask).
 */
struct Condition {
  IndexExpr expr;
  bool not_equal = false;
  bool operator==(const Condition&) const = default;
};
struct Predicate {
  std::vector<Condition> all;
  bool empty() const { return all.empty(); }
  bool operator==(const Predicate&) const = default;
  /** Whether every condition holds (see evaluate()). */
  bool holds(std::span<const std::int64_t> pid, std::span<const std::int64_t> loop,
             std::span<const std::int64_t> coord, std::int64_t rank = 0) const {
    for (const Condition& c : all) {
      const std::int64_t v = evaluate(c.expr, pid, loop, coord, rank);
      if (c.not_equal ? v == 0 : v < 0) return false;
    }
    return true;
  }
};

/**
 * tensor[indices...]: one affine index per tensor dimension, broadcast to the tile
 * `shape`. Axis symbol k of an index is the coordinate along tile dimension k.
 */
struct Access {
  int tensor = -1;
  std::vector<IndexExpr> indices;
  Shape shape;
  SourceLoc loc;
};

/** An operand of a compute op: a tile (by id) or a weakly typed scalar constant. */
struct Operand {
  int tile = -1;  ///< -1 for a scalar
  double scalar = 0.0;
  bool scalar_is_float = true;
  bool is_scalar() const { return tile < 0; }
};

enum class BinaryKind : std::uint8_t {
  add, subtract, multiply, divide, maximum, minimum, power,
  equal, not_equal, greater, greater_equal, less, less_equal,  ///< 1 or 0
  logical_and, logical_or,                                     ///< on truth values (non-zero is true)
  logical_xor,                                                 ///< 1 where exactly one operand is true
  bitwise_and, bitwise_or, bitwise_xor, left_shift, right_shift,  ///< on integers: see apply_bitwise
  abs_max, abs_min,  ///< the operand of larger (smaller) magnitude, signed; a tie gives rhs
  fmod,              ///< C fmod: the remainder takes the sign of lhs
  mod,               ///< numpy mod: the remainder takes the sign of rhs
  prelu,             ///< lhs > 0 ? lhs : lhs * rhs (rhs is the slope alpha); runs on the Scalar engine
  average,           ///< (lhs + rhs) / 2 in fp32; as a reduction (tensor_partition_reduce), the mean
  bypass,            ///< lhs unchanged, rhs ignored: a stage of a two-op instruction that does nothing
};
const char* binary_name(BinaryKind k);
/** The kinds that work on integer bit patterns (apply_bitwise), not on fp32 values. */
bool is_bitwise(BinaryKind k);
/**
 * The operation both executors perform in fp32: numpy semantics for maximum/minimum
 * (a NaN operand wins), and every NaN result is the canonical quiet NaN 0x7fc00000.
 * Bitwise kinds are apply_bitwise in int32.
 */
float apply_binary(BinaryKind k, float a, float b);
/**
 * A bitwise kind in the integer type `t` (the result's dtype, as numpy's dtype=): both
 * operands wrap into `t` (two's complement), then numpy's rules; shifts by a count outside
 * [0, bits of t) give 0 (left) or the sign fill (right; arithmetic for signed types). The
 * result is a value of `t`.
 */
double apply_bitwise(BinaryKind k, DType t, double a, double b);

/** Activation functions of the Scalar engine (nl.exp, ...); `copy` is the identity. */
enum class ActKind : std::uint8_t {
  copy, exp, log, tanh, sigmoid, relu, gelu, sqrt, rsqrt, reciprocal, abs, negative, square,
  sin, cos, tan, arctan, floor, ceil, trunc, sign, erf, erf_dx, silu, silu_dx, gelu_dx, gelu_apprx_tanh,
  gelu_apprx_sigmoid, gelu_apprx_sigmoid_dx, mish, softplus,
};
const char* act_name(ActKind k);
/**
 * f(x) in fp32 (gelu: x * (1 + erf(x / sqrt 2)) / 2, as nl.gelu; docs/reference.md lists
 * every formula); NaN results canonical.
 */
float apply_activation(ActKind k, float x);

/** prod multiplies; all is 1 when every element is non-zero (NaN is true); var is numpy's var (ddof 0). */
enum class ReduceKind : std::uint8_t { sum, max, min, mean, prod, var, all };
const char* reduce_name(ReduceKind k);

/**
 * dynamic: nl.fori_loop / nl.dynamic_range, bounds read from registers when the loop starts;
 * while_loop: nl.while_loop, runs while its condition register is non-zero. Both run in
 * order, as sequential loops, and their trip count is known only at run time (LoopInfo).
 */
enum class LoopKind : std::uint8_t { affine, sequential, dynamic, while_loop };
/** Whether the loop's trip count is read from registers at run time. */
inline bool is_dynamic(LoopKind k) { return k == LoopKind::dynamic || k == LoopKind::while_loop; }
const char* loop_kind_name(LoopKind k);

/** isa.dge_mode: who generates a DMA's descriptors (unknown: the compiler picks). */
enum class DgeMode : std::uint8_t { unknown, swdge, hwdge, none };
const char* dge_mode_name(DgeMode m);

/**
 * How an explicit DMA instruction (isa.dma_copy, dma_transpose, dma_compute) was issued. It
 * changes timing, never values: a load or store carrying it is priced as one DMA even between
 * on-chip arrays, with its descriptor generation on the engine the DGE mode names.
 */
struct DmaInfo {
  bool issued = false;   ///< this op is the transfer (priced as a DMA wherever the tensors live)
  bool part = false;     ///< the read half of an issued transfer: no instruction of its own
  DgeMode dge = DgeMode::unknown;
  Engine trigger = Engine::unknown;  ///< hwdge: the engine whose sequencer starts it (scalar; unknown: Sync)
  int priority = -1;     ///< QoS level 0-3 (NeuronCore-v4); -1 unset
  bool transpose = false;  ///< a DMA transpose: element-wise descriptors (priced as a strided transfer)
  int sources = 1;       ///< isa.dma_compute: the tensors read per element written
  bool operator==(const DmaInfo&) const = default;
};

// ---- ops: every op is a plain struct listed once in NKI_IR_OPS ----
// Compute ops compute in fp32 and round the result to the result tile's dtype. A compute
// op's `mask` selects the output elements it computes; the others are undefined (NKI: not
// computed; executors leave 0, checked mode poisons them) and operands are not read there.

/** result = src (HBM -> SBUF with nl::load, or a read of an on-chip array); masked-off elements undefined. */
struct LoadOp {
  int result = -1;
  Access src;
  Predicate mask;
  SourceLoc loc;
  DmaInfo dma;
  /// Indirect (NKI's vector_offset): the tensor index on `index_dim` is the access's index there
  /// plus index_tile[p, 0], a per-partition integer from data. Outside the tensor it is
  /// err_tensor_access_out_of_bound at run time when `oob_error`, else the element reads 0
  /// (the instruction skips it).
  int index_tile = -1;
  int index_dim = 0;
  bool oob_error = true;
};

/**
 * dst = value (or dst += value when `accumulate`, in the tensor's dtype after an fp32 add),
 * rounded to the tensor's dtype; masked-off elements are not written.
 */
struct StoreOp {
  Access dst;
  int value = -1;
  Predicate mask;
  bool accumulate = false;
  SourceLoc loc;
  DmaInfo dma;
  /// A scatter (NKI's vector_offset on dst): partition p writes the tensor index on dimension 0
  /// that is dst's index there plus index_tile[p, 0]. Outside the tensor it is
  /// err_tensor_access_out_of_bound at run time when `oob_error`, else the row is not written.
  int index_tile = -1;
  bool oob_error = true;
  /// nl.atomic_rmw (with index_tile): dst += value, atomic across instances and cores; the
  /// updates of one element sum exactly and dst holds that sum rounded to its dtype.
  bool atomic = false;
};

/** A per-instance tensor comes to life here (again on every loop iteration); filled if it has a fill. */
struct AllocOp {
  int tensor = -1;
  SourceLoc loc;
};

/** result = f(data * scale + bias); scale and bias are scalars or [P, 1] tiles. */
struct ActivationOp {
  int result = -1;
  ActKind kind = ActKind::copy;
  Operand data, scale, bias;
  Predicate mask;
  SourceLoc loc;
  Engine engine = Engine::unknown;
  /// Part of the instruction that made its operand (a cast of an accumulating instruction's
  /// result, a negated reduction): no instruction of its own in the cost model.
  bool fused = false;
};

/** result = op(lhs, rhs), broadcast along free dims. */
struct BinaryOp {
  int result = -1;
  BinaryKind kind = BinaryKind::add;
  Operand lhs, rhs;
  Predicate mask;
  SourceLoc loc;
  Engine engine = Engine::unknown;
  bool fused = false;  ///< as ActivationOp::fused
};

/** result = cond ? on_true : on_false, where cond is a tile (non-zero is true) or, when `cond` is a scalar, `pred`. */
struct SelectOp {
  int result = -1;
  Operand cond;
  Predicate pred;  ///< used when cond is a scalar (isa.affine_select)
  Operand on_true, on_false;
  Predicate mask;
  SourceLoc loc;
  bool fused = false;  ///< as ActivationOp::fused (the keep-or-zero step of a dropout instruction)
};

/** result = the value of an affine expression over the tile (isa.iota). */
struct IotaOp {
  int result = -1;
  IndexExpr expr;
  Predicate mask;
  SourceLoc loc;
  bool fused = false;  ///< as ActivationOp::fused (the counters a random-number instruction hashes)
};

/** result = reduction of `data` over free `axes` in row-major order, fp32 accumulation. */
struct ReduceOp {
  int result = -1;
  ReduceKind kind = ReduceKind::sum;
  int data = -1;
  std::vector<int> axes;  ///< sorted, each >= 1
  bool keepdims = false;
  Predicate mask;
  SourceLoc loc;
  Engine engine = Engine::unknown;
  /// The accumulation an activation / tensor_scalar_reduce does as it goes (reduce_res): part
  /// of the instruction that made `data`, no instruction of its own in the cost model.
  bool fused = false;
};

/** result[m, n] = sum over k (ascending, fp32) of stationary[k, m] * moving[k, n]; result in PSUM, fp32. */
struct MatmulOp {
  int result = -1;
  int stationary = -1, moving = -1;
  Predicate mask;
  SourceLoc loc;
  /// perf_mode double_row: the second row pair, contracted in the same pass (k ascending, the
  /// first row then the second at each k); -1 otherwise.
  int stationary2 = -1, moving2 = -1;
  /// is_transpose on NeuronCore-v3+: data movement, bit-accurate. The result has the stationary
  /// operand's dtype; each element is the sum, from -0.0, of the terms whose moving element is
  /// non-zero (an identity moving operand gives stationary^T exactly, NaN and -0.0 included).
  bool transpose = false;
  /// tile_position / tile_size: the rows and columns of the 128x128 PE array the instruction
  /// uses (the whole array by default). Timing only: matmuls on disjoint row tiles overlap.
  std::int64_t tile_row = 0, tile_column = 0, tile_rows = 128, tile_columns = 128;
  /// is_stationary_onezero / is_moving_onezero: the author's promise that the operand holds only
  /// ones and zeros. Timing only (an fp32 operand so marked streams at twice the rate).
  bool stationary_onezero = false, moving_onezero = false;
};

/** result[f, p] = x[p, f] (2-D tiles). */
struct TransposeOp {
  int result = -1;
  int data = -1;
  SourceLoc loc;
  Engine engine = Engine::unknown;  ///< unknown: the Tensor engine; vector: isa::nc_transpose's 32x32 Vector transpose
};

/**
 * isa.tensor_tensor_scan on [P, F] tiles, per partition along the free axis in order:
 * carry = initial (a scalar, or element p of a [P, 1] tile); for i in 0..F-1:
 * carry = op1(op0(data0[p, i], carry), data1[p, i]); result[p, i] = carry.
 * reverse0 swaps op0's operands (carry op0 data0), reverse1 op1's (data1 op1 x). The carry
 * stays fp32 (the engine computes in fp32); each result element is rounded to its dtype.
 */
struct ScanOp {
  int result = -1;
  BinaryKind op0 = BinaryKind::multiply, op1 = BinaryKind::add;
  int data0 = -1, data1 = -1;
  Operand initial;
  bool reverse0 = false, reverse1 = false;
  SourceLoc loc;
};

/**
 * isa.quantize_mx, one of its two outputs, from a [P, F] fp16/bf16 tile `data` (P a multiple
 * of 32, F of 4) in groups of 8 partitions x 4 consecutive values (ir/mx_format.h). With
 * `scale`, result [P/8, F/4] holds group (p / 8, j)'s scale (fp8_e8m0fnu value or uint8 code);
 * otherwise result [P, F/4] of the packed type `format` holds data[p, 4j + i] / scale as code i.
 */
struct QuantizeMxOp {
  int result = -1;
  int data = -1;
  DType format = DType::fp8_e4m3fn_x4;
  bool scale = false;
  SourceLoc loc;
};

/**
 * isa.nc_matmul_mx: result[m, n] = sum over k ascending, then i = 0..3, of
 * dequantize(stationary[k, m], i) * dequantize(moving[k, n], i), one fp32 fused multiply-add
 * each; the scales of row k are stationary_scale[k / 8, m] and moving_scale[k / 8, n].
 */
struct MatmulMxOp {
  int result = -1;
  int stationary = -1, moving = -1;
  int stationary_scale = -1, moving_scale = -1;
  SourceLoc loc;
};

/**
 * result[c] = data[indices(c)]: a window of a tile (tile[p, f] subscripts) or a broadcast
 * (tile.broadcast_to). One affine index per data dimension, over the result's axes.
 */
struct ViewOp {
  int result = -1;
  int data = -1;
  std::vector<IndexExpr> indices;
  SourceLoc loc;
};

/**
 * A move whose source element comes from data, not from an affine index.
 * With an `indices` tile (integers, the result's shape; a dimension of 1 broadcasts):
 * result[p, f...] = data[p, g] where g = indices[p, f...] is an element of data's partition p,
 * its free dimensions flattened row-major (isa.nc_n_gather, nl.gather_flattened).
 * Without (`indices` = -1): result[p, f...] = data[table[p], f...], the source partition of
 * each result partition from a table fixed at trace time (isa.nc_stream_shuffle).
 * An index outside [0, elements per partition) (a table entry < 0) leaves the element as it
 * was: it takes `fallback` (a tile of the result's shape; a scalar 0 when none), and is
 * err_tensor_access_out_of_bound at run time when `oob_error` is set.
 */
struct GatherOp {
  int result = -1;
  int data = -1;
  int indices = -1;
  std::vector<std::int64_t> table;
  Operand fallback;
  bool oob_error = true;
  SourceLoc loc;
  Engine engine = Engine::unknown;  ///< unknown: GpSimd for a gather, Vector for a table shuffle
  const char* label = "a gather";   ///< the instruction, for messages (static text)
};

/** The detail of err_tensor_access_out_of_bound for a gather index `index` outside [0, limit) (both executors). */
std::string gather_out_of_bound_message(const GatherOp& op, std::int64_t index, std::int64_t limit);
/** The same for an indirect load's row `index` outside [0, limit) of dimension `dim` of tensor `name`. */
std::string indirect_out_of_bound_message(const std::string& name, int dim, std::int64_t index, std::int64_t limit);
/** The detail of the checked-mode conflict of partitions `first` < `second` of one scatter writing element `idx` of tensor `t`. */
std::string scatter_duplicate_message(const TensorDecl& t, const std::vector<std::int64_t>& idx, std::int64_t first,
                                      std::int64_t second);

/** Starts loop `loop`; the body runs up to the matching LoopEndOp at index `end` of the body. */
/**
 * A scalar instruction of the engine sequencer on the instance's 32-bit registers
 * (isa.register_move / register_load / register_store); registers are numbered per kernel.
 * move: dst = src register, or the immediate `imm` when src is -1.
 * load: dst = the single element `mem` (an integer dtype of at most 32 bits), wrapped to int32.
 * store: the single element `mem` = register src, wrapped to the element's integer dtype.
 */
struct RegisterOp {
  enum class Kind : std::uint8_t { move, load, store };
  Kind kind = Kind::move;
  int dst = -1;
  int src = -1;
  std::int32_t imm = 0;
  Access mem;
  SourceLoc loc;
};

/**
 * The ranks of a collective (nki.collectives.ReplicaGroup): explicit groups of world ranks, or
 * the axes of the launch's mesh (sub-axes as AxisRef writes them, e.g. `"y":(1)2`), turned
 * into groups when the mesh is known (at launch, or by `nki compile --mesh`). Neither: one
 * group of every rank. In a kernel baked for one rank (KernelIR::baked_rank, MPMD) `groups`
 * holds only that rank's own group, as a per-rank process group resolves.
 */
struct ReplicaGroupSpec {
  std::vector<std::vector<int>> groups;
  std::vector<std::string> axes;
  bool operator==(const ReplicaGroupSpec&) const = default;
};

/**
 * A collective among ranks (nki.collectives), on whole tensors of one memory (HBM, or SBUF
 * for the reducing and gathering kinds), one src and one dst per coalesced buffer. The
 * executor performs it itself in program order: it blocks until every rank of its group has
 * reached the same collective, then writes each dst from the group's srcs (docs/reference.md,
 * "Collectives inside kernels"). Reductions are host collectives' (fp32, group order).
 * all_reduce: dst = op over the group's src. all_gather: dst = the group's srcs concatenated
 * along `dim`. reduce_scatter: dst = part p (along `dim`) of the reduction, p the rank's
 * position. all_to_all: dst = part p of every member's src, concatenated along `dim`.
 * permute: dst = the src of the rank's source in `pairs` (unchanged when it has none);
 * permute_implicit: the ring of each group, from the predecessor; permute_implicit_reduce:
 * dst = op(srcs[0], srcs[1]) of the predecessor. all_gather_v / all_to_all_v: flat chunks whose
 * counts and displacements a uint32 `metadata` tensor gives at run time (docs/reference.md);
 * its row 2 receives the counts unless `recv_counts_known`.
 * core_barrier / sendrecv (isa): between the physical cores of one logical core (LNC=2), not
 * the ranks of a world: every core named in `group.groups[0]` reaches the barrier before any goes
 * on (`srcs[0]` is the shared HBM tensor it orders); sendrecv: dst = the src of core `recv_from`,
 * while this core's src goes to core `send_to`. A core of the logical core is the one placement
 * gives the instance (nc(2)); each core's k-th such op meets the other core's k-th.
 */
struct CollectiveOp {
  enum class Kind : std::uint8_t {
    all_reduce, all_gather, reduce_scatter, all_to_all, permute, permute_implicit, permute_implicit_reduce,
    all_gather_v, all_to_all_v, core_barrier, sendrecv,
  };
  Kind kind = Kind::all_reduce;
  std::vector<int> srcs, dsts;  ///< tensor ids
  ReduceKind op = ReduceKind::sum;  ///< sum, max or min (nl.add / nl.maximum / nl.minimum)
  int dim = 0;                   ///< collective_dim
  ReplicaGroupSpec group;
  std::vector<std::pair<int, int>> pairs;  ///< permute: (source, target) world ranks
  int metadata = -1;             ///< the _v kinds: the metadata tensor (uint32 [rows, G] or [1, rows, G])
  bool recv_counts_known = false;  ///< the _v kinds: row 2 is left as it is
  bool has_rdispls = false;        ///< all_to_all_v: row 3 gives where each sender's chunk lands
  /// sendrecv: the cores (0 or 1, of the logical core) it sends to and receives from, as affine
  /// expressions of the program ids (NKI's `(program_id + 1) % 2` is `1 - program_id` here)
  IndexExpr send_to, recv_from;
  int pipe_id = 0;                   ///< sendrecv: the group of sendrecvs it synchronizes with
  Engine engine = Engine::unknown;   ///< core_barrier: the engine that waits (unknown: GpSimd); sendrecv: gpsimd for gpsimd_dma
  SourceLoc loc;
};
/** Whether the op meets the cores of one logical core (core_barrier, sendrecv) rather than the ranks of a world. */
inline bool meets_cores(const CollectiveOp& c) {
  return c.kind == CollectiveOp::Kind::core_barrier || c.kind == CollectiveOp::Kind::sendrecv;
}
/** Whether the collective's metadata (the _v kinds) receives counts (its row 2): then it is written too. */
inline bool writes_metadata(const CollectiveOp& c) { return c.metadata >= 0 && !c.recv_counts_known; }
const char* collective_name(CollectiveOp::Kind k);

/** nl.device_print: the executor prints `prefix` and the values of `tile` (docs/reference.md, "device_print"). */
struct PrintOp {
  std::string prefix;
  int tile = -1;
  SourceLoc loc;
};

struct LoopOp {
  int loop = -1;
  int end = -1;
  SourceLoc loc;
};
struct LoopEndOp {
  int loop = -1;
};

#define NKI_IR_OPS(X) \
  X(LoadOp)           \
  X(StoreOp)          \
  X(AllocOp)          \
  X(ActivationOp)     \
  X(BinaryOp)         \
  X(SelectOp)         \
  X(IotaOp)           \
  X(ReduceOp)         \
  X(MatmulOp)         \
  X(TransposeOp)      \
  X(ScanOp)           \
  X(QuantizeMxOp)     \
  X(MatmulMxOp)       \
  X(ViewOp)           \
  X(RegisterOp)       \
  X(PrintOp)          \
  X(GatherOp)         \
  X(CollectiveOp)     \
  X(LoopOp)           \
  X(LoopEndOp)

#define NKI_IR_OP_TYPE(T) T,
using Op = std::variant<NKI_IR_OPS(NKI_IR_OP_TYPE) std::monostate>;
#undef NKI_IR_OP_TYPE

/** Shape, dtype and memory of each SSA tile value, indexed by tile id. */
struct TileInfo {
  Shape shape;
  DType dtype;
  Memory memory = Memory::sbuf;
};

/**
 * A loop of the kernel: `trip` iterations of its variable 0, 1, ..., trip - 1. A dynamic loop
 * (is_dynamic) has trip 1 for the passes that enumerate loop values (no index reads its
 * variable: its values reach the body only through the `induction` register) and its real
 * trip count is computed per run: dynamic: range(lower, upper, step) with each bound the
 * register *_reg (>= 0) or the constant; while_loop: while register `cond` is non-zero.
 */
struct LoopInfo {
  std::int64_t trip = 0;
  LoopKind kind = LoopKind::affine;
  int parent = -1;  ///< the enclosing loop, -1 at top level
  SourceLoc loc;
  int lower_reg = -1, upper_reg = -1;
  std::int64_t lower = 0, upper = 0, step = 1;
  int induction = -1;  ///< dynamic: set to lower + i * step before iteration i; while_loop: to cond
  int cond = -1;       ///< while_loop: the condition register, tested before each iteration
};

/** A while_loop running this many iterations in one instance is an error (err_while_loop_limit), not a hang. */
inline constexpr std::int64_t kWhileLoopLimit = std::int64_t{1} << 20;
/** The trip count of a dynamic loop for register values `regs` (0 when the range is empty). */
std::int64_t dynamic_trip(const LoopInfo& l, std::span<const std::int32_t> regs);
struct KernelIR;
/** err_while_loop_limit: a while_loop of `k` ran kWhileLoopLimit iterations in the instance `pid`. */
[[noreturn]] void throw_while_loop_limit(const KernelIR& k, const LoopInfo& l, std::span<const std::int64_t> pid);
/** Whether a register can be loaded from / stored to an element of `t` (an integer of at most 32 bits, not bool). */
bool is_register_dtype(DType t);
/** register_load: the element of dtype `t` at `src`, wrapped to int32 (a uint32 above INT32_MAX turns negative). */
std::int32_t register_from_element(const void* src, DType t);
/** register_store: `v` wrapped to the element type `t` (its low bits, two's complement) and written at `dst`. */
void register_to_element(void* dst, DType t, std::int32_t v);
/**
 * One line of nl.device_print: "<prefix> [<program ids>] <dtype>[<shape>]: v0 v1 ..." (values
 * row-major, each the shortest text that reads back as the same double).
 */
std::string device_print_line(const std::string& prefix, std::span<const std::int64_t> pid, DType dtype,
                              const Shape& shape, std::span<const double> values);

/** A traced kernel for one argument signature and grid rank. */
struct KernelIR {
  std::string name;
  std::vector<TensorDecl> tensors;  ///< indexed by tensor id
  std::vector<int> params;          ///< tensor ids of the arguments, in order
  std::vector<int> outputs;         ///< tensor ids returned, in order
  std::vector<TileInfo> tiles;      ///< indexed by tile id
  std::vector<LoopInfo> loops;      ///< indexed by loop id
  std::vector<Op> body;             ///< in program order; loops are LoopOp ... LoopEndOp
  int grid_rank = 0;                ///< number of program axes the kernel was traced for
  /// The NeuronCore generation the body asked for (isa::get_nc_version) and may depend on;
  /// 0: it never asked, so one trace serves every target.
  int nc_version = 0;
  int registers = 0;                ///< number of registers (RegisterOp, dynamic loops); per instance, start 0
  /// MPMD: the world rank this IR was baked for (rank terms are constants, each collective's
  /// group is the rank's own); -1: SPMD, the rank is a run-time value.
  int baked_rank = -1;
};

/** The tensor whose storage `t` is: `t` itself, or the tensor a reshape / view(dtype) of it reinterprets. */
inline int storage_of(const KernelIR& k, int t) {
  const int v = k.tensors[static_cast<std::size_t>(t)].view_of;
  return v < 0 ? t : v;
}

/** Whether any index of the kernel reads rank_id(). */
bool reads_rank(const KernelIR& k);
/**
 * The kernel as one rank runs it in MPMD mode: every rank term a constant, every collective's
 * group that rank's own (`own_groups[i]` for the i-th CollectiveOp, world ranks in group order;
 * a permute keeps its pairs), baked_rank set. The printed text, and so the cache key, differs
 * per rank.
 */
KernelIR bake_rank(const KernelIR& k, int rank, const std::vector<std::vector<int>>& own_groups);

/** The tile ids an op reads (operands that are tiles). */
std::vector<int> tiles_read(const Op& op);
/** The tile an op defines, or -1. */
int tile_defined(const Op& op);

}  // namespace nki::ir
