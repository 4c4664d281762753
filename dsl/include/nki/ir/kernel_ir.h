/** \file The kernel IR: tensors, tile ops and the traced kernel that holds them. */
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "nki/dtype.h"
#include "nki/error.h"
#include "nki/ir/index_expr.h"
#include "nki/shape.h"

namespace nki::ir {

/** Where a tensor lives. */
enum class Memory : std::uint8_t {
  hbm_input,   ///< a kernel argument, in HBM
  shared_hbm,  ///< ndarray(..., buffer=shared_hbm): one buffer all instances see; returned
};
const char* memory_name(Memory m);

struct TensorDecl {
  int id;
  std::string name;
  Shape shape;
  DType dtype;
  Memory memory;
  SourceLoc loc;
};

/** tensor[indices...]: one affine index per tensor dimension, broadcast to the tile `shape`. */
struct Access {
  int tensor = -1;
  std::vector<IndexExpr> indices;
  Shape shape;
  SourceLoc loc;
};

/** An operand of a compute op: a tile (by id) or a weakly typed scalar constant. */
struct Operand {
  int tile = -1;  ///< -1 for a scalar
  float scalar = 0.0f;
  bool is_scalar() const { return tile < 0; }
};

enum class BinaryKind : std::uint8_t { add, subtract, multiply, divide, maximum, minimum };
const char* binary_name(BinaryKind k);
/**
 * The operation both executors perform in fp32: numpy semantics for maximum/minimum
 * (a NaN operand wins), and every NaN result is the canonical quiet NaN 0x7fc00000.
 */
float apply_binary(BinaryKind k, float a, float b);

// ---- ops: every op is a plain struct listed once in NKI_IR_OPS ----

/** result = load(src): HBM -> on-chip tile of the tensor's dtype. */
struct LoadOp {
  int result = -1;
  Access src;
  SourceLoc loc;
};

/** result = op(lhs, rhs) computed in fp32, rounded to `dtype`, broadcast along free dims. */
struct BinaryOp {
  int result = -1;
  BinaryKind kind = BinaryKind::add;
  Operand lhs, rhs;
  SourceLoc loc;
};

/** store(dst, value): tile -> HBM, rounded to the tensor's dtype. */
struct StoreOp {
  Access dst;
  int value = -1;
  SourceLoc loc;
};

#define NKI_IR_OPS(X) \
  X(LoadOp)           \
  X(BinaryOp)         \
  X(StoreOp)

#define NKI_IR_OP_TYPE(T) T,
using Op = std::variant<NKI_IR_OPS(NKI_IR_OP_TYPE) std::monostate>;
#undef NKI_IR_OP_TYPE

/** Shape and dtype of each SSA tile value, indexed by tile id. */
struct TileInfo {
  Shape shape;
  DType dtype;
};

/** A traced kernel for one argument signature and grid rank. */
struct KernelIR {
  std::string name;
  std::vector<TensorDecl> tensors;  ///< indexed by tensor id
  std::vector<int> params;          ///< tensor ids of the arguments, in order
  std::vector<int> outputs;         ///< tensor ids returned, in order
  std::vector<TileInfo> tiles;      ///< indexed by tile id
  std::vector<Op> body;             ///< in program order
  int grid_rank = 0;                ///< number of program axes the kernel was traced for
};

}  // namespace nki::ir
