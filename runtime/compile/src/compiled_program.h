/** \file A compiled kernel ready to run: its plan and the loaded artifact holding its step functions. */
#pragma once

#include <memory>

#include "artifact.h"
#include "kernel_plan.h"
#include "core/program.h"
#include "nki/ir/kernel_ir.h"

namespace nki {

/**
 * Checks the plan against the IR and resolves every step function; throws std::runtime_error
 * when the plan or the artifact does not fit (a damaged cache entry).
 */
std::shared_ptr<const Program> make_compiled_program(std::shared_ptr<const ir::KernelIR> ir, KernelPlan plan,
                                                     std::shared_ptr<LoadedArtifact> artifact);

}  // namespace nki
