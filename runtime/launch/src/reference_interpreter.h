/** \file The reference interpreter's entry point: a Program that executes the IR directly. */
#pragma once

#include <memory>

#include "core/program.h"
#include "nki/ir/kernel_ir.h"

namespace nki {

/**
 * The reference interpreter: executes the IR directly, checking every index. `checked` adds
 * checked mode (docs/reference.md): poisoned fresh memory, reads of unwritten elements, HBM
 * elements written by two instances or two affine_range iterations, outputs left unwritten.
 * A checked program holds the state of one launch: make one per launch.
 */
std::shared_ptr<const Program> make_reference_program(std::shared_ptr<const ir::KernelIR> ir, bool checked = false);

}  // namespace nki
