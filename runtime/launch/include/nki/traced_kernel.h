/** \file What Kernel::trace returns: a kernel traced for one signature and grid rank. */
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "nki/ir/kernel_ir.h"
#include "nki/kernel.h"

namespace nki {

class LaunchMemo;

/** A traced kernel for one signature and grid rank: IR, canonical text, hash. */
struct TracedKernel {
  std::shared_ptr<const ir::KernelIR> ir;
  std::string text;
  std::string hash;
  std::vector<std::size_t> unproven;  ///< masked accesses whose bounds are checked at launch (ir::validate)
  std::vector<bool> stored_whole;     ///< per tensor: plain stores write it whole (ir::stored_whole): not zeroed first
  /// What its launches found once (launch_memo.h): set by Kernel::trace; null for a trace made elsewhere.
  std::shared_ptr<LaunchMemo> memo;
};

}  // namespace nki
