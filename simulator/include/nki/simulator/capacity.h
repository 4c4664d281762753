/** \file On-chip capacity: the live SBUF and PSUM bytes per partition of one instance, checked against a target. */
#pragma once

#include <cstdint>
#include <vector>

#include "nki/error.h"
#include "nki/ir/kernel_ir.h"
#include "nki/simulator/target.h"

namespace nki::sim {

/** The peak live bytes per partition of one instance and where each peak is first reached. */
struct CapacityUse {
  std::int64_t sbuf_peak = 0, psum_peak = 0;
  SourceLoc sbuf_peak_at, psum_peak_at;
};

/**
 * Walks the kernel in program order (each loop body once: every iteration allocates the
 * same) and keeps the live on-chip bytes per partition:
 *  - an sbuf/psum tensor (nl::ndarray, zeros, ...) is live from its allocation to the end of
 *    the scope it is allocated in (the enclosing loop body, or the kernel);
 *  - a tile an op computes is live from that op to its last use; a use inside a loop that the
 *    tile was defined outside of keeps it live to the end of that loop;
 *  - a tile read from an on-chip tensor (indexing an sbuf/psum array) is a view: no bytes.
 * At each op its allocations come first, then the tiles whose last use it is are freed.
 * Bytes per partition: elements / partition-dimension size x dtype bytes (PSUM too: arrays
 * smaller than a bank may share one, as NKI's attention kernel places them).
 * Throws nki::UserError err_sbuf_out_of_memory / err_psum_out_of_memory naming the kernel, the
 * allocation's file:line, the bytes asked, the bytes free and the capacity of `target`.
 */
CapacityUse check_capacity(const ir::KernelIR& k, const TargetSpec& target);

/**
 * The buffers each tensor's allocation gets, per tensor id: 1, except for an SBUF or PSUM
 * tensor allocated inside a loop, which rotates over B buffers so that an iteration's writes
 * need not wait for the last iteration's reads (the compiler's multi-buffering of loop-local
 * allocations). The extra buffers come from the bytes check_capacity finds free at the peak:
 * the loop-local allocations of that memory take them innermost loop first (the most often
 * reloaded), each B = 1 + min(trip of its loop - 1, floor(F / its bytes)) with F what is still
 * free, so all the buffers together never exceed the capacity the check allows. In PSUM each
 * further buffer is whole banks (an accumulation group holds a bank: TargetSpec::psum_bank_bytes).
 */
std::vector<int> loop_buffers(const ir::KernelIR& k, const TargetSpec& target);

}  // namespace nki::sim
