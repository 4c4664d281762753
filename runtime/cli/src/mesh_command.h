/** \file `nki mesh replica-groups` and `nki mesh sharding`: registration on the command line, and running. */
#pragma once

#include <memory>
#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace nki::cli {

/**
 * The `mesh` command and its two subcommands. The constructor registers them on the
 * app; after parsing, run() prints the result or throws nki::UserError (bad input),
 * writing nothing until everything is computed.
 */
class MeshCommand {
 public:
  explicit MeshCommand(CLI::App& app);
  ~MeshCommand();
  MeshCommand(const MeshCommand&) = delete;
  MeshCommand& operator=(const MeshCommand&) = delete;

  bool parsed() const;
  /** "nki mesh sharding", "nki mesh replica-groups" or "nki mesh": the prefix of its messages. */
  std::string name() const;
  /** Runs the parsed subcommand; returns the exit status. */
  int run(std::ostream& out) const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace nki::cli
