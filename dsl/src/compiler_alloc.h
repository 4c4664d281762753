/** \file Internal: turning an nki.compiler allocation into an ir::Placement, and its checks. */
#pragma once

#include "nki/compiler.h"
#include "nki/ir/kernel_ir.h"
#include "nki/trace.h"

namespace nki::compiler::detail {

/**
 * The placement `a` gives an array of `shape` (partition dimension `par`, element `dtype`): its
 * storage (the physical blocks) and where block 0 is. alloc(func) is evaluated for every block
 * here; a placement that is neither modulo nor one-to-one is err_unsupported_allocation.
 */
ir::Placement place(Trace& t, const allocation& a, const Shape& shape, int par, DType dtype, const char* op,
                    const SourceLoc& loc);

/** The placed tensor `id` fits its memory (err_allocation_out_of_range) and overlaps no earlier placed array (err_allocation_overlap). */
void check_placement(Trace& t, int id);

}  // namespace nki::compiler::detail
