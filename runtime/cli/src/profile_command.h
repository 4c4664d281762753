/** \file `nki profile`: registration on the command line, and running. */
#pragma once

#include <memory>
#include <ostream>

#include "nki/registry.h"

namespace CLI {
class App;
}

namespace nki::cli {

/**
 * `nki profile KERNEL (--input F.npy ... | --shape PxF ... [--dtype D]) [--grid SPEC]
 * [--target T] [--trace out.json] [--json] [--autotune | --config "P=64,F=2048"]`: the cost
 * model's estimate of one launch; of a tunable kernel, the configuration `nki bench` recorded
 * or the one given. The constructor registers the command; run() prints the report or throws
 * nki::UserError (bad input) having written nothing.
 */
class ProfileCommand {
 public:
  ProfileCommand(CLI::App& app, const KernelRegistry& registry);
  ~ProfileCommand();
  ProfileCommand(const ProfileCommand&) = delete;
  ProfileCommand& operator=(const ProfileCommand&) = delete;

  bool parsed() const;
  /** Notes (no autotuned configuration) go to `err`. */
  int run(std::ostream& out, std::ostream& err) const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace nki::cli
