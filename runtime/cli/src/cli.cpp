/** \file The `nki` command: its subcommands wired together, and how each failure is reported. */
#include "nki/cli.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>

#include "bench_command.h"
#include "cli/one_line.h"
#include "cache_command.h"
#include "compile_command.h"
#include "mesh_command.h"
#include "nki/interrupt.h"
#include "profile_command.h"
#include "cli/registered_name.h"
#include "run_command.h"
#include "unknown_option.h"

namespace nki::cli {

namespace {

/** The kernel name the parsed command was given (its `kernel` positional), or "". */
std::string asked_kernel(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) {
    const CLI::Option* kernel = sub->get_option_no_throw("kernel");
    if (kernel != nullptr && !kernel->results().empty()) return kernel->results().front();
  }
  return "";
}

}  // namespace

int run(int argc, const char* const* argv, const KernelRegistry& registry, std::ostream& out, std::ostream& err) {
  CLI::App app{"nki: NKI-style kernels on simulated NeuronCores"};
  app.name("nki");
  app.require_subcommand(1);

  CLI::App* list = app.add_subcommand("list", "List the registered kernels");

  const RunCommand run_cmd(app, registry);
  const MeshCommand mesh(app);
  const CacheCommand cache_cmd(app);
  const CompileCommand compile_cmd(app);
  const ProfileCommand profile(app, registry);
  const BenchCommand bench(app, registry);

  // CLI11 words a missing or unknown command as "A subcommand is required"; say which.
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) commands.push_back(sub->get_name());
  auto known = [&](const std::string& c) { return std::find(commands.begin(), commands.end(), c) != commands.end(); };
  const std::string first = argc > 1 ? argv[1] : "";
  if (argc < 2) {
    const std::string last = commands.back();
    err << fmt::format("nki: a command is required: {} or {} (see nki --help)\n",
                       fmt::join(commands.begin(), commands.end() - 1, ", "), last);
    return kExitBadInput;
  }
  if (!known(first) && first != "--help" && first != "-h") {
    err << fmt::format("nki: unknown {} \"{}\"; commands: {} (see nki --help)\n",
                       first.starts_with('-') ? "option" : "command", first, fmt::join(commands, ", "));
    return kExitBadInput;
  }
  // Before parsing: CLI11 reports a misspelled option as a required one missing.
  if (const std::optional<std::string> unknown = unknown_option(app, argc, argv)) {
    err << *unknown << "\n";
    return kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);  // --help
    std::string what = e.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      // CLI11 lists the extras in reverse ("4 --threads"); name them as given.
      std::vector<std::string> extras = list->parsed() ? list->remaining() : run_cmd.remaining();
      if (extras.empty()) extras = app.remaining();
      if (!extras.empty()) what = fmt::format("unexpected argument{} {}", extras.size() > 1 ? "s" : "", fmt::join(extras, " "));
    }
    err << (known(first) ? "nki " + first : std::string("nki")) << ": " << one_line(what) << "\n";
    return kExitBadInput;
  }

  const std::string command = list->parsed()          ? "nki list"
                              : mesh.parsed()        ? mesh.name()
                              : cache_cmd.parsed()   ? cache_cmd.name()
                              : compile_cmd.parsed() ? "nki compile"
                              : profile.parsed()     ? "nki profile"
                              : bench.parsed()       ? "nki bench"
                                                     : "nki run";
  try {
    if (list->parsed()) {
      for (const RegisteredKernel* k : registry.all()) out << fmt::format("{:<28} {}\n", k->name, k->description);
      return 0;
    }
    if (mesh.parsed()) return mesh.run(out);
    if (cache_cmd.parsed()) return cache_cmd.run(out);
    if (compile_cmd.parsed()) return compile_cmd.run(registry, out, err);
    if (profile.parsed()) return profile.run(out, err);
    if (bench.parsed()) return bench.run(out, err);
    return run_cmd.run(out, err);
  } catch (const Interrupted&) {
    err << command << ": interrupted (SIGINT): every core stopped, no output was written\n";
    return kExitInterrupted;
  } catch (const UserError& e) {
    const UserError named = in_registered_name(e, registry, asked_kernel(app));
    err << (command + ": " + one_line(named.what()) + "\n");  // one write: ranks under mpirun share the stream
    return kExitBadInput;
  } catch (const InternalError& e) {
    err << (command + ": " + one_line(e.what()) + "\n");  // one write: ranks under mpirun share the stream
    return 3;
  } catch (const std::exception& e) {
    err << (command + ": " + one_line(e.what()) + "\n");  // one write: ranks under mpirun share the stream
    return 1;
  }
}

}  // namespace nki::cli
