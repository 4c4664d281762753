/** \file The per-thread current trace. */
#include <fmt/format.h>

#include "nki/trace.h"

#include <algorithm>

namespace nki {

namespace {
thread_local Trace* current_trace = nullptr;
}

Trace::Trace(std::string kernel, std::vector<std::int64_t> grid, int nc_version, int world_size)
    : grid_(std::move(grid)), nc_version_(nc_version), world_size_(world_size), previous_(current_trace) {
  ir_.name = std::move(kernel);
  ir_.grid_rank = static_cast<int>(grid_.size());
  current_trace = this;
}

Trace::~Trace() { current_trace = previous_; }

Trace& Trace::current(const char* op, const std::source_location& where) {
  if (current_trace == nullptr) {
    throw UserError("err_outside_kernel", "", SourceLoc::from(where),
                    fmt::format("nl::{} was called outside a kernel; DSL calls are only valid while nki::jit "
                                "traces a kernel body",
                                op));
  }
  return *current_trace;
}

Trace* Trace::active() { return current_trace; }

int Trace::add_tensor(std::string name, Shape shape, DType dtype, ir::Memory memory, SourceLoc loc) {
  const int id = static_cast<int>(ir_.tensors.size());
  if (name.empty()) name = fmt::format("tensor{}", id);  // tiles print as %tN; tensors never collide
  ir_.tensors.push_back({id, std::move(name), std::move(shape), dtype, memory, std::move(loc)});
  tensor_scope_.push_back(innermost_loop());
  return id;
}

int Trace::add_tile(Shape shape, DType dtype, ir::Memory memory) {
  ir_.tiles.push_back({std::move(shape), dtype, memory});
  tile_scope_.push_back(innermost_loop());
  return static_cast<int>(ir_.tiles.size()) - 1;
}

int Trace::open_loop(ir::LoopKind kind, std::int64_t trip, SourceLoc loc) {
  const int id = static_cast<int>(ir_.loops.size());
  ir_.loops.push_back({trip, kind, innermost_loop(), loc});
  open_loop_ops_.push_back(static_cast<int>(ir_.body.size()));
  emit(ir::LoopOp{id, -1, std::move(loc)});
  open_loops_.push_back(id);
  return id;
}

void Trace::close_loop(int loop) {
  if (open_loops_.empty() || open_loops_.back() != loop) {
    throw InternalError(fmt::format("{}: loop {} closed out of order", ir_.name, loop));
  }
  open_loops_.pop_back();
  const int begin = open_loop_ops_.back();
  open_loop_ops_.pop_back();
  std::get<ir::LoopOp>(ir_.body[static_cast<std::size_t>(begin)]).end = static_cast<int>(ir_.body.size());
  emit(ir::LoopEndOp{loop});
}

bool Trace::in_scope(int loop) const {
  return loop < 0 || std::find(open_loops_.begin(), open_loops_.end(), loop) != open_loops_.end();
}

void Trace::fail(const char* name, const SourceLoc& loc, std::string detail) const {
  throw UserError(name, ir_.name, loc, std::move(detail));
}

}  // namespace nki
