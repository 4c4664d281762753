/**
 * \file isa.core_barrier and isa.sendrecv: the two physical NeuronCores of one logical core (LNC=2)
 * waiting for each other, or swapping SBUF tiles, inside a kernel launched over both (nc(2)).
 */
#pragma once

#include <cstdint>
#include <source_location>
#include <vector>

#include "nki/language.h"

namespace nki::isa {

/** nisa.dma_engine: how sendrecv moves its tile: the shared DMA engines, or GpSimd's own DMA (small SBUF swaps). */
enum class dma_engine : std::uint8_t { dma, gpsimd_dma };

/** Keyword arguments of isa::core_barrier. */
struct core_barrier_options {
  isa::engine engine = isa::gpsimd_engine;  ///< the engine that waits; the others go on
};

/**
 * isa.core_barrier: both cores in `cores` (only (0, 1), the two of a logical core) reach it before
 * either goes on, so what each core wrote to the shared HBM tensor `data` before it is there for
 * what either reads after it. `engine` waits (GpSimd by default). NeuronCore-v3 or newer, in a
 * launch whose grid spreads over both cores (nc(2)): each core's k-th barrier (or sendrecv) meets
 * the other core's k-th, so the i-th instance of NC0 meets the i-th of NC1.
 */
void core_barrier(const nl::tensor& data, const std::vector<int>& cores, const core_barrier_options& o = {},
                  std::source_location loc = std::source_location::current());

/** Keyword arguments of isa::sendrecv. */
struct sendrecv_options {
  isa::dma_engine dma_engine = isa::dma_engine::dma;
};

/**
 * isa.sendrecv: this core's SBUF tensor `src` goes to `dst` of core `send_to_rank` while `dst`
 * receives core `recv_from_rank`'s src. The ranks are the cores of the logical core (0 or 1):
 * integers or affine expressions of the program ids (NKI's `(program_id + 1) % 2` over two cores
 * is `1 - nl::program_id(0)` here). Each core's receive must pair with the other's send (checked
 * when it runs). `pipe_id` groups sendrecvs; gpsimd_dma limits a partition to 1024 bytes of 32-bit
 * (512 of 16-bit, 256 of 8-bit) data. NeuronCore-v3 or newer; it meets as core_barrier does.
 */
void sendrecv(const nl::tensor& src, const nl::tensor& dst, const nl::index& send_to_rank, const nl::index& recv_from_rank,
              int pipe_id, const sendrecv_options& o = {}, std::source_location loc = std::source_location::current());

}  // namespace nki::isa
