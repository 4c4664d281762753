/** \file `nki profile`: the simulator's cost model on a registered kernel, as text, JSON and a Chrome trace. */
#include "profile_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "cli/argument_flags.h"
#include "cli/launch_choice.h"
#include "cli/mesh_flag.h"
#include "nki/npy.h"
#include "nki/profile.h"
#include "cli/pending_file.h"
#include "cli/shape_flag.h"

namespace nki::cli {

namespace {

/** "P=64 F=2048 (autotuned)": the configuration profiled and where it came from. */
std::string config_origin(const LaunchChoice& chosen, bool autotune) {
  if (!autotune) return chosen.config->str() + " (--config)";
  return chosen.config->str() + (chosen.autotuned ? " (autotuned)" : " (defaults: none autotuned)");
}

/** The report, naming the configuration profiled when one was chosen: a line after the first, or "config" and "autotuned" after "grid". */
std::string report(const ProfileReport& r, const LaunchChoice& chosen, bool autotune, bool json) {
  if (!chosen.config) return json ? sim::profile_json(r) : sim::profile_text(r);
  if (!json) {
    std::string text = sim::profile_text(r);
    return text.insert(text.find('\n') + 1, "configuration " + config_origin(chosen, autotune) + "\n");
  }
  const nlohmann::ordered_json in = nlohmann::ordered_json::parse(sim::profile_json(r));
  nlohmann::ordered_json out;
  for (const auto& [key, value] : in.items()) {
    out[key] = value;
    if (key != "grid") continue;
    nlohmann::ordered_json config = nlohmann::ordered_json::object();
    for (const auto& [name, v] : chosen.config->values) config[name] = v;
    out["config"] = config;
    out["autotuned"] = chosen.autotuned;
  }
  return out.dump(2) + "\n";
}

}  // namespace

struct ProfileCommand::State {
  const KernelRegistry* registry = nullptr;
  CLI::App* cmd = nullptr;
  std::string kernel;
  std::vector<std::string> inputs, shapes;
  std::string dtype = "fp32";
  std::optional<std::string> grid, trace, mesh, config;
  std::string target = "trn2";
  bool json = false;
  bool autotune = false;
};

ProfileCommand::ProfileCommand(CLI::App& app, const KernelRegistry& registry) : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.registry = &registry;
  s.cmd = app.add_subcommand("profile", "Estimate a kernel launch on a simulated NeuronCore (cost model; no data)");
  s.cmd->add_option("kernel", s.kernel, "Kernel name (see `nki list`)")->required();
  s.cmd->add_option("--input", s.inputs, "Input .npy whose shape (and integer dtype) an argument has; once per argument");
  s.cmd->add_option("--shape", s.shapes, "Argument shape instead of a file, e.g. 4096x8192; once per argument");
  s.cmd->add_option("--dtype", s.dtype, "dtype of float arguments")->type_name(dtype_flag_choices())->default_str("fp32");
  s.cmd->add_option("--grid", s.grid, "Launch grid in NKI spelling (default: the kernel's)");
  s.cmd->add_option("--target", s.target, "Simulated chip")->type_name("{trn1,inf2,trn2,trn3}")->default_str("trn2");
  s.cmd->add_option("--trace", s.trace, "Write the timeline as Chrome Trace Event JSON (Perfetto, chrome://tracing)");
  s.cmd->add_flag("--json", s.json, "Print the report as one JSON object");
  s.cmd->add_option("--mesh", s.mesh,
                    "Profile a world launch over this mesh (axes in order, name=size): every rank a NeuronCore "
                    "running the grid, the shapes its shards'")
      ->type_name("x=2,y=4");
  s.cmd->add_flag("--autotune", s.autotune,
                  "A tunable kernel: profile the configuration `nki bench` recorded for these shapes, dtype and target");
  s.cmd->add_option("--config", s.config, "A tunable kernel: profile this configuration, a value per parameter")
      ->type_name("\"P=64,F=2048\"");
}

ProfileCommand::~ProfileCommand() = default;

bool ProfileCommand::parsed() const { return s_->cmd->parsed(); }


int ProfileCommand::run(std::ostream& out, std::ostream& err) const {
  const State& s = *s_;
  const RegisteredKernel* k = &s.registry->at(s.kernel);
  const TuningRequest request = tuning_request(*s.registry, *k, s.autotune, s.config);
  check_input_or_shape(k->name, s.inputs, s.shapes);
  const std::size_t given = s.inputs.size() + s.shapes.size();
  if (given != k->kernel.arity()) {
    throw UserError("err_argument_count", k->name, {},
                    fmt::format("takes {} arguments (--input or --shape), {} given", k->kernel.arity(), given));
  }
  const DType dtype = parse_dtype_flag(s.dtype);
  (void)sim::target_spec(s.target);
  std::optional<GridSpec> requested;
  if (s.grid) requested = parse_grid(*s.grid);
  if (s.trace && s.trace->empty()) throw UserError("err_output_not_writable", "", {}, "--trace is an empty path");

  std::vector<TensorSpec> args;
  for (const std::string& sh : s.shapes) args.push_back({parse_shape_flag(sh), dtype});
  for (const std::string& path : s.inputs) {
    const NpyArray a = read_npy(path);
    args.push_back({a.shape, argument_dtype(a, dtype)});
  }
  const LaunchChoice chosen = choose_tuned_launch("nki profile", *k, request, args, s.target, requested, err);

  std::optional<Mesh> mesh;
  if (s.mesh) mesh = make_mesh(*s.mesh);
  std::optional<PendingFile> trace;
  if (s.trace) trace.emplace(*s.trace);
  ProfileReport r = mesh ? profile_world(chosen.launch, *mesh, args, s.target, s.trace.has_value())
                         : profile(chosen.launch, args, s.target, s.trace.has_value());
  r.kernel = k->name;  // tensor_add_nc2 is tensor_add's Kernel on another grid: the report names what was asked
  if (trace) {
    trace->write(sim::chrome_trace_json(r));
    trace->commit();
  }
  out << report(r, chosen, s.autotune, s.json);
  return 0;
}

}  // namespace nki::cli
