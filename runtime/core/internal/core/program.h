/** \file The executor interface: a kernel ready to run on any core, as both executors (compiled and reference) provide it. */
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nki/dtype.h"
#include "nki/shape.h"

namespace nki {

/** One tensor of the kernel (indexed by IR tensor id) as a launch sees it. */
struct TensorBinding {
  std::byte* data;
  Shape shape;
  std::vector<std::int64_t> strides;  ///< in elements
  DType dtype;
};

/** A line nl.device_print wrote, with the instance that wrote it (lines are output in instance order). */
struct DevicePrint {
  std::vector<std::int64_t> pid;
  std::string text;
};

class RankLink;  // core/rank_link.h

/**
 * Runs instances, one batch at a time on one thread. A launch binds one per thread that runs
 * instances: cores that never meet may share one (cores on the calling thread) or have their
 * instances spread over several (threads sharing out batches, launch/src/shared_batches.h).
 */
class CoreRunner {
 public:
  virtual ~CoreRunner() = default;
  /** The world the core's instances run in (rank_id, collectives); set before the first batch. */
  void set_rank_link(RankLink* link) { link_ = link; }
  /** The nl.device_print lines of the instances run so far, in the order each instance wrote them; cleared. */
  virtual std::vector<DevicePrint> take_device_prints() { return {}; }
  /**
   * Runs `count` instances of one core: `pid`, then pid with its last axis + 1, ... (a run
   * of consecutive ids; count is 1 for a grid of rank 0). Each instance behaves as if run alone.
   */
  virtual void run_batch(std::span<const std::int64_t> pid, std::int64_t count) = 0;

 protected:
  RankLink* link_ = nullptr;
};

/** A kernel ready to run on any core and any instance (SPMD: ids are runtime values). */
class Program {
 public:
  virtual ~Program() = default;
  virtual std::unique_ptr<CoreRunner> bind(const std::vector<TensorBinding>& tensors) const = 0;
  /** Before any core runs: checked mode poisons the outputs here. */
  virtual void begin_launch(const std::vector<TensorBinding>&) const {}
  /** After every core has run: checked mode reports outputs no instance wrote. */
  virtual void end_launch(const std::vector<TensorBinding>&) const {}
};

}  // namespace nki
