/** \file Collectives across simulated NeuronCores: all_reduce, all_gather, reduce_scatter, all_to_all, collective_permute. */
#pragma once

#include <utility>
#include <vector>

#include "nki/replica_groups.h"
#include "nki/tensor.h"

namespace nki {

enum class ReduceOp { sum, max, min };
enum class GatherMode {
  concat,  ///< the group's buffers joined along an existing dimension
  stack,   ///< the group's buffers stacked along a new dimension
};

/**
 * Every collective takes one buffer per device, `buffers[i]` being device i's (for a
 * sharded tensor, `ShardedTensor::shards()`), all of one shape and dtype on one
 * sim::Device with at least as many NeuronCores as buffers, and returns each device's
 * result in the same HBM. Device i runs on NeuronCore i: one task per core, each on a
 * TBB worker of its own, each reading its peers' buffers and writing only its own
 * output, with rendezvous between the cores where the protocol has phases.
 *
 * `groups` partitions the devices (every device in exactly one group, all groups of
 * one size); an empty list is one group of every device, in id order. Reductions
 * accumulate in fp32 (integer dtypes: in double) in group order, the first member's
 * value first, and round to the dtype once; sum is IEEE addition, max/min follow numpy
 * (a NaN wins) and every NaN result is the canonical quiet NaN. So a result is a
 * function of the inputs alone, bit for bit, whatever the cores' timing.
 *
 * Inputs are checked before any core starts: mismatched shapes, dtypes or devices, bad
 * groups, dimensions or pairs throw nki::UserError (named after the collective) and
 * nothing runs.
 */

/** Each device gets the reduction of its group's buffers. */
std::vector<Tensor> all_reduce(const std::vector<Tensor>& buffers, ReduceOp op, const GroupList& groups = {});

/**
 * Each device gets its group's buffers in group order, concatenated along `dim` (size
 * times the group size) or stacked in a new dimension at `dim` (0 to rank).
 */
std::vector<Tensor> all_gather(const std::vector<Tensor>& buffers, int dim, const GroupList& groups = {},
                               GatherMode mode = GatherMode::concat);

/**
 * The group's reduction split into group-size equal parts along `dim`: the member at
 * position p of its group gets part p. `dim`'s size must be a multiple of the group size.
 */
std::vector<Tensor> reduce_scatter(const std::vector<Tensor>& buffers, ReduceOp op, int dim,
                                   const GroupList& groups = {});

/**
 * Every buffer is split into group-size parts along `split_dim`; the member at position
 * p receives part p of every member and concatenates them, in group order, along
 * `concat_dim`. `split_dim`'s size must be a multiple of the group size.
 */
std::vector<Tensor> all_to_all(const std::vector<Tensor>& buffers, int split_dim, int concat_dim,
                               const GroupList& groups = {});

/**
 * For each (source, target) pair the target gets the source's buffer; a device that is
 * no pair's target gets zeros. Each device is at most one pair's source and one's target.
 */
std::vector<Tensor> collective_permute(const std::vector<Tensor>& buffers,
                                       const std::vector<std::pair<int, int>>& source_target_pairs);

}  // namespace nki
