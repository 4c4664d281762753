/** \file Ahead-of-time compilation of a kernel with Halide (implemented in halide_lowering.cpp). */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernel_plan.h"
#include "nki/ir/kernel_ir.h"

namespace nki {

/// Bumped whenever the lowering changes what an artifact computes, how it is called or the code it
/// runs (10: a bf16 tile stored into bf16 moves its bits; a canonical-NaN value narrows to bf16
/// without a NaN test; 11: stores into large HBM outputs stream; 12: `psum += matmul` is one
/// step; 13: that step's column blocks outermost, the moving operand widened per column block;
/// 14: reads used only by elementwise ops before the tensor's next write, and updates in place,
/// take no snapshot; 15: SBUF and PSUM partitions a multiple of 512 bytes padded by a cache line,
/// OnChipLayout; 16: a PSUM tile's zero fill done by the first psum += matmul writing all of it;
/// 17: that step's matmul sum added to PSUM without making its NaN canonical first):
/// part of the cache key, so a cache directory never serves an artifact of an older
/// lowering.
inline constexpr int kLoweringRevision = 17;

/// Buffers, program ids and loop variables one compiled step may take.
inline constexpr std::size_t kMaxStepArgs = 64;

/**
 * Lowers `ir` and writes one object file with every step's function (and its `_argv`
 * entry) to `object_path`; returns the plan that runs them. `pid_base` empty: SPMD (program
 * ids are parameters); otherwise MPMD: the ids are baked in as base + parameter. Each
 * outermost loop is unrolled by `layer_unroll_factor` (1: not unrolled). `lowered`, when
 * given, receives the plan's outline and Halide's lowered statement of every step.
 */
KernelPlan build_kernel_object(const ir::KernelIR& ir, const std::vector<std::int64_t>& pid_base,
                               int layer_unroll_factor, const std::string& object_path,
                               std::string* lowered = nullptr);

/** Writes the Halide runtime all kernel artifacts share (one per cache version). */
void build_halide_runtime_object(const std::string& object_path);

/** The Halide target artifacts are built for (host CPU features included; part of the cache key). */
const std::string& artifact_target_string();

/** The Halide version the artifacts are built with (part of the cache key). */
std::string halide_version();

}  // namespace nki
