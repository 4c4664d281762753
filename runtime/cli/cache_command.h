/** \file `nki cache list | stats | clear [--json]` and `nki compile`: registration and running. */
#pragma once

#include <memory>
#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace nki {
class KernelRegistry;
}

namespace nki::cli {

/** The `cache` command and its subcommands (the pattern of MeshCommand). */
class CacheCommand {
 public:
  explicit CacheCommand(CLI::App& app);
  ~CacheCommand();
  CacheCommand(const CacheCommand&) = delete;
  CacheCommand& operator=(const CacheCommand&) = delete;
  bool parsed() const;
  std::string name() const;
  int run(std::ostream& out) const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/** `nki compile KERNEL (--input F.npy ... | --shape S ... --dtype D) [--grid SPEC] [--spmd]`. */
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
