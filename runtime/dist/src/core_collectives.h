/** \file Collectives computed on this process's simulated cores, from inputs already in its memory. */
#pragma once

#include <functional>
#include <vector>

#include "collective_plan.h"
#include "nki/collectives.h"

namespace nki {

/** The output shape of each collective, after checking its dimensions (err_collective_invalid_dim). */
Shape all_gather_shape(const CollectivePlan& p, int dim, GatherMode mode);
Shape reduce_scatter_shape(const CollectivePlan& p, int dim);
Shape all_to_all_shape(const CollectivePlan& p, int split_dim, int concat_dim);

/**
 * Each computes the outputs of the plan's local devices, one task per local device on a
 * NeuronCore of its own, reading the inputs of its group's members from `p.in` (which
 * must hold every one it reads). Reductions are reduce_range's, in group order.
 */
std::vector<Tensor> all_gather_on_cores(const CollectivePlan& p, int dim, GatherMode mode);
std::vector<Tensor> reduce_scatter_on_cores(const CollectivePlan& p, ReduceOp op, int dim);
std::vector<Tensor> all_to_all_on_cores(const CollectivePlan& p, int split_dim, int concat_dim);
std::vector<Tensor> collective_permute_on_cores(const CollectivePlan& p, const std::vector<int>& source_of);
/**
 * Reduce-scatter then all-gather among the cores: needs every group member local (one
 * process), as the members read each other's outputs.
 */
std::vector<Tensor> all_reduce_on_cores(const CollectivePlan& p, ReduceOp op);

/** Runs body(i, sync) for i in [0, n), each on a core of its own; sync() is a rendezvous of all n. */
void run_cores(std::size_t n, const std::function<void(std::size_t, const std::function<void()>&)>& body);

/** Fresh outputs of `shape` for the plan's local devices. */
std::vector<Tensor> allocate_outputs(const CollectivePlan& p, const Shape& shape);

}  // namespace nki
