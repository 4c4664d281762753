/** \file Stopping launches from outside them: a request a signal handler may make. */
#pragma once

#include <stdexcept>
#include <string>

namespace nki {

/**
 * Thrown by a launch that stopped because an interrupt was requested. Every core has
 * stopped before its next batch of instances when it arrives; the launch's outputs are
 * dropped. Neither a user error nor a bug.
 */
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/**
 * Asks every running and future launch of this process to stop (each core stops before
 * its next batch, and the launch throws nki::Interrupted). Async-signal-safe: one store
 * to a lock-free atomic, so a SIGINT handler may call it.
 */
void request_interrupt() noexcept;
/** Whether request_interrupt() was called since the last clear_interrupt(). */
bool interrupt_requested() noexcept;
/** Lets launches run again after an interrupt. */
void clear_interrupt() noexcept;

}  // namespace nki
