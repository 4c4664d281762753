/** \file all_gather_v and all_to_all_v: which chunk each sender gives each receiver, from their metadata. */
#pragma once

#include <cstdint>

#include "nki/ir/kernel_ir.h"

namespace nki {

/** `count` elements from src element `src_offset` of the sender to dst element `dst_offset` of the receiver. */
struct VChunk {
  std::int64_t src_offset = 0, count = 0, dst_offset = 0;
};

/**
 * The chunk the sender at group position q gives the receiver at position p, from the sender's
 * and the receiver's metadata (uint32, `g` columns, row-major: row 0 counts, 1 displacements,
 * 3 the receiver's displacements with has_rdispls). A chunk outside either buffer, or larger
 * than the receiver's slot (dst / g) without has_rdispls, is nki::UserError err_collective_counts
 * naming both ranks and the values.
 */
VChunk v_chunk(const ir::KernelIR& k, const ir::CollectiveOp& op, const std::uint32_t* sender_meta,
               const std::uint32_t* receiver_meta, int q, int p, int g, std::int64_t src_elements,
               std::int64_t dst_elements, int sender, int receiver);

}  // namespace nki
