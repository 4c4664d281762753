/** \file The one-shot SIGINT handler of `nki run`. */
#include "sigint_stops_launch.h"

#include "nki/interrupt.h"

namespace nki::cli {

SigintStopsLaunch::SigintStopsLaunch() {
  clear_interrupt();
  struct sigaction sa {};
  sa.sa_handler = [](int) { request_interrupt(); };
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = static_cast<int>(SA_RESETHAND);
  installed_ = ::sigaction(SIGINT, &sa, &previous_) == 0;
}

SigintStopsLaunch::~SigintStopsLaunch() {
  if (installed_) ::sigaction(SIGINT, &previous_, nullptr);
  clear_interrupt();
}

void SigintStopsLaunch::check() {
  if (interrupt_requested()) throw Interrupted("interrupted before the outputs were written");
}

}  // namespace nki::cli
