/** \file `nki run`: registration on the command line, and running. */
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "nki/registry.h"

namespace CLI {
class App;
}

namespace nki::cli {

/**
 * `nki run KERNEL --input F.npy ... --output OUT.npy [--dtype D] [--grid SPEC] [--schedule FILE]
 * [--executor halide|reference] [--target T] [--checked] [--dump-ir] [--autotune]`: one launch
 * on .npy inputs, its output written as .npy. The constructor registers the command; run()
 * launches or throws nki::UserError (bad input) having written nothing, and stops at SIGINT
 * (nki::Interrupted) leaving no file.
 */
class RunCommand {
 public:
  RunCommand(CLI::App& app, const KernelRegistry& registry);
  ~RunCommand();
  RunCommand(const RunCommand&) = delete;
  RunCommand& operator=(const RunCommand&) = delete;

  bool parsed() const;
  /** What the parser left over: the arguments an "unexpected argument" message names. */
  std::vector<std::string> remaining() const;
  int run(std::ostream& out, std::ostream& err) const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace nki::cli
