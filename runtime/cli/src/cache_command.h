/** \file `nki cache list | stats | clear [--json]`: registration and running. */
#pragma once

#include <memory>
#include <ostream>
#include <string>

namespace CLI {
class App;
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

}  // namespace nki::cli
