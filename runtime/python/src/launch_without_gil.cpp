/** \file The SIGINT handler shared by the launches that run from Python at once. */
#include "launch_without_gil.h"

#include <signal.h>

#include <mutex>

namespace nki::python {

namespace {

std::mutex installing;
int launches = 0;                 // guarded by `installing`
bool installed = false;          // guarded by `installing`
struct sigaction replaced {};  // constant while launches > 0, which the handler relies on

void stop_launches(int sig, siginfo_t* info, void* context) {
  request_interrupt();
  if ((replaced.sa_flags & SA_SIGINFO) != 0) {
    if (replaced.sa_sigaction != nullptr) replaced.sa_sigaction(sig, info, context);
  } else if (replaced.sa_handler != SIG_DFL && replaced.sa_handler != SIG_IGN && replaced.sa_handler != nullptr) {
    replaced.sa_handler(sig);
  }
}

}  // namespace

void raise_keyboard_interrupt(const Interrupted& stopped) {
  if (PyErr_CheckSignals() != 0 && !PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) throw pybind11::error_already_set();
  PyErr_Clear();
  PyErr_SetString(PyExc_KeyboardInterrupt, stopped.what());
  throw pybind11::error_already_set();
}

SigintStopsLaunches::SigintStopsLaunches() {
  const std::lock_guard lock(installing);
  if (launches++ > 0) return;
  clear_interrupt();
  struct sigaction sa {};
  sa.sa_sigaction = stop_launches;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  installed = ::sigaction(SIGINT, &sa, &replaced) == 0;
}

SigintStopsLaunches::~SigintStopsLaunches() {
  const std::lock_guard lock(installing);
  if (--launches > 0) return;
  if (installed) ::sigaction(SIGINT, &replaced, nullptr);
  installed = false;
  clear_interrupt();
}

}  // namespace nki::python
