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
  refuse_outside_range_for();
  const int id = static_cast<int>(ir_.tensors.size());
  if (name.empty()) name = fmt::format("tensor{}", id);  // tiles print as %tN; tensors never collide
  ir_.tensors.push_back({id, std::move(name), std::move(shape), dtype, memory, std::move(loc)});
  tensor_scope_.push_back(innermost_loop());
  return id;
}

int Trace::add_tile(Shape shape, DType dtype, ir::Memory memory) {
  refuse_outside_range_for();
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
  open_loop_range_for_.push_back(RangeFor::not_a_range);
  return id;
}

void Trace::await_range_for(int loop) {
  if (open_loops_.empty() || open_loops_.back() != loop) {
    throw InternalError(fmt::format("{}: loop {} awaits its range-for but is not the innermost", ir_.name, loop));
  }
  open_loop_range_for_.back() = RangeFor::awaited;
}

void Trace::range_for_begins(int loop) {
  const auto at = std::find(open_loops_.begin(), open_loops_.end(), loop);
  if (at == open_loops_.end()) {
    throw InternalError(fmt::format("{}: a range-for begins over loop {}, which is not open", ir_.name, loop));
  }
  RangeFor& state = open_loop_range_for_[static_cast<std::size_t>(at - open_loops_.begin())];
  if (state != RangeFor::awaited) {
    const char* op = ir::loop_kind_name(ir_.loops[static_cast<std::size_t>(loop)].kind);
    fail("err_stored_loop_range", ir_.loops[static_cast<std::size_t>(loop)].loc,
         fmt::format("nl::{} is iterated a second time; a range traces one loop: make one for each for statement", op));
  }
  state = RangeFor::iterating;
}

void Trace::range_for_ends(int loop) {
  if (!open_loops_.empty() && open_loops_.back() == loop) open_loop_range_for_.back() = RangeFor::ended;
}

void Trace::refuse_outside_range_for() const {
  if (open_loops_.empty()) return;
  const RangeFor state = open_loop_range_for_.back();
  if (state == RangeFor::awaited || state == RangeFor::ended) refuse_stored_range(open_loops_.back(), state);
}

namespace {
/** What every err_stored_loop_range message ends with. */
std::string iterate_where_made(const char* op) {
  return fmt::format("iterate a range where it is made: `for (auto i : nl::{}(...))`", op);
}
}  // namespace

void Trace::refuse_stored_range(int loop, RangeFor state) const {
  const ir::LoopInfo& l = ir_.loops[static_cast<std::size_t>(loop)];
  const char* op = ir::loop_kind_name(l.kind);
  const std::string fix = iterate_where_made(op);
  if (state == RangeFor::awaited) {
    fail("err_stored_loop_range", l.loc,
         fmt::format("nl::{} is stored in a variable, not iterated where it is made: its loop opens with the range, "
                     "so what follows would be traced into the loop; {}",
                     op, fix));
  }
  fail("err_stored_loop_range", l.loc,
       fmt::format("something is traced after the for over this nl::{} while the range lives on (it is stored in a "
                   "variable): its loop closes only when the range is destroyed, so that would be traced into the "
                   "loop; {}",
                   op, fix));
}

void Trace::refuse_unused_ranges() const {
  if (unused_range_ < 0) return;
  const ir::LoopInfo& l = ir_.loops[static_cast<std::size_t>(unused_range_)];
  const char* op = ir::loop_kind_name(l.kind);
  fail("err_stored_loop_range", l.loc,
       fmt::format("nl::{} is made but never iterated (stored in a variable?); {}", op, iterate_where_made(op)));
}

void Trace::close_loop(int loop) {
  if (open_loops_.empty() || open_loops_.back() != loop) {
    throw InternalError(fmt::format("{}: loop {} closed out of order", ir_.name, loop));
  }
  if (open_loop_range_for_.back() == RangeFor::awaited && unused_range_ < 0) unused_range_ = loop;
  open_loops_.pop_back();
  open_loop_range_for_.pop_back();
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
