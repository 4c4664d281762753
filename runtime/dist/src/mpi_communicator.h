/** \file The MPI communicator backend: one process per rank, one MPI communicator per replica group. */
#pragma once

#include <mpi.h>

#include <map>
#include <utility>
#include <vector>

#include "collective_plan.h"
#include "mpi_message_limit.h"
#include "nki/communicator.h"

namespace nki {

/**
 * Rank r runs world devices r*n .. r*n+n-1 (n buffers per rank). Every collective first
 * exchanges each rank's buffer shapes and dtypes, so every rank checks the same world and
 * raises the same error; then data moves on the communicator of each replica group (made
 * once per group list, on every rank in group order, by MPI_Comm_split over the world),
 * and the reductions run on each rank with the in-process code, in group order: results
 * are bit for bit the in-process backend's. Collectives must be made on the thread that
 * initialized MPI.
 */
class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator();
  ~MpiCommunicator() override;

  const char* backend() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }
  std::vector<Tensor> all_reduce(const std::vector<Tensor>& buffers, ReduceOp op, const GroupList& groups) override;
  std::vector<Tensor> all_gather(const std::vector<Tensor>& buffers, int dim, const GroupList& groups,
                                 GatherMode mode) override;
  std::vector<Tensor> reduce_scatter(const std::vector<Tensor>& buffers, ReduceOp op, int dim,
                                     const GroupList& groups) override;
  std::vector<Tensor> all_to_all(const std::vector<Tensor>& buffers, int split_dim, int concat_dim,
                                 const GroupList& groups) override;
  std::vector<Tensor> collective_permute(const std::vector<Tensor>& buffers,
                                         const std::vector<std::pair<int, int>>& source_target_pairs) override;
  std::vector<std::string> all_gather_text(const std::string& mine) override;
  void compile_in_turns(const std::filesystem::path& cache_directory, const std::function<void()>& compile) override;

  MPI_Comm world_comm() const { return world_; }
  /**
   * The communicator of the processes `ranks` (ascending, this one among them), made on first
   * use with MPI_Comm_create_group, which only they call: every process asks for its sets in
   * ascending order, so two sets sharing processes are made in the same order by both.
   */
  MPI_Comm process_set_comm(const std::vector<int>& ranks);

 private:
  /** The world's buffers checked alike on every rank; the plan points at this rank's inputs. */
  CollectivePlan world_plan(const char* name, const std::vector<Tensor>& buffers, const GroupList& groups);
  /** One communicator per group of `p` (MPI_COMM_NULL where this rank has no member), made on first use. */
  const std::vector<MPI_Comm>& group_comms(const CollectivePlan& p);
  /** Fills p.in with every member of every group this rank has a device in; `storage` keeps the copies. */
  void fetch_group_inputs(CollectivePlan& p, std::vector<std::vector<std::byte>>& storage);
  std::vector<std::string> all_gather_text(MPI_Comm comm, const std::string& mine);
  /** A collective that reads its group's inputs: plan, `check`, gather the inputs, `run` on the cores. */
  std::vector<Tensor> on_group_inputs(const char* name, const std::vector<Tensor>& buffers, const GroupList& groups,
                                      const std::function<void(const CollectivePlan&)>& check,
                                      const std::function<std::vector<Tensor>(const CollectivePlan&)>& run);

  MPI_Comm world_ = MPI_COMM_NULL, node_ = MPI_COMM_NULL;
  int rank_ = 0, ranks_ = 1;
  std::map<std::pair<GroupList, std::size_t>, std::vector<MPI_Comm>> group_comms_;  ///< by (groups, devices per rank)
  std::map<std::vector<int>, MPI_Comm> set_comms_;                                  ///< by process set
};

}  // namespace nki
