/** \file Kernels: tracing per signature, validation, and the trace cache. */
#include "nki/kernel.h"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "launch_memo.h"
#include "nki/traced_kernel.h"
#include "nki/ir/passes.h"
#include "nki/trace.h"
#include "nki/spmd_guard_rails.h"

namespace nki {

struct Kernel::State {
  std::string name;
  std::size_t arity;
  Body body;
  std::vector<std::string> param_names;
  std::mutex mu;
  /// Keyed by the numbers Kernel::trace makes of a signature (and, for a body that asks for the
  /// target's generation, that generation too).
  std::map<std::vector<std::int64_t>, std::shared_ptr<const TracedKernel>> traces;
};

Kernel::Kernel(std::string name, std::size_t arity, Body body, std::vector<std::string> param_names)
    : state_(std::make_shared<State>()) {
  if (!param_names.empty() && param_names.size() != arity) {
    throw UserError("err_invalid_kernel", name, {},
                    fmt::format("{} parameter names given for a kernel of {} arguments", param_names.size(), arity));
  }
  for (std::size_t i = param_names.size(); i < arity; ++i) param_names.push_back(fmt::format("in{}", i));
  state_->name = std::move(name);
  state_->arity = arity;
  state_->body = std::move(body);
  state_->param_names = std::move(param_names);
}

const std::string& Kernel::name() const { return state_->name; }
std::size_t Kernel::arity() const { return state_->arity; }

std::shared_ptr<const TracedKernel> Kernel::trace(const std::vector<Shape>& shapes, const std::vector<DType>& dtypes,
                                                  const GridSpec& grid, int nc_version, int world_size) const {
  State& s = *state_;
  const std::vector<std::int64_t> logical = grid.logical_shape();
  // Numbers, not text: every launch looks its trace up (formatting the key was a tenth of a launch).
  // Per argument its dtype, rank and dims; the grid's rank and dims; rank_id()'s extent (for the
  // bounds proofs).
  std::vector<std::int64_t> key;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    key.push_back(static_cast<std::int64_t>(dtypes[i]));
    key.push_back(static_cast<std::int64_t>(shapes[i].size()));
    key.insert(key.end(), shapes[i].begin(), shapes[i].end());
  }
  key.push_back(static_cast<std::int64_t>(logical.size()));
  key.insert(key.end(), logical.begin(), logical.end());
  key.push_back(world_size);
  // A body that never asks for the target (isa::get_nc_version) traces the same for every
  // generation and is kept under `key`; one that asks, under its generation's key.
  std::vector<std::int64_t> generation_key = key;
  generation_key.push_back(nc_version);

  std::lock_guard lock(s.mu);  // the user's body need not be re-entrant
  for (const std::vector<std::int64_t>* k : {&key, &generation_key})
    if (auto it = s.traces.find(*k); it != s.traces.end()) return it->second;

  Trace trace(s.name, logical, nc_version, world_size);
  std::vector<language::tensor> params;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const int id = trace.add_tensor(s.param_names[i], shapes[i], dtypes[i], ir::Memory::hbm_input, {});
    trace.ir().params.push_back(id);
    params.emplace_back(id);
  }
  const std::vector<int> outs = s.body(params);
  trace.refuse_unused_ranges();
  for (int id : outs) {
    const ir::TensorDecl& t = trace.ir().tensors.at(id);
    if (t.memory != ir::Memory::shared_hbm) {
      trace.fail("err_unsupported_memory", t.loc,
                 fmt::format("the kernel returns tensor {}, which is not an ndarray in shared_hbm", t.name));
    }
  }
  trace.ir().outputs = outs;
  std::vector<std::size_t> unproven = ir::validate(trace.ir(), logical, world_size);
  check_rank_constants(trace.ir());

  auto traced = std::make_shared<TracedKernel>();
  traced->ir = std::make_shared<const ir::KernelIR>(std::move(trace.ir()));
  traced->text = ir::print(*traced->ir);
  traced->hash = ir::hash_text(traced->text);
  traced->unproven = std::move(unproven);
  traced->stored_whole = ir::stored_whole(*traced->ir, logical);
  traced->memo = std::make_shared<LaunchMemo>();
  s.traces.emplace(traced->ir->nc_version == 0 ? std::move(key) : std::move(generation_key), traced);
  return traced;
}

const char* executor_name(Executor e) { return e == Executor::halide ? "halide" : "reference"; }

}  // namespace nki
