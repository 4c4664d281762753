/** \file Running simulated NeuronCores at once, each on a TBB worker of its own. */
#pragma once

#include <cstddef>
#include <functional>

namespace nki {

/**
 * Runs `body(i)` for every i in [0, n), each on a TBB worker thread of its own and all
 * at the same time (never two bodies taking turns on one thread), while the caller
 * waits; so bodies may rendezvous with each other. Each gets a task arena of one slot
 * with none reserved for the caller. TBB's thread cap is raised (never lowered) when n
 * workers need more threads than the CPU count. After every body has returned, the
 * first failure (by index) is rethrown.
 */
void run_on_own_workers(std::size_t n, const std::function<void(std::size_t)>& body);

/**
 * The same on n threads of its own (std::thread), outside TBB: for bodies that wait for each
 * other (collectives' rendezvous). A TBB worker is only lent: a host application that limits
 * TBB's concurrency (global_control) below n, or keeps its workers busy, would leave a body
 * that others wait for unstarted, and the rendezvous would hang. A thread of its own always
 * runs. The bodies block while they wait (no spinning).
 */
void run_on_own_threads(std::size_t n, const std::function<void(std::size_t)>& body);

}  // namespace nki
