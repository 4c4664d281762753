/** \file Several cores' instances shared out between the threads that run them: a thread whose core is done takes over the end of another's. */
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/program.h"
#include "core_run.h"
#include "nki/instance_ids.h"

namespace nki {

/** A busy core whose instances SharedBatches shares out, and its name for errors. */
struct SharedCore {
  const InstanceIds* instances;
  CoreName who;
};

/**
 * The instances of several cores cut into batches as run_core_instances cuts them
 * (for_each_batch), one thread per core. Thread t takes core t's
 * batches from the front; when none is left it takes the other cores' from their backs, so a
 * thread that started late or runs on a slower (or shared) CPU leaves its last batches to the
 * others instead of holding the launch up. Only for cores that never meet (no core_barrier,
 * sendrecv or rank link): their instances run in no order (NKI's; checked mode reports a kernel
 * that depends on one), so which thread runs a batch cannot change a result.
 */
class SharedBatches {
 public:
  SharedBatches(std::span<const SharedCore> cores);

  /**
   * Runs batches on `runner` as core t's thread until none is left in any core. False when
   * `stop` was set (another thread failed): the launch is failing; interrupts and failures as
   * run_instance_batch.
   */
  bool run(std::size_t t, const std::string& kernel, CoreRunner& runner, std::atomic<bool>& stop);

 private:
  struct Batch {
    std::uint32_t first, count;
  };
  /** One core's batches and which are taken: the untaken ones are [front, back), packed in one word. */
  struct alignas(64) Core {
    SharedCore core;
    std::vector<Batch> batches;
    std::atomic<std::uint64_t> ends{0};  // front in the low 32 bits, back in the high
    /** The first untaken batch, or with `from_back` the last; none when all are taken. */
    std::optional<Batch> take(bool from_back);
  };
  std::unique_ptr<Core[]> cores_;
  std::size_t count_ = 0;
};

}  // namespace nki
