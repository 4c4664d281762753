/** \file Between processes: how the local ranks of a world launch reach the ranks of other processes (MPI). */
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/program.h"
#include "nki/ir/kernel_ir.h"

namespace nki {

class Communicator;

/** One rank at a step of a world launch: what it brought. */
struct StepArrival {
  const ir::KernelIR* k = nullptr;
  int op = -1;       ///< body index of the collective
  int ordinal = -1;  ///< the kernel's how-manieth collective
  std::vector<TensorBinding> srcs, dsts;
  std::vector<std::int64_t> pid;
  const ir::CollectiveOp& collective() const { return std::get<ir::CollectiveOp>(k->body[static_cast<std::size_t>(op)]); }
};

/**
 * Whether world rank `me`'s part of collective `op` (its `group`) reaches a rank outside this
 * process's [first_local, first_local + locals): then the transport does it.
 */
bool part_crosses_processes(int me, int first_local, int locals, const ir::CollectiveOp& op, const std::vector<int>& group);

/** Where a process's ranks are when it talks to the others. */
struct StepStatus {
  enum class Kind { at_step, done, failed } kind = Kind::done;
  std::string failure;                ///< failed: the first failing rank's message
  const StepArrival* step = nullptr;  ///< at_step: the step (every local rank is at the same one)
};

/** The collectives of one world launch that cross processes. */
class KernelCollectiveTransport {
 public:
  virtual ~KernelCollectiveTransport() = default;
  /**
   * Exchanges every process's status. True: every process is at the same step, so run_step
   * follows. False: every process is done, or this one failed (its ranks report it). Throws
   * nki::UserError err_rank_failed when another process failed, err_collective_mismatch when
   * the processes' ranks are at different collectives or some are done.
   */
  virtual bool agree(const std::string& kernel, int first_local, const StepStatus& mine) = 0;
  /**
   * Writes the dsts of every local rank whose group crosses processes (`at`: every local
   * rank's arrival, local rank r being world rank first_local + r; `own_groups[r][ordinal]`).
   */
  virtual void run_step(int first_local, const std::vector<StepArrival>& at,
                        const std::vector<std::vector<std::vector<int>>>& own_groups) = 0;
};

/** The transport over `processes` (MPI), or null when the world is this one process. */
std::unique_ptr<KernelCollectiveTransport> make_kernel_collective_transport(Communicator& processes);
/** The MPI transport (mpi_kernel_collectives.cpp; null in a build without MPI). */
std::unique_ptr<KernelCollectiveTransport> make_mpi_kernel_collective_transport(Communicator& processes);

}  // namespace nki
