/** \file The chunks of all_gather_v and all_to_all_v, checked against the buffers they leave and land in. */
#include "v_chunks.h"

#include <fmt/format.h>

#include "nki/error.h"

namespace nki {

VChunk v_chunk(const ir::KernelIR& k, const ir::CollectiveOp& op, const std::uint32_t* sender_meta,
               const std::uint32_t* receiver_meta, int q, int p, int g, std::int64_t src_elements,
               std::int64_t dst_elements, int sender, int receiver) {
  const bool gather = op.kind == ir::CollectiveOp::Kind::all_gather_v;
  const int col = gather ? 0 : p;  // all_gather_v sends one chunk to all: only column 0 is read
  VChunk c;
  c.count = sender_meta[col];
  c.src_offset = sender_meta[g + col];
  const std::int64_t slot = dst_elements / g;
  c.dst_offset = op.has_rdispls ? receiver_meta[3 * g + q] : slot * q;
  auto fail = [&](std::string what) {
    throw UserError("err_collective_counts", k.name, op.loc,
                    fmt::format("{}: rank {} sends rank {} {} elements from element {} of its src: {}",
                                ir::collective_name(op.kind), sender, receiver, c.count, c.src_offset, what));
  };
  if (c.src_offset + c.count > src_elements) fail(fmt::format("its src has {} elements", src_elements));
  if (!op.has_rdispls && c.count > slot)
    fail(fmt::format("the receiver's slot is {} elements (dst of {} / {} ranks)", slot, dst_elements, g));
  if (c.dst_offset + c.count > dst_elements)
    fail(fmt::format("they would land at element {} of a dst of {}", c.dst_offset, dst_elements));
  return c;
}

}  // namespace nki
