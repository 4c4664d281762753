/** \file SIGINT during `nki run`: the launch stops and the command exits 130 with no output written. */
#pragma once

#include <signal.h>

namespace nki::cli {

/**
 * While alive, SIGINT asks the launch to stop (nki::request_interrupt) instead of killing
 * the process, so `nki run` can remove its temporaries and exit with 130. The handler is
 * one-shot: a second SIGINT kills the process as usual.
 */
class SigintStopsLaunch {
 public:
  SigintStopsLaunch();
  ~SigintStopsLaunch();
  SigintStopsLaunch(const SigintStopsLaunch&) = delete;
  SigintStopsLaunch& operator=(const SigintStopsLaunch&) = delete;

  /** Throws nki::Interrupted when SIGINT arrived: between steps that do not poll on their own. */
  static void check();

 private:
  struct sigaction previous_ {};
  bool installed_ = false;
};

}  // namespace nki::cli
