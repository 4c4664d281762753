/**
 * \file isa.core_barrier and isa.sendrecv: the two physical NeuronCores of one logical core (LNC=2)
 * waiting for each other, or swapping SBUF tiles, inside a kernel launched over both (nc(2)).
 */
#pragma once

#include <source_location>
#include <vector>

#include "nki/language.h"

namespace nki::isa {

/** nisa.dma_engine: how sendrecv moves its tile: the DMA engines, or GpSimd's own DMA (small SBUF swaps). */
enum class dma_engine : std::uint8_t { dma, gpsimd_dma };

/**
 * isa.core_barrier: every core in `cores` (only {0, 1}, the two of a logical core) reaches it
 * before any goes on, so writes each core made to the shared HBM tensor `data` before it are seen
 * by reads either makes after it. `engine` waits (GpSimd by default); the others are not blocked.
 * NeuronCore-v3 or newer. In a launch whose grid spreads over both cores (nc(2)), each core's
 * k-th barrier meets the other's k-th.
 */
void core_barrier(const nl::tensor& data, const std::vector<int>& cores = {0, 1}, isa::engine engine = isa::gpsimd_engine,
                  std::source_location loc = std::source_location::current());

/**
 * isa.sendrecv: this core's SBUF tensor `src` goes to `dst` of core `send_to_rank` while `dst`
 * receives core `recv_from_rank`'s src. The ranks are the cores of the logical core (0 or 1),
 * integers or affine expressions of the program ids: NKI's ring `(program_id + 1) % 2` of two cores
 * is `1 - nl::program_id(0)` here. Each core's receive must pair with the other's send (checked when
 * it runs). `pipe_id` groups sendrecvs; `gpsimd_dma` limits a partition to 1024 bytes of 32-bit
 * (512 of 16-bit, 256 of 8-bit) data. NeuronCore-v3 or newer.
 */
void sendrecv(const nl::tensor& src, const nl::tensor& dst, const nl::index& send_to_rank, const nl::index& recv_from_rank,
              int pipe_id, isa::dma_engine dma = isa::dma_engine::dma,
              std::source_location loc = std::source_location::current());

}  // namespace nki::isa
