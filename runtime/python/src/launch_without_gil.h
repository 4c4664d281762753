/** \file Launches from Python: the GIL released while they run, Ctrl-C stopping them. */
#pragma once

#include <pybind11/pybind11.h>

#include "nki/interrupt.h"

namespace nki::python {

/**
 * While alive, SIGINT also asks every running launch to stop (nki::request_interrupt) and then
 * goes to the handler it replaced (Python's, which raises KeyboardInterrupt when the
 * interpreter next runs). One handler serves every thread launching at once: the first
 * installs it, the last restores the one it replaced and clears the request.
 */
class SigintStopsLaunches {
 public:
  SigintStopsLaunches();
  ~SigintStopsLaunches();
  SigintStopsLaunches(const SigintStopsLaunches&) = delete;
  SigintStopsLaunches& operator=(const SigintStopsLaunches&) = delete;
};

/**
 * Raises KeyboardInterrupt saying where `stopped` stopped the launch, in place of the one
 * Python's own handler has pending for the same SIGINT; a SIGINT handler of the user's that
 * raised something else has that raised instead.
 */
[[noreturn]] void raise_keyboard_interrupt(const Interrupted& stopped);

/**
 * `work()` (a launch, a profile, a sweep) with the GIL released, so other Python threads run
 * meanwhile; it must not touch Python objects. Ctrl-C stops it: KeyboardInterrupt is raised
 * once every core has stopped, and nothing it would have returned is kept.
 */
template <class Work>
auto without_gil(Work&& work) -> decltype(work()) {
  const SigintStopsLaunches sigint;
  try {
    const pybind11::gil_scoped_release release;
    return work();
  } catch (const Interrupted& e) {
    raise_keyboard_interrupt(e);
  }
}

}  // namespace nki::python
