/** \file The `nki` command, callable in-process (tests) and from main(): a program of your own runs it with your kernels registered. */
#pragma once

#include <ostream>

#include "nki/registry.h"

namespace nki::cli {

/** Exit status for bad input (files, shapes, grids, flags). */
inline constexpr int kExitBadInput = 2;
/** Exit status of a run stopped by SIGINT (128 + 2, as a shell reports a SIGINT death). */
inline constexpr int kExitInterrupted = 130;

/**
 * Registers the kernel library's kernels (nki/kernels.h) for the command: tensor_add_tiled and
 * matmul_fully_optimized as tunable kernels too. Your own program calls it before adding its kernels.
 */
void register_library_kernels(KernelRegistry& registry);

/** Runs `nki` with argv; writes to out/err; returns the exit status. */
int run(int argc, const char* const* argv, const KernelRegistry& registry, std::ostream& out, std::ostream& err);

}  // namespace nki::cli
