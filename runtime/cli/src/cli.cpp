/** \file The `nki` command: list, run, compile, cache, mesh and profile. */
#include "nki/cli.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "bench_command.h"
#include "cache_command.h"
#include "compile_command.h"
#include "mesh_command.h"
#include "profile_command.h"
#include "nki/autotune.h"
#include "nki/simulator/target.h"
#include "nki/communicator.h"
#include "nki/interrupt.h"
#include "nki/npy.h"
#include "pending_file.h"

namespace nki::cli {

namespace {

struct RunArgs {
  std::string kernel;
  std::vector<std::string> inputs;
  std::string output;
  std::string dtype = "fp32";
  std::optional<std::string> grid;
  std::optional<std::string> schedule;
  std::string executor = "halide";
  std::string target = "trn2";
  bool checked = false;
  bool dump_ir = false;
  bool autotune = false;
};

/** An error message as the single line the command promises: newlines become "; ". */
std::string one_line(std::string_view what) {
  std::string s;
  for (char ch : what) {
    if (ch == '\n') {
      if (!s.empty() && s.back() != ' ') s += "; ";
    } else {
      s += ch;
    }
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == ';')) s.pop_back();
  return s;
}

/** Whether two paths name the same file (after ".", ".." and symlinks), whether or not it exists yet. */
bool same_path(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const std::filesystem::path x = std::filesystem::weakly_canonical(a, ea), y = std::filesystem::weakly_canonical(b, eb);
  return ea || eb ? a == b : x == y;
}

std::string schedule_json(const std::string& kernel, const LaunchResult& r) {
  nlohmann::ordered_json j;
  j["kernel"] = kernel;
  j["grid"] = r.grid.logical_shape();
  j["grid_spec"] = r.grid.str();
  nlohmann::ordered_json cores = nlohmann::ordered_json::array();
  for (const CoreSchedule& c : r.cores) cores.push_back({{"nc", c.nc}, {"instances", c.instances}});
  j["cores"] = cores;
  return j.dump(2) + "\n";
}

/**
 * While alive, SIGINT asks the launch to stop (nki::request_interrupt) instead of killing
 * the process, so `nki run` can remove its temporaries and exit with 130. The handler is
 * one-shot: a second SIGINT kills the process as usual.
 */
class SigintStopsLaunch {
 public:
  SigintStopsLaunch() {
    clear_interrupt();
    struct sigaction sa {};
    sa.sa_handler = [](int) { request_interrupt(); };
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = static_cast<int>(SA_RESETHAND);
    installed_ = ::sigaction(SIGINT, &sa, &previous_) == 0;
  }
  ~SigintStopsLaunch() {
    if (installed_) ::sigaction(SIGINT, &previous_, nullptr);
    clear_interrupt();
  }
  SigintStopsLaunch(const SigintStopsLaunch&) = delete;
  SigintStopsLaunch& operator=(const SigintStopsLaunch&) = delete;

  /** Throws nki::Interrupted when SIGINT arrived: between steps that do not poll on their own. */
  static void check() {
    if (interrupt_requested()) throw Interrupted("interrupted before the outputs were written");
  }

 private:
  struct sigaction previous_ {};
  bool installed_ = false;
};

int run_kernel(const RunArgs& a, const KernelRegistry& registry, std::ostream& out, std::ostream& err) {
  const RegisteredKernel* k = registry.find(a.kernel);
  if (k == nullptr) {
    throw UserError("err_unknown_kernel", "", {},
                    fmt::format("unknown kernel \"{}\"; known kernels: {}", a.kernel, fmt::join(registry.names(), ", ")));
  }
  const TunableKernel* tunable = a.autotune ? registry.find_tunable(a.kernel) : nullptr;
  if (a.autotune && tunable == nullptr) {
    throw UserError("err_not_tunable", k->name, {},
                    fmt::format("--autotune: has no tile parameters to tune; tunable kernels: {}",
                                fmt::join(registry.tunable_names(), ", ")));
  }
  if (a.inputs.size() != k->kernel.arity()) {
    throw UserError("err_argument_count", k->name, {},
                    fmt::format("takes {} --input files, {} given", k->kernel.arity(), a.inputs.size()));
  }
  // The flags first (cheap), then the files.
  if (a.dtype != "bf16" && a.dtype != "fp16" && a.dtype != "fp32") {
    throw UserError("err_unknown_dtype", "", {},
                    fmt::format("unknown --dtype \"{}\"; expected bf16, fp16 or fp32", a.dtype));
  }
  const DType dtype = *parse_dtype(a.dtype);
  if (a.executor != "halide" && a.executor != "reference") {
    throw UserError("err_unknown_executor", "", {},
                    fmt::format("unknown --executor \"{}\"; expected halide or reference", a.executor));
  }
  const Executor executor = a.executor == "reference" ? Executor::reference : Executor::halide;
  (void)sim::target_spec(a.target);  // an unknown --target fails before any file is read
  std::optional<GridSpec> requested_grid;
  if (a.grid) requested_grid = parse_grid(*a.grid);
  if (a.output.empty()) throw UserError("err_output_not_writable", "", {}, "--output is an empty path");
  if (a.schedule && a.schedule->empty()) throw UserError("err_output_not_writable", "", {}, "--schedule is an empty path");
  if (a.schedule && same_path(*a.schedule, a.output)) {
    throw UserError("err_output_not_writable", "", {},
                    fmt::format("--schedule and --output name the same file \"{}\"", a.output));
  }

  // Claim the output files before any work (reading inputs included): an unwritable path
  // fails now, and nothing partial is left whatever fails later.
  // Under MPI every rank reads the inputs and runs its chip's instances; rank 0 writes the
  // files. A step failing on one rank fails it on all, so none waits for the others.
  Communicator& world = communicator();
  std::optional<PendingFile> output, schedule;
  std::vector<NpyArray> arrays;
  std::vector<Shape> shapes;
  on_every_rank(world, [&] {
    if (world.rank() == 0) {
      output.emplace(a.output);
      if (a.schedule) schedule.emplace(*a.schedule);
    }
    for (const std::string& path : a.inputs) {
      arrays.push_back(read_npy(path));
      shapes.push_back(arrays.back().shape);
      SigintStopsLaunch::check();
    }
  });
  std::optional<BoundLaunch> tuned;  // --autotune: the recorded configuration's kernel and grid
  if (tunable) {
    std::vector<TensorSpec> specs;
    for (const NpyArray& x : arrays) specs.push_back({x.shape, is_integer(x.dtype) ? x.dtype : dtype});
    autotune::TunedLaunch t = autotune::tuned_launch(*tunable, specs, a.target);
    if (!t.autotuned) err << fmt::format("nki run: {}: no autotuned configuration ({}); using {}\n", k->name, t.miss, t.config.str());
    tuned = t.launch;
  }
  const GridSpec expected = tuned ? tuned->grid() : k->default_grid(shapes);  // validates the shapes
  GridSpec grid = expected;
  if (requested_grid) {
    grid = *requested_grid;
    check_grid_fits(*k, grid, expected, shapes);
  }

  sim::Device device(a.target, 2);
  std::vector<Tensor> args;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    // An integer or bool file keeps its dtype and exact values; a float file is converted to --dtype.
    if (is_integer(arrays[i].dtype)) {
      args.push_back(Tensor::from_values(device, shapes[i], arrays[i].dtype, arrays[i].values));
    } else {
      args.push_back(Tensor::from_floats(shapes[i], dtype, arrays[i].data, device));
    }
  }
  arrays.clear();

  SigintStopsLaunch::check();
  const Kernel& kernel = tuned ? tuned->kernel() : k->kernel;
  LaunchOptions options{executor, &device, a.checked};
  options.span_ranks = true;  // the grid spreads over every rank's chip (one rank: this one)
  const LaunchResult r = kernel.launch(grid).with(options).run(args);
  SigintStopsLaunch::check();
  if (!output) return 0;  // another rank writes
  if (a.dump_ir) out << r.ir_text;
  if (r.outputs.empty()) throw UserError("err_no_output", k->name, {}, "the kernel returns no tensor to write");
  const Tensor& c = r.outputs.front();
  // Write every file before any appears, so a failure leaves none of them. An integer or bool
  // output is written as that dtype, a float output as float32.
  output->write(is_integer(c.dtype()) ? encode_npy(c.shape(), c.to_values(), c.dtype())
                                     : encode_npy(c.shape(), c.to_floats()));
  if (schedule) schedule->write(schedule_json(k->name, r));
  SigintStopsLaunch::check();
  output->commit();
  if (schedule) schedule->commit();
  return 0;
}

}  // namespace

int run(int argc, const char* const* argv, const KernelRegistry& registry, std::ostream& out, std::ostream& err) {
  CLI::App app{"nki: NKI-style kernels on simulated NeuronCores"};
  app.name("nki");
  app.require_subcommand(1);

  CLI::App* list = app.add_subcommand("list", "List the registered kernels");

  RunArgs ra;
  CLI::App* run_cmd = app.add_subcommand("run", "Run a kernel on .npy inputs and write its output as .npy");
  run_cmd->add_option("kernel", ra.kernel, "Kernel name (see `nki list`)")->required();
  run_cmd->add_option("--input", ra.inputs, "Input .npy (float32, float16, int8/16/32, uint8/16/32 or bool; C order); once per kernel argument")->required();
  run_cmd->add_option("--output", ra.output, "Output .npy: float32, or the output's dtype if it is an integer or bool")->required();
  run_cmd->add_option("--dtype", ra.dtype, "Kernel dtype; float inputs are converted with round-to-nearest-even")
      ->type_name("{bf16,fp16,fp32}")
      ->default_str("fp32");
  run_cmd->add_option("--grid", ra.grid, "Launch grid in NKI spelling, e.g. \"spmd_dim(2,nc(2)),4\" (default: the kernel's)");
  run_cmd->add_option("--schedule", ra.schedule, "Write which core ran which instances as JSON");
  run_cmd->add_option("--executor", ra.executor, "halide (compiled) or reference (interpreter)")
      ->type_name("{halide,reference}")
      ->default_str("halide");
  run_cmd->add_option("--target", ra.target, "Simulated chip: trn1, inf2, trn2 or trn3 (SBUF/PSUM capacity, HBM)")
      ->type_name("{trn1,inf2,trn2,trn3}")
      ->default_str("trn2");
  run_cmd->add_flag("--checked", ra.checked,
                    "Checked mode: the reference interpreter with poisoned fresh memory; reports reads of unwritten "
                    "elements, conflicting writes and unwritten outputs");
  run_cmd->add_flag("--dump-ir", ra.dump_ir, "Print the kernel's canonical IR");
  run_cmd->add_flag("--autotune", ra.autotune,
                    "A tunable kernel runs the configuration `nki bench` recorded for these shapes, dtype and target");

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);  // --help
    std::string what = e.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      // CLI11 lists the extras in reverse ("4 --threads"); name them as given.
      std::vector<std::string> extras = (list->parsed() ? list : run_cmd)->remaining();
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
    if (profile.parsed()) return profile.run(out);
    if (bench.parsed()) return bench.run(out, err);
    const SigintStopsLaunch sigint;
    return run_kernel(ra, registry, out, err);
  } catch (const Interrupted&) {
    err << command << ": interrupted (SIGINT): every core stopped, no output was written\n";
    return kExitInterrupted;
  } catch (const UserError& e) {
    err << (command + ": " + one_line(e.what()) + "\n");  // one write: ranks under mpirun share the stream
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
