/** \file The per-thread current trace. */
#include <fmt/format.h>

#include "nki/trace.h"

namespace nki {

namespace {
thread_local Trace* current_trace = nullptr;
}

Trace::Trace(std::string kernel, std::vector<std::int64_t> grid) : grid_(std::move(grid)), previous_(current_trace) {
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
  return id;
}

int Trace::add_tile(Shape shape, DType dtype) {
  ir_.tiles.push_back({std::move(shape), dtype});
  return static_cast<int>(ir_.tiles.size()) - 1;
}

void Trace::fail(const char* name, const SourceLoc& loc, std::string detail) const {
  throw UserError(name, ir_.name, loc, std::move(detail));
}

}  // namespace nki
