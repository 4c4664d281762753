/**
 * \file The collectives of one world launch in this process: where its local ranks meet, check
 * that they make the same collective, and move the data (in memory between local ranks, over
 * the communicator between processes).
 */
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/rank_link.h"
#include "nki/ir/kernel_ir.h"

namespace nki {

class Communicator;

/**
 * Thrown on a rank that stops because another rank failed (or the ranks disagreed): the launch
 * reports the first rank's own error, not these.
 */
class RankStopped : public std::exception {
 public:
  const char* what() const noexcept override { return "stopped because another rank failed"; }
};

/** What every rank of the world needs to know of one collective of a kernel: its groups. */
struct CollectiveGroups {
  int op = -1;                          ///< body index of the ir::CollectiveOp
  std::vector<std::vector<int>> groups; ///< world ranks, each group in its order; empty for a permute
};

/**
 * The world ranks of every collective of `k`, checked against a world of `world_size` ranks
 * before anything runs: explicit groups must cover the world exactly once, in groups of one
 * size (err_replica_group_mismatch); axis names are resolved with `axis_groups` (the launch's
 * mesh: nki::replica_groups), which throws for an unknown axis; permute pairs must name world
 * ranks (err_invalid_source_target_pairs). Shapes that depend on the group size are checked
 * too (err_collective_shape_mismatch). Throws nki::UserError naming the collective's line.
 */
std::vector<CollectiveGroups> resolve_collective_groups(
    const ir::KernelIR& k, int world_size,
    const std::function<std::vector<std::vector<int>>(const std::vector<std::string>& axes)>& axis_groups);

/** Whether the kernel makes any collective (ir::CollectiveOp). */
bool has_collectives(const ir::KernelIR& k);

/** World rank `rank`'s group of each collective (in body order; empty for a permute, whose pairs say it all). */
std::vector<std::vector<int>> own_groups(const std::vector<CollectiveGroups>& groups, int rank);

/**
 * The meeting point of the local ranks [first_local, first_local + locals) of a world of
 * `world_size` ranks. Every collective is a step of the whole world: each rank arrives with
 * its k-th collective (the same op, in the same instance, on every rank), and once all have,
 * each group's ranks write their dsts from the group's srcs (reductions in group order, fp32,
 * rounded once: the same bits whatever the timing). A rank that arrives at another collective,
 * or finishes while others wait at one, is err_collective_mismatch on every rank, never a hang.
 * Waiting blocks (no spinning). With a communicator of several processes, the thread that
 * created it must call serve(): collectives between processes go over it (MPI) from there.
 */
class WorldCollectives {
 public:
  /**
   * `own_groups[r][i]`: local rank r's group of the kernel's i-th collective (world ranks, in
   * group order; for a permute the pairs are read from the op). `logical_core`: the members are
   * the two NeuronCores of a plain launch's logical core (NC0, NC1), meeting at core_barrier and
   * sendrecv: each core's k-th meets the other's k-th, whatever instance each is in.
   */
  WorldCollectives(std::string kernel, int world_size, int first_local,
                   std::vector<std::vector<std::vector<int>>> own_groups, Communicator* processes = nullptr,
                   bool logical_core = false);
  ~WorldCollectives();
  WorldCollectives(const WorldCollectives&) = delete;
  WorldCollectives& operator=(const WorldCollectives&) = delete;

  /** The link local rank `local` runs with (rank() is first_local + local). */
  RankLink& link(int local);
  /** Local rank `local` ran all its instances. */
  void finished(int local);
  /** Local rank `local` failed with `message`: every rank waiting, here and (at the next step) elsewhere, stops. */
  void failed(int local, const std::string& message);
  /**
   * Under a communicator of several processes: run on the thread that may call it until every
   * local rank has finished or failed, doing each step's exchange with the other processes.
   * Throws nki::UserError when another process's rank failed (err_rank_failed) or the processes'
   * ranks are at different collectives (err_collective_mismatch). Returns at once otherwise.
   */
  void serve();

  struct State;

 private:
  std::unique_ptr<State> s_;
  std::vector<std::unique_ptr<RankLink>> links_;
};

}  // namespace nki
