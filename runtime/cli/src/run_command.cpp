/** \file `nki run`: flags, inputs, the launch (autotuned or not), and its outputs written whole. */
#include "run_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <deque>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/argument_flags.h"
#include "cli/launch_choice.h"
#include "nki/communicator.h"
#include "nki/npy.h"
#include "nki/simulator/target.h"
#include "nki/traced_kernel.h"
#include "cli/pending_file.h"
#include "sigint_stops_launch.h"

namespace nki::cli {

/** The flags of `nki run`, as given (outside the anonymous namespace: RunCommand::State holds them). */
struct RunFlags {
  std::string kernel;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;  ///< one per output of the kernel, in its return order
  std::string dtype = "fp32";
  std::optional<std::string> grid;
  std::optional<std::string> schedule, config;
  std::string executor = "halide";
  std::string target = "trn2";
  bool checked = false;
  bool dump_ir = false;
  bool autotune = false;
  bool quiet = false;
};

namespace {

/** The flags once checked: what they name, before any file is touched. */
struct CheckedFlags {
  DType dtype;
  Executor executor;
  std::optional<GridSpec> grid;
};

/** The claimed output files (rank 0 only) and the inputs read. */
struct RunFiles {
  std::deque<PendingFile> outputs;  // a deque: PendingFile does not move
  std::optional<PendingFile> schedule;
  std::vector<NpyArray> arrays;
};

std::string schedule_json(const std::string& kernel, const LaunchResult& r) {
  nlohmann::ordered_json j;
  j["kernel"] = kernel;
  j["grid"] = r.grid.logical_shape();
  j["grid_spec"] = r.grid.str();
  nlohmann::ordered_json cores = nlohmann::ordered_json::array();
  for (const CoreSchedule& c : r.cores) cores.push_back({{"nc", c.nc}, {"instances", c.instances.to_vectors()}});
  j["cores"] = cores;
  return j.dump(2) + "\n";
}

CheckedFlags check_flags(const RunFlags& s, const RegisteredKernel& k) {
  if (s.inputs.size() != k.kernel.arity()) {
    throw UserError("err_argument_count", k.name, {},
                    fmt::format("takes {} --input files, {} given", k.kernel.arity(), s.inputs.size()));
  }
  CheckedFlags f{parse_dtype_flag(s.dtype), parse_executor_flag(s.executor), std::nullopt};
  (void)sim::target_spec(s.target);  // an unknown --target fails before any file is read
  if (s.grid) f.grid = parse_grid(*s.grid);
  for (std::size_t i = 0; i < s.outputs.size(); ++i) {
    if (s.outputs[i].empty()) throw UserError("err_output_not_writable", "", {}, "--output is an empty path");
    for (std::size_t j = 0; j < i; ++j) {
      if (same_file(s.outputs[j], s.outputs[i])) {
        throw UserError("err_output_not_writable", "", {},
                        fmt::format("--output names the same file \"{}\" twice", s.outputs[i]));
      }
    }
  }
  if (s.schedule && s.schedule->empty()) throw UserError("err_output_not_writable", "", {}, "--schedule is an empty path");
  for (const std::string& output : s.outputs) {
    if (s.schedule && same_file(*s.schedule, output)) {
      throw UserError("err_output_not_writable", "", {},
                      fmt::format("--schedule and --output name the same file \"{}\"", output));
    }
  }
  return f;
}

/**
 * Claims the output files before any work (reading inputs included): an unwritable path
 * fails now, and nothing partial is left whatever fails later. Under MPI every rank reads
 * the inputs and runs its chip's instances; rank 0 writes the files. A step failing on one
 * rank fails it on all, so none waits for the others.
 */
void claim_outputs_and_read_inputs(const RunFlags& s, RunFiles& files) {
  Communicator& world = communicator();
  on_every_rank(world, [&] {
    if (world.rank() == 0) {
      for (const std::string& output : s.outputs) files.outputs.emplace_back(output);
      if (s.schedule) files.schedule.emplace(*s.schedule);
    }
    for (const std::string& path : s.inputs) {
      files.arrays.push_back(read_npy(path));
      SigintStopsLaunch::check();
    }
  });
}

/** The kernel's arguments as the inputs give them: shapes, and dtypes after --dtype. */
std::vector<TensorSpec> argument_specs(const CheckedFlags& flags, const RunFiles& files) {
  std::vector<TensorSpec> specs;
  for (const NpyArray& x : files.arrays) specs.push_back({x.shape, argument_dtype(x, flags.dtype)});
  return specs;
}

/**
 * The line `nki run` prints on success: what ran, where, how it was checked, what it wrote, e.g.
 * "nki run: tensor_add_nc2 ran grid spmd_dim(2,nc(2)),4 (16 instances on 2 cores) with the halide
 * executor, not checked (--checked runs checked mode); wrote c.npy".
 */
std::string summary_line(const RegisteredKernel& k, const RunFlags& s, const LaunchChoice& chosen, const LaunchResult& r) {
  std::size_t busy = 0;
  for (const CoreSchedule& c : r.cores) busy += c.instances.empty() ? 0 : 1;
  const std::int64_t instances = r.grid.instances();
  const std::string grid = r.grid.axes.empty() ? "no grid" : "grid " + r.grid.str();
  const std::string how = s.checked ? "in checked mode: no read of an unwritten element, no conflicting writes, every "
                                      "output element written"
                                    : fmt::format("with the {} executor, not checked (--checked runs checked mode)", s.executor);
  std::string line = fmt::format("nki run: {} ran {} ({} instance{} on {} core{}) {}", k.name, grid, instances,
                                 instances == 1 ? "" : "s", busy, busy == 1 ? "" : "s", how);
  if (chosen.config && s.config) {
    line += "; configuration " + chosen.config->str() + " (--config)";
  } else if (chosen.config) {
    line += chosen.autotuned ? "; autotuned " + chosen.config->str()
                             : "; defaults " + chosen.config->str() + " (no autotuned configuration)";
  }
  std::vector<std::string> wrote = s.outputs;
  if (s.schedule) wrote.push_back(*s.schedule);
  line += "; wrote " + fmt::format("{}", fmt::join(wrote.begin(), wrote.end() - 1, ", "));
  line += (wrote.size() > 1 ? " and " : "") + wrote.back();
  return line + "\n";
}

/**
 * Writes every file before any appears, so a failure leaves none of them. An integer or bool
 * output is written as that dtype, a float output as float32.
 */
void write_outputs(RunFiles& files, const std::string& kernel, const LaunchResult& r) {
  for (std::size_t i = 0; i < r.outputs.size(); ++i) {
    const Tensor& c = r.outputs[i];
    files.outputs[i].write(is_integer(c.dtype()) ? encode_npy(c.shape(), c.to_values(), c.dtype())
                                                : encode_npy(c.shape(), c.to_floats()));
  }
  if (files.schedule) files.schedule->write(schedule_json(kernel, r));
  SigintStopsLaunch::check();
  for (PendingFile& f : files.outputs) f.commit();
  if (files.schedule) files.schedule->commit();
}

/**
 * err_no_output for a kernel returning nothing, err_output_count when --output is not given
 * once per output: from the trace, before the launch runs.
 */
void check_output_count(const RunFlags& s, const RegisteredKernel& k, const LaunchChoice& chosen,
                        const std::vector<TensorSpec>& args) {
  const std::vector<Shape> shapes = shapes_of(args);
  const std::vector<DType> dtypes = dtypes_of(args);
  const std::size_t returned =
      chosen.launch.kernel()
          .trace(shapes, dtypes, chosen.launch.grid(), sim::target_spec(s.target).nc_version)
          ->ir->outputs.size();
  if (returned == 0) throw UserError("err_no_output", k.name, {}, "the kernel returns no tensor to write");
  if (returned != s.outputs.size()) {
    throw UserError("err_output_count", k.name, {},
                    fmt::format("the kernel returns {} tensor{}: give --output once for each, in its return order "
                                "({} given)",
                                returned, returned == 1 ? "" : "s", s.outputs.size()));
  }
}

}  // namespace

struct RunCommand::State {
  const KernelRegistry* registry = nullptr;
  CLI::App* cmd = nullptr;
  RunFlags flags;
};

RunCommand::RunCommand(CLI::App& app, const KernelRegistry& registry) : s_(std::make_unique<State>()) {
  s_->registry = &registry;
  RunFlags& s = s_->flags;
  CLI::App* cmd = s_->cmd = app.add_subcommand("run", "Run a kernel on .npy inputs and write its outputs as .npy");
  cmd->add_option("kernel", s.kernel, "Kernel name (see `nki list`)")->required();
  cmd->add_option("--input", s.inputs, "Input .npy (float32, float16, int8/16/32, uint8/16/32 or bool; C order); once per kernel argument")->required();
  cmd->add_option("--output", s.outputs,
                  "Output .npy: float32, or the output's dtype if it is an integer or bool; once per output of the "
                  "kernel, in its return order")
      ->required();
  cmd->add_option("--dtype", s.dtype, "Kernel dtype; float inputs are converted with round-to-nearest-even")
      ->type_name(dtype_flag_choices())
      ->default_str("fp32");
  cmd->add_option("--grid", s.grid, "Launch grid in NKI spelling, e.g. \"spmd_dim(2,nc(2)),4\" (default: the kernel's)");
  cmd->add_option("--schedule", s.schedule, "Write which core ran which instances as JSON");
  cmd->add_option("--executor", s.executor, "halide (compiled) or reference (interpreter)")
      ->type_name("{halide,reference}")
      ->default_str("halide");
  cmd->add_option("--target", s.target, "Simulated chip: trn1, inf2, trn2 or trn3 (SBUF/PSUM capacity, HBM)")
      ->type_name("{trn1,inf2,trn2,trn3}")
      ->default_str("trn2");
  cmd->add_flag("--checked", s.checked,
                  "Checked mode: the reference interpreter with poisoned fresh memory; reports reads of unwritten "
                  "elements, conflicting writes and unwritten outputs");
  cmd->add_flag("--dump-ir", s.dump_ir, "Print the kernel's canonical IR");
  cmd->add_flag("--autotune", s.autotune,
                  "A tunable kernel runs the configuration `nki bench` recorded for these shapes, dtype and target");
  cmd->add_option("--config", s.config, "A tunable kernel runs this configuration, a value per parameter (see nki bench)")
      ->type_name("\"P=64,F=2048\"");
  cmd->add_flag("--quiet", s.quiet, "No summary line on success (what ran, where, how checked, what was written)");
}

RunCommand::~RunCommand() = default;

bool RunCommand::parsed() const { return s_->cmd->parsed(); }

std::vector<std::string> RunCommand::remaining() const { return s_->cmd->remaining(); }

int RunCommand::run(std::ostream& out, std::ostream& err) const {
  const RunFlags& s = s_->flags;
  const KernelRegistry& registry = *s_->registry;
  const SigintStopsLaunch sigint;
  const RegisteredKernel& k = registry.at(s.kernel);
  const TuningRequest request = tuning_request(registry, k, s.autotune, s.config);
  const CheckedFlags flags = check_flags(s, k);  // the flags first (cheap), then the files
  RunFiles files;
  claim_outputs_and_read_inputs(s, files);
  // With --config that configuration, with --autotune the recorded one (or the defaults, saying
  // why on `err`), else the registered kernel; --grid when it fits.
  const std::vector<TensorSpec> specs = argument_specs(flags, files);
  LaunchChoice chosen = choose_tuned_launch("nki run", k, request, specs, s.target, flags.grid, err);
  check_output_count(s, k, chosen, specs);

  sim::Device device(s.target, 2);
  std::vector<Tensor> args;
  for (const NpyArray& a : files.arrays) args.push_back(argument_tensor(a, flags.dtype, device));
  files.arrays.clear();

  SigintStopsLaunch::check();
  LaunchOptions options{flags.executor, &device, s.checked};
  options.span_ranks = true;  // the grid spreads over every rank's chip (one rank: this one)
  options.find_unwritten = !s.checked;  // checked mode refuses an unwritten output itself
  const LaunchResult r = chosen.launch.with(options).run(args, CallSite::unknown());
  SigintStopsLaunch::check();
  if (files.outputs.empty()) return 0;  // another rank writes
  if (s.dump_ir) out << r.ir_text;
  write_outputs(files, k.name, r);
  for (const UnwrittenElements& u : r.unwritten) {
    const Tensor& t = r.outputs[u.output];
    err << fmt::format("nki run: {}: warning: no instance wrote {} of {} elements of the output (the first [{}]); they are "
                       "written as 0 to {}. --checked names the first read or write that went wrong\n",
                       k.name, u.count, t.elements(), fmt::join(coord_of_flat(t.shape(), u.first), ","), s.outputs[u.output]);
  }
  if (!s.quiet) out << summary_line(k, s, chosen, r);
  return 0;
}

}  // namespace nki::cli
