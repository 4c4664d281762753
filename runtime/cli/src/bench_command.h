/** \file `nki bench`: tile sweeps of a tunable kernel, registration on the command line, and running. */
#pragma once

#include <memory>
#include <ostream>

#include "nki/registry.h"

namespace CLI {
class App;
}

namespace nki::cli {

/**
 * `nki bench KERNEL --sweep "P=32,64,128;F=64..8192" (--shape S ... [--dtype D] | --input F.npy ...)
 * [--target T] [--metric simulated|host] [--iters N] [--csv FILE] [--json] [--json-file FILE] [--plot FILE.png]
 * [--no-record]`:
 * every configuration of the sweep is checked against the hardware (a forbidden one is listed
 * with the reason), estimated by the cost model and timed here; a table sorted by the metric,
 * the best marked (with FLOP/s and utilization columns for a kernel with FLOPs), goes to stdout
 * and the best configuration is recorded for autotuned launches (saying so on stderr when it
 * replaces a record of another configuration). The output files are written only when the
 * whole sweep succeeded.
 */
class BenchCommand {
 public:
  BenchCommand(CLI::App& app, const KernelRegistry& registry);
  ~BenchCommand();
  BenchCommand(const BenchCommand&) = delete;
  BenchCommand& operator=(const BenchCommand&) = delete;

  bool parsed() const;
  /** Progress goes to `err`: a bar redrawn in place when `err` is std::cerr on a terminal, plain lines otherwise. */
  int run(std::ostream& out, std::ostream& err) const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace nki::cli
