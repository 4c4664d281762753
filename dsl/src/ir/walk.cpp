/** \file The loop structure of a kernel body, found in one pass over its loop markers. */
#include "nki/ir/walk.h"

#include <fmt/format.h>

#include "nki/error.h"

namespace nki::ir {

LoopNest::LoopNest(const KernelIR& k)
    : begin_(k.loops.size(), k.body.size()), end_(k.loops.size(), k.body.size()), next_(k.body.size()) {
  const std::size_t n = k.body.size();
  first_.reserve(n + 1);
  std::vector<int> open;
  auto malformed = [&](std::size_t i) {
    return InternalError(fmt::format("{}: the loop markers at body index {} do not nest", k.name, i));
  };
  for (std::size_t i = 0; i < n; ++i) {
    next_[i] = i + 1;
    const auto* end = std::get_if<LoopEndOp>(&k.body[i]);
    if (end != nullptr) {
      if (open.empty() || open.back() != end->loop) throw malformed(i);
      open.pop_back();
      const std::size_t b = begin_[static_cast<std::size_t>(end->loop)];
      if (std::get<LoopOp>(k.body[b]).end != static_cast<int>(i)) throw malformed(i);
      end_[static_cast<std::size_t>(end->loop)] = i;
      next_[b] = i + 1;  // a level steps over the whole loop
    }
    first_.push_back(stacks_.size());
    stacks_.insert(stacks_.end(), open.begin(), open.end());
    if (const auto* l = std::get_if<LoopOp>(&k.body[i])) {
      if (l->loop < 0 || static_cast<std::size_t>(l->loop) >= k.loops.size()) throw malformed(i);
      begin_[static_cast<std::size_t>(l->loop)] = i;
      open.push_back(l->loop);
    }
  }
  if (!open.empty()) throw malformed(n);
  first_.push_back(stacks_.size());
}

}  // namespace nki::ir
