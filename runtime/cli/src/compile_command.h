/** \file `nki compile`: the compiler driver's flags, registration and running (docs/compile.md). */
#pragma once

#include <memory>
#include <ostream>

namespace CLI {
class App;
}

namespace nki {
class KernelRegistry;
}

namespace nki::cli {

/**
 * `nki compile KERNEL (--input F.npy ... | --shape S ... --dtype D) [--target T] [--lnc N]
 * [--spmd] [--mesh ...] [--cores N] [--grid SPEC] [--output DIR] [--dump-options [FILE]]`,
 * plus the internal --distribution-strategy, --distribution-type-llm-training and
 * --layer-unroll-factor that only --help-hidden-list shows.
 */
class CompileCommand {
 public:
  explicit CompileCommand(CLI::App& app);
  ~CompileCommand();
  CompileCommand(const CompileCommand&) = delete;
  CompileCommand& operator=(const CompileCommand&) = delete;
  bool parsed() const;
  int run(const KernelRegistry& registry, std::ostream& out, std::ostream& err) const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace nki::cli
