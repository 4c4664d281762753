/** \file The trace being recorded on this thread: what DSL calls append to. */
#pragma once

#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

#include "nki/ir/kernel_ir.h"

namespace nki {

/**
 * Records one kernel body into IR. While alive it is the current trace of the
 * constructing thread; DSL calls outside any trace are a user error.
 */
class Trace {
 public:
  Trace(std::string kernel, std::vector<std::int64_t> grid);
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  /** The current trace; throws nki::UserError when a DSL call runs outside a kernel. */
  static Trace& current(const char* op, const std::source_location& where);
  /** The current trace, or nullptr outside a kernel. */
  static Trace* active();

  ir::KernelIR& ir() { return ir_; }
  const std::vector<std::int64_t>& grid() const { return grid_; }

  int add_tensor(std::string name, Shape shape, DType dtype, ir::Memory memory, SourceLoc loc);
  int add_tile(Shape shape, DType dtype);
  void emit(ir::Op op) { ir_.body.push_back(std::move(op)); }

  [[noreturn]] void fail(const char* name, const SourceLoc& loc, std::string detail) const;

 private:
  ir::KernelIR ir_;
  std::vector<std::int64_t> grid_;
  Trace* previous_;
};

}  // namespace nki
