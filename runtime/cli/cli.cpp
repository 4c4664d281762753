/** \file The `nki` command: list and run. */
#include "cli.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "nki/npy.h"
#include "pending_file.h"

namespace nki::cli {

namespace {

struct RunArgs {
  std::string kernel;
  std::vector<std::string> inputs;
  std::string output;
  std::string dtype = "fp32";
  std::string grid;
  std::string schedule;
  std::string executor = "halide";
  bool dump_ir = false;
};

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

int run_kernel(const RunArgs& a, const KernelRegistry& registry, std::ostream& out) {
  const RegisteredKernel* k = registry.find(a.kernel);
  if (k == nullptr) {
    throw UserError("err_unknown_kernel", "", {},
                    fmt::format("unknown kernel \"{}\"; known kernels: {}", a.kernel, fmt::join(registry.names(), ", ")));
  }
  if (a.inputs.size() != k->kernel.arity()) {
    throw UserError("err_argument_count", k->name, {},
                    fmt::format("takes {} --input files, {} given", k->kernel.arity(), a.inputs.size()));
  }
  const DType dtype = *parse_dtype(a.dtype);  // CLI11 checked membership
  std::vector<NpyArray> arrays;
  std::vector<Shape> shapes;
  for (const std::string& path : a.inputs) {
    arrays.push_back(read_npy(path));
    shapes.push_back(arrays.back().shape);
  }
  const GridSpec expected = k->default_grid(shapes);  // validates the shapes
  GridSpec grid = expected;
  if (!a.grid.empty()) {
    grid = parse_grid(a.grid);
    check_grid_fits(*k, grid, expected, shapes);
  }
  const Executor executor = a.executor == "reference" ? Executor::reference : Executor::halide;

  // Claim the output files before any work: an unwritable path fails now, and nothing partial is left.
  PendingFile output(a.output);
  std::optional<PendingFile> schedule;
  if (!a.schedule.empty()) schedule.emplace(a.schedule);

  sim::Device device("trn2", 2);
  std::vector<Tensor> args;
  for (std::size_t i = 0; i < arrays.size(); ++i) args.push_back(Tensor::from_floats(shapes[i], dtype, arrays[i].data, device));
  arrays.clear();

  const LaunchResult r = k->kernel.launch(grid).with({executor, &device}).run(args);
  if (a.dump_ir) out << r.ir_text;
  if (r.outputs.empty()) throw UserError("err_no_output", k->name, {}, "the kernel returns no tensor to write");
  const Tensor& c = r.outputs.front();
  const std::vector<float> values = c.to_floats();
  output.commit(encode_npy(c.shape(), values));
  if (schedule) schedule->commit(schedule_json(k->name, r));
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
  run_cmd->add_option("--input", ra.inputs, "Input .npy (float32, C order); once per kernel argument")->required();
  run_cmd->add_option("--output", ra.output, "Output .npy, written as float32")->required();
  run_cmd->add_option("--dtype", ra.dtype, "Kernel dtype; inputs are converted with round-to-nearest-even")
      ->check(CLI::IsMember({"bf16", "fp16", "fp32"}));
  run_cmd->add_option("--grid", ra.grid, "Launch grid in NKI spelling, e.g. \"spmd_dim(2,nc(2)),4\" (default: the kernel's)");
  run_cmd->add_option("--schedule", ra.schedule, "Write which core ran which instances as JSON");
  run_cmd->add_option("--executor", ra.executor, "halide (compiled) or reference (interpreter)")
      ->check(CLI::IsMember({"halide", "reference"}));
  run_cmd->add_flag("--dump-ir", ra.dump_ir, "Print the kernel's canonical IR");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);  // --help
    err << "nki: " << e.what() << "\n";
    return kExitBadInput;
  }

  const char* command = list->parsed() ? "nki list" : "nki run";
  try {
    if (list->parsed()) {
      for (const RegisteredKernel* k : registry.all()) out << fmt::format("{:<16} {}\n", k->name, k->description);
      return 0;
    }
    return run_kernel(ra, registry, out);
  } catch (const UserError& e) {
    err << command << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const InternalError& e) {
    err << command << ": " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {
    err << command << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace nki::cli
