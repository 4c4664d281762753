/** \file Helpers of the cost tests of tile-language ops: the instructions the cost model charges. */
#pragma once

#include <vector>

#include "nki/ir/kernel_ir.h"
#include "nki/simulator/cost_model.h"
#include "nki/simulator/target.h"
#include "test_support.h"

namespace lt {

/**
 * The instructions (engine, cycles) the cost model charges on trn2 for the ops of `ir` that
 * `keep` accepts; a fused op must cost 0 cycles and is left out.
 */
template <class Keep>
std::vector<nki::sim::Instruction> charged_instructions(const nki::ir::KernelIR& ir, Keep keep) {
  std::vector<nki::sim::Instruction> out;
  for (std::size_t i = 0; i < ir.body.size(); ++i) {
    if (!keep(ir.body[i])) continue;
    nki::sim::Instruction in;
    if (!nki::sim::instruction_of(ir, i, nki::sim::target_spec("trn2"), in)) continue;
    if (in.what.ends_with("(fused)")) {
      CHECK(in.cycles == 0);
      continue;
    }
    out.push_back(in);
  }
  return out;
}

}  // namespace lt
