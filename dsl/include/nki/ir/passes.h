/** \file Passes over the kernel IR, one entry function each. */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nki/ir/kernel_ir.h"

namespace nki::ir {

/** The canonical text of a kernel: every op, tensor and index; no source locations. */
std::string print(const KernelIR& k);

/** 16 hex digits identifying the canonical text (64-bit FNV-1a). */
std::string hash_text(const std::string& text);

/** How many store ops write each tensor, indexed by tensor id (a tensor and its views count every store to their one storage). */
std::vector<int> count_stores(const KernelIR& k);

/**
 * Rejects what the hardware or NKI forbids, with the NKI error name, the kernel,
 * the user's file:line and the values: a tile of more than 128 partitions, a 1-D
 * arange used as an index, an access out of bounds for the launch grid `grid`
 * (logical size per axis) and a world of `world_size` ranks (rank_id()).
 *
 * Returns the body indices of masked loads and stores whose bounds it could not prove or
 * refute from the mask (a `!=` or multi-axis condition, or too many launch and loop values
 * to enumerate): the launch checks those at run time (runtime/launch/src/bounds_check.cpp).
 */
std::vector<std::size_t> validate(const KernelIR& k, const std::vector<std::int64_t>& grid, int world_size = 1);

/**
 * Per tensor id: whether plain stores (unmasked, not accumulating or scattering, outside
 * dynamic loops, no rank in their indices) write every element of that shared_hbm tensor
 * over the launch grid `grid` (logical size per axis), found by enumerating the stores'
 * instances, iterations and tile rows. False when anything else writes it or it cannot tell
 * (too large to enumerate): a launch zeroes such a tensor before any instance runs.
 */
std::vector<bool> stored_whole(const KernelIR& k, const std::vector<std::int64_t>& grid);

}  // namespace nki::ir
