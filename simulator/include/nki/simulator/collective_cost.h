/** \file The cost rule of in-kernel collectives (ir::CollectiveOp): the ring steps one rank's DMA moves. */
#pragma once

#include <cstdint>

#include "nki/ir/kernel_ir.h"
#include "nki/simulator/cost_model.h"
#include "nki/simulator/target.h"

namespace nki::sim {

/**
 * One collective as one rank runs it: a ring over the rank's group of G ranks, each step one
 * DMA transfer after the other (docs/reference.md, "Cost rules"). all_reduce: 2(G-1) steps of
 * bytes/G (reduce-scatter, then all-gather); all_gather: G-1 steps of the src; reduce_scatter:
 * G-1 steps of the dst; all_to_all: G-1 steps of src/G; a permute: one step of the src.
 * G = 1: one local copy of the dst's bytes; a permute the rank has no part in moves nothing.
 * Every coalesced buffer moves in the same steps.
 */
struct CollectiveSteps {
  int steps = 0;                ///< DMA transfers, one after the other (0: nothing moves)
  bool cross_chip = false;      ///< the group spans chips: every step crosses a chip-to-chip link
  std::int64_t step_bytes = 0;  ///< bytes one step moves, all buffers together
  double step_dma_us = 0;       ///< those bytes over all the core's DMA queues (fixed cost excluded)
  double step_link_us = 0;      ///< those bytes over the core's share of the chip's link bandwidth
  /** One step: the DMA fixed cost, then its bytes over the slower of its paths. */
  double step_us(const TargetSpec& t) const;
  std::int64_t bytes() const { return steps * step_bytes; }
};

/** The core's DMA bandwidth in GB/s: all its queues at once (dma_queues x dma_queue_gbps). */
double core_dma_gbps(const TargetSpec& t);

/**
 * The steps of `op` for world rank `rank` whose group is `group`, on target `t`, the core
 * holding `link_share_gbps` of its chip's NeuronLink bandwidth.
 */
CollectiveSteps collective_steps(const ir::KernelIR& k, const ir::CollectiveOp& op, const CollectiveShape& group,
                                 int rank, const TargetSpec& t, double link_share_gbps);

}  // namespace nki::sim
