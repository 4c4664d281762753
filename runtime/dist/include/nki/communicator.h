/**
 * \file The communicator backend: which devices a process runs and how collectives reach
 * the others. In-process (the default: every device is a core of one sim::Device) or MPI
 * (one process per rank, each a chip of cores; nki/mpi_world.h).
 */
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nki/collectives.h"
#include "nki/replica_groups.h"
#include "nki/tensor.h"

namespace nki {

/**
 * A world of `ranks()` processes. Collectives take this process's buffers, one per device
 * it runs, and every process passes the same count n, so rank r runs the world devices
 * r*n .. r*n+n-1 (device ids in groups and pairs are world ids). Results are bit for bit
 * those of one process running every device. Every process makes the same collectives in
 * the same order (SPMD); inputs are checked on every process alike, before any data moves.
 */
class Communicator {
 public:
  virtual ~Communicator() = default;
  /** "in-process" or "mpi". */
  virtual const char* backend() const = 0;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;

  virtual std::vector<Tensor> all_reduce(const std::vector<Tensor>& buffers, ReduceOp op, const GroupList& groups) = 0;
  virtual std::vector<Tensor> all_gather(const std::vector<Tensor>& buffers, int dim, const GroupList& groups,
                                         GatherMode mode) = 0;
  virtual std::vector<Tensor> reduce_scatter(const std::vector<Tensor>& buffers, ReduceOp op, int dim,
                                             const GroupList& groups) = 0;
  virtual std::vector<Tensor> all_to_all(const std::vector<Tensor>& buffers, int split_dim, int concat_dim,
                                         const GroupList& groups) = 0;
  virtual std::vector<Tensor> collective_permute(const std::vector<Tensor>& buffers,
                                                 const std::vector<std::pair<int, int>>& source_target_pairs) = 0;

  /** Every process's `mine`, in rank order. */
  virtual std::vector<std::string> all_gather_text(const std::string& mine) = 0;

  /**
   * Runs `compile` on every process, the processes of one host that pass the same
   * `cache_directory` (the compile cache they share) taking turns: the first (lowest rank)
   * of each such set runs it, then the others do (finding in the cache what it compiled).
   * When the first fails with an nki error, the others throw the same instead of compiling.
   */
  virtual void compile_in_turns(const std::filesystem::path& cache_directory, const std::function<void()>& compile) = 0;
};

/** The process's communicator: in-process unless an MpiWorld (or set_communicator) says otherwise. */
Communicator& communicator();
/** A new in-process communicator (e.g. to compare against while the process's is MPI's). */
std::shared_ptr<Communicator> make_in_process_communicator();
/** Makes `c` the process's communicator (nullptr: back to in-process). */
void set_communicator(std::shared_ptr<Communicator> c);

/**
 * Runs `step` on every process and agrees on the outcome: when it throws on some process,
 * every process throws (the failing one its own error, the others
 * err_rank_failed naming the first failing rank and its message).
 */
void on_every_rank(Communicator& c, const std::function<void()>& step);

}  // namespace nki
