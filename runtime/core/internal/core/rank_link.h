/** \file What a core's runner needs of the world its instances run in: their rank, and where collectives meet. */
#pragma once

#include <cstdint>
#include <span>

#include "core/program.h"
#include "nki/ir/kernel_ir.h"

namespace nki {

/**
 * The rank a core runs for, and the meeting point of its collectives (ir::CollectiveOp). Both
 * executors call it in program order; a plain launch gives every core a world of one rank.
 */
class RankLink {
 public:
  virtual ~RankLink() = default;
  /** The world rank (rank_id) of the instances this core runs. */
  virtual int rank() const = 0;
  /**
   * Performs the ir::CollectiveOp at body index `op` of kernel `k` for this rank: returns once
   * its dsts are written, after every rank of its group reached the same collective.
   * `srcs`/`dsts` are op.srcs/op.dsts as this core binds them; `pid` is the instance. Throws
   * nki::UserError when the ranks do not make the same collectives.
   */
  virtual void collective(const ir::KernelIR& k, int op, std::span<const TensorBinding> srcs,
                          std::span<const TensorBinding> dsts, std::span<const std::int64_t> pid) = 0;
};

}  // namespace nki
