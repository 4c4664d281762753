/**
 * \file Registers and control flow decided at run time: isa.VirtualRegister and the register
 * instructions, nl.dynamic_range, nl.fori_loop, nl.while_loop; nl.no_reorder and nl.device_print.
 *
 * A register is a 32-bit integer of one instance, held by the executor (every instance's
 * registers start at 0). Its value exists only while the kernel runs, so a register is never
 * a C++ integer: it reaches tensors through register_store and loops through their bounds.
 */
#pragma once

#include <concepts>
#include <cstdint>
#include <source_location>
#include <string>
#include <utility>

namespace nki::isa {

/** isa.VirtualRegister: a handle to one of the instance's 32-bit registers (made by register_alloc). */
class VirtualRegister {
 public:
  explicit VirtualRegister(int id) : id_(id) {}
  int id() const { return id_; }

 private:
  int id_;
};

/** isa.register_alloc(): a new register (its value 0 until written). */
VirtualRegister register_alloc(std::source_location loc = std::source_location::current());
/** isa.register_alloc(x): a new register holding `x` (an int32 value). */
VirtualRegister register_alloc(std::int64_t x, std::source_location loc = std::source_location::current());
/** isa.register_move: dst = the constant `value` (an int32 value). */
void register_move(const VirtualRegister& dst, std::int64_t value,
                   std::source_location loc = std::source_location::current());
/** isa.register_move: dst = src's value. */
void register_move(const VirtualRegister& dst, const VirtualRegister& src,
                   std::source_location loc = std::source_location::current());
/**
 * isa.register_load: dst = the single element of `src`, an SBUF or HBM tensor of exactly one
 * element ([1] or [1, 1]) of an integer dtype of at most 32 bits; a uint32 above 2^31 - 1 wraps.
 */
void register_load(const VirtualRegister& dst, const nl::tensor& src,
                   std::source_location loc = std::source_location::current());
/** As above from a one-element window of a tensor (t[i, j]), e.g. a bound per instance. */
void register_load(const VirtualRegister& dst, const nl::access& src,
                   std::source_location loc = std::source_location::current());
/** isa.register_store: the single element of `dst` (as register_load's source) = src, wrapped to dst's dtype. */
void register_store(const nl::tensor& dst, const VirtualRegister& src,
                    std::source_location loc = std::source_location::current());
void register_store(const nl::access& dst, const VirtualRegister& src,
                    std::source_location loc = std::source_location::current());

}  // namespace nki::isa

namespace nki::language {

/**
 * nl.device_print: when the kernel runs, prints `prefix` and the values of `src` (an SBUF or
 * HBM tensor or window, read as nl::load does, or a tile) as one line per call and instance:
 * "<prefix> [<program ids>] <dtype>[<shape>]: v0 v1 ..." (row-major). Lines go to the launch's
 * LaunchOptions::device_print stream (std::cout by default) once every core has run, in
 * instance order, each instance's lines in the order it printed them; both executors print the same text.
 */
void device_print(const std::string& prefix, const access& src, std::source_location loc = std::source_location::current());
void device_print(const std::string& prefix, const tensor& src, std::source_location loc = std::source_location::current());
void device_print(const std::string& prefix, const tile& src, std::source_location loc = std::source_location::current());

/** A bound of a dynamic loop: an integer known when tracing, or a register read when the loop starts. */
struct loop_bound {
  int reg = -1;
  std::int64_t value = 0;
  loop_bound(std::int64_t v) : value(v) {}                  // NOLINT
  loop_bound(int v) : value(v) {}                           // NOLINT
  loop_bound(const isa::VirtualRegister& r) : reg(r.id()) {}  // NOLINT
};

namespace detail {
/** Opens a dynamic_range loop; returns the loop id and sets `induction` to its register. */
int open_dynamic_loop(const char* op, loop_bound lower, loop_bound upper, std::int64_t step, int& induction,
                      std::source_location loc);
/** Opens a while_loop on a copy of `init`; returns the loop id and sets `value` to the body's register. */
int open_while_loop(const isa::VirtualRegister& init, int& value, std::source_location loc);
/** Closes a while_loop: its next condition is `next`. */
void close_while_loop(int loop, const isa::VirtualRegister& next, std::source_location loc);
/** Closes loop `loop` of the current trace (not while an exception unwinds). */
void close_dynamic_loop(int loop);
/** Trace::await_range_for, range_for_begins and range_for_ends of the current trace, for dynamic_range. */
void await_range_for(int loop);
void range_for_begins(int loop);
void range_for_ends(int loop);
}  // namespace detail

/**
 * nl.dynamic_range: a loop whose trip count is known only when it starts running, range(start,
 * stop, step) with start and stop integers or registers and step a positive integer. As a
 * range-for it traces its body once; the loop variable is the induction register (start +
 * step * i on iteration i; writing it does not change the loop).
 */
class dynamic_loop_range {
 public:
  dynamic_loop_range(loop_bound start, loop_bound stop, std::int64_t step, std::source_location loc)
      : loop_(detail::open_dynamic_loop("dynamic_range", start, stop, step, induction_, loc)) {
    detail::await_range_for(loop_);
  }
  ~dynamic_loop_range() { detail::close_dynamic_loop(loop_); }
  dynamic_loop_range(const dynamic_loop_range&) = delete;
  dynamic_loop_range& operator=(const dynamic_loop_range&) = delete;

  struct sentinel {};
  struct iterator {
    int reg;
    int loop;
    bool done = false;
    isa::VirtualRegister operator*() const { return isa::VirtualRegister(reg); }
    iterator& operator++() {
      detail::range_for_ends(loop);
      done = true;
      return *this;
    }
    bool operator!=(sentinel) const { return !done; }
  };
  iterator begin() const {
    detail::range_for_begins(loop_);
    return {induction_, loop_, false};
  }
  sentinel end() const { return {}; }

 private:
  int induction_ = -1;
  int loop_;
};
inline dynamic_loop_range dynamic_range(loop_bound stop, std::source_location loc = std::source_location::current()) {
  return {0, stop, 1, loc};
}
inline dynamic_loop_range dynamic_range(loop_bound start, loop_bound stop, std::int64_t step = 1,
                                        std::source_location loc = std::source_location::current()) {
  return {start, stop, step, loc};
}

/**
 * nl.fori_loop: body(i) for i in range(lower, upper, step), i the induction register; lower
 * and upper integers or registers, step a positive integer. Traced once; runs on device.
 */
template <class Body>
void fori_loop(loop_bound lower, loop_bound upper, Body&& body, std::int64_t step = 1,
               std::source_location loc = std::source_location::current()) {
  int induction = -1;
  const int loop = detail::open_dynamic_loop("fori_loop", lower, upper, step, induction, loc);
  std::forward<Body>(body)(isa::VirtualRegister(induction));
  detail::close_dynamic_loop(loop);
}

/**
 * nl.while_loop: r = init; while r != 0: r = body(r). The body gets the condition's value in
 * a register of its own and returns the register holding the next condition. A loop still
 * running after ir::kWhileLoopLimit iterations in one instance is err_while_loop_limit.
 */
template <class Body>
void while_loop(const isa::VirtualRegister& init, Body&& body,
                std::source_location loc = std::source_location::current()) {
  int value = -1;
  const int loop = detail::open_while_loop(init, value, loc);
  const isa::VirtualRegister next = std::forward<Body>(body)(isa::VirtualRegister(value));
  detail::close_while_loop(loop, next, loc);
}

/**
 * nl.no_reorder: instructions traced while it is alive keep their program order. Every
 * executor here already runs each instance's instructions in program order, so the block
 * changes no value; it refuses dynamic loops inside it, as NKI does. `nl::no_reorder block;`
 * or nl::no_reorder([&] { ... }).
 */
class no_reorder {
 public:
  explicit no_reorder(std::source_location loc = std::source_location::current());
  template <std::invocable Body>
  explicit no_reorder(Body&& body, std::source_location loc = std::source_location::current()) : no_reorder(loc) {
    std::forward<Body>(body)();
  }
  ~no_reorder();
  no_reorder(const no_reorder&) = delete;
  no_reorder& operator=(const no_reorder&) = delete;

 private:
  void* trace_ = nullptr;
};

}  // namespace nki::language
