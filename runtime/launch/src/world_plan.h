/** \file What a world launch (and a world compile) decides before anything runs: each rank's groups, MPMD kernels, the key's mesh. */
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dist/world_collectives.h"
#include "nki/kernel.h"
#include "nki/mesh.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nki {

/** A kernel planned for ranks [first, first + ranks) of a world over a mesh. */
struct WorldPlan {
  std::vector<CollectiveGroups> groups;                      ///< every collective's groups, checked against the world
  std::vector<std::vector<std::vector<int>>> rank_groups;    ///< per planned rank: its group of each collective
  std::vector<std::shared_ptr<const TracedKernel>> baked;    ///< MPMD: each planned rank's kernel (rank baked in)
  std::string mesh_key;  ///< the mesh and groups of the axis-named collectives, for the cache key ("" if none)
};

/**
 * Resolves and checks the collectives of `traced` against `mesh` (its size is the world), and
 * for MPMD bakes each planned rank's kernel. Throws nki::UserError before anything runs.
 */
WorldPlan plan_world(const TracedKernel& traced, const Mesh& mesh, int first, int ranks, CompileMode mode);

/** Whether a kernel spans ranks: it makes collectives or reads rank_id(). */
bool spans_ranks(const ir::KernelIR& k);

/**
 * How each collective meets for planned rank `r`, for the cost model: its group's size (a
 * permute: 2 where the rank sends or receives) and the chips the group's ranks are on, rank q
 * being on chip q / ranks_per_chip.
 */
std::vector<sim::CollectiveShape> collective_shapes(const WorldPlan& plan, const ir::KernelIR& k, int rank,
                                                    int ranks_per_chip);

}  // namespace nki
