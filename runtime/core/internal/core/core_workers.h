/** \file Running simulated NeuronCores at once, each on a thread of its own. */
#pragma once

#include <cstddef>
#include <functional>

namespace nki {

/**
 * Runs `body(i)` for every i in [0, n), each on a thread of its own and all at the same time
 * (never two bodies taking turns on one thread): body 0 on the caller, the others on threads
 * of their own while the caller waits for them; so bodies may rendezvous with each other
 * (collectives, core barriers). A waiter watches for at most 50 us, then sleeps on a futex (a
 * bounded spin: README, "Cores and HBM"), and a thread
 * of its own always runs: a host that limits or occupies a thread pool cannot leave a body
 * unstarted. After every body has returned, the first failure (by index) is rethrown. The
 * threads are kept, asleep, for the next call: a launch wakes its cores' threads instead of
 * starting and joining them. Why not TBB workers: README, "Cores and HBM".
 */
void run_on_own_threads(std::size_t n, const std::function<void(std::size_t)>& body);

}  // namespace nki
