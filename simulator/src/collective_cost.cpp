/** \file In-kernel collectives as ring steps of DMA transfers (docs/reference.md, "Cost rules"). */
#include "nki/simulator/collective_cost.h"

#include <algorithm>

namespace nki::sim {

double CollectiveSteps::step_us(const TargetSpec& t) const {
  return t.dma_fixed_us + std::max(step_dma_us, cross_chip ? step_link_us : 0.0);
}

double core_dma_gbps(const TargetSpec& t) { return t.dma_queues * t.dma_queue_gbps; }

namespace {

using Kind = ir::CollectiveOp::Kind;

std::int64_t bytes_of(const ir::TensorDecl& d) { return shape_elements(d.shape) * dtype_bytes(d.dtype); }

/** A G-th of the tensor, rounded up to whole elements: the ring's largest chunk sets its steps' pace. */
std::int64_t part_bytes(const ir::TensorDecl& d, int g) {
  const std::int64_t n = shape_elements(d.shape);
  return (n + g - 1) / g * dtype_bytes(d.dtype);
}

/**
 * The DMA efficiency of moving `bytes` of `d`. HBM chunks of a whole tensor are contiguous, so
 * no partition row bounds the descriptors: 1. SBUF: the load/store rule on the bytes each
 * partition gives (chunks are contiguous runs of the row-major tensor, at most a row each).
 */
double efficiency(const ir::TensorDecl& d, std::int64_t bytes) {
  if (ir::is_hbm(d.memory)) return 1.0;
  const std::int64_t parts = d.shape.empty() ? 1 : d.shape[static_cast<std::size_t>(d.par_dim)];
  return dma_efficiency(std::min(bytes, bytes_of(d) / std::max<std::int64_t>(1, parts)), false);
}

}  // namespace

CollectiveSteps collective_steps(const ir::KernelIR& k, const ir::CollectiveOp& op, const CollectiveShape& group,
                                 int rank, const TargetSpec& t, double link_share_gbps) {
  CollectiveSteps c;
  const int g = std::max(1, group.ranks);
  // How many steps, and for each buffer pair the tensor whose bytes (or G-th of them) one step moves.
  enum class Part { src, src_part, dst, dst_part } part = Part::src;
  if (g == 1) {
    // A group of one: dst = src (a ring of one is its own predecessor), which the runtime copies.
    // A permute pair (r, r) is that copy too; a rank no pair names sends and receives nothing.
    bool self = op.kind != Kind::permute;
    for (const auto& [s, d] : op.pairs) self |= s == rank && d == rank;
    c.steps = self ? 1 : 0;
    part = Part::dst;
  } else {
    switch (op.kind) {
      case Kind::all_reduce: c.steps = 2 * (g - 1); part = Part::src_part; break;
      case Kind::all_gather: c.steps = g - 1; part = Part::src; break;
      case Kind::reduce_scatter: c.steps = g - 1; part = Part::dst; break;
      case Kind::all_to_all: c.steps = g - 1; part = Part::src_part; break;
      case Kind::permute:
      case Kind::permute_implicit: c.steps = 1; part = Part::src; break;
      // The predecessor's reduction of its two srcs moves as one buffer of dst's bytes.
      case Kind::permute_implicit_reduce: c.steps = 1; part = Part::dst; break;
      // Sizes known only when they run: each step is priced at a whole slot (dst / G), their largest.
      case Kind::all_gather_v:
      case Kind::all_to_all_v: c.steps = g - 1; part = Part::dst_part; break;
      // sendrecv: one transfer of the tile to the other core of the logical core (one chip).
      case Kind::sendrecv: c.steps = 1; part = Part::src; break;
      case Kind::core_barrier: c.steps = 0; break;  // no data: the scheduler prices its semaphore wait
    }
    c.cross_chip = group.chips > 1;
  }
  if (c.steps == 0) return c;
  const double dma_bytes_per_us = core_dma_gbps(t) * 1e3;  // GB/s = 1e3 bytes/us
  for (std::size_t i = 0; i < op.dsts.size(); ++i) {  // one buffer pair each (permute_implicit_reduce: two srcs, one dst)
    const ir::TensorDecl& src = k.tensors.at(static_cast<std::size_t>(op.srcs[i]));
    const ir::TensorDecl& dst = k.tensors.at(static_cast<std::size_t>(op.dsts[i]));
    const ir::TensorDecl& ref = part == Part::dst || part == Part::dst_part ? dst : src;
    const std::int64_t b = part == Part::src_part || part == Part::dst_part ? part_bytes(ref, g) : bytes_of(ref);
    c.step_bytes += b;
    c.step_dma_us += static_cast<double>(b) / (dma_bytes_per_us * efficiency(ref, b));
  }
  if (c.cross_chip) c.step_link_us = static_cast<double>(c.step_bytes) / (link_share_gbps * 1e3);
  return c;
}

}  // namespace nki::sim
