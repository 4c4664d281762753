/** \file `nki compile`: flags -> seed_pipeline_options -> nki::compile, with --dump-options and --output DIR. */
#include "compile_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/argument_flags.h"
#include "nki/communicator.h"
#include "nki/compile.h"
#include "nki/compile_cache.h"
#include "nki/driver_options.h"
#include "nki/error.h"
#include "nki/npy.h"
#include "nki/registry.h"
#include "pending_directory.h"
#include "cli/pending_file.h"
#include "cli/shape_flag.h"

namespace nki::cli {

namespace {

/** The files of a cache entry --output DIR holds for each artifact. */
constexpr const char* kArtifactFiles[] = {"kernel.so", "plan.json", "lowered.stmt", "key.txt"};

/** Which core (a world compile: which rank) runs which instances with which artifact: DIR/cores.json. */
std::string cores_json(const CompileReport& r) {
  nlohmann::ordered_json cores = nlohmann::ordered_json::array();
  for (const CoreArtifact& c : r.busy)
    cores.push_back({{r.ranks > 0 ? "rank" : "nc", c.nc}, {"artifact", c.key}, {"instances", c.instances}});
  nlohmann::ordered_json j{{"kernel", r.kernel}};
  if (r.ranks > 0) j["mesh"] = r.mesh;
  j[r.ranks > 0 ? "ranks" : "cores"] = cores;
  return j.dump(2) + "\n";
}

}  // namespace

struct CompileCommand::State {
  CLI::App* cmd = nullptr;
  std::string kernel;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  std::string dtype = "fp32";
  std::optional<std::string> grid;
  std::optional<std::string> output;
  std::string dump_file;
  CLI::Option* dump = nullptr;
  DriverFlags flags;
  std::vector<CLI::Option*> internal;  ///< shown by --help-hidden-list only
};

CompileCommand::CompileCommand(CLI::App& app) : s_(std::make_unique<State>()) {
  State& s = *s_;
  DriverFlags& f = s.flags;
  s.cmd = app.add_subcommand("compile", "Compile a kernel into the cache for every core of a world, without running it");
  s.cmd->add_option("kernel", s.kernel, "Kernel name (see `nki list`)")->required();
  s.cmd->add_option("--input", s.inputs, "Input .npy whose shape (and integer dtype) the kernel takes; once per argument");
  s.cmd->add_option("--shape", s.shapes, "Argument shape instead of a file, e.g. 512x2048; once per argument");
  s.cmd->add_option("--dtype", s.dtype, "Kernel dtype of float arguments")
      ->type_name(dtype_flag_choices())
      ->default_str("fp32");
  s.cmd->add_option("--target", f.target, "Chip to compile for")->type_name("{trn1,inf2,trn2,trn3}")->default_str("trn2");
  s.cmd->add_option("--lnc,--logical-nc-config", f.lnc,
                    "NeuronCores per logical core (default 2 on trn2, 1 elsewhere; more than 1 only on trn2)")
      ->type_name("N");
  s.cmd->add_flag("--spmd,--enable-experimental-spmd", f.spmd,
                  "SPMD: one artifact shared by every core (default: MPMD, one per core)");
  s.cmd->add_option("--mesh", f.mesh,
                    "Device mesh over the logical cores, major to minor pipeline, data, tensor (default: the "
                    "strategy's split)")
      ->type_name("data=D,tensor=T,pipeline=P");
  s.cmd->add_option("--cores", f.cores, "Physical NeuronCores in the world (default: one chip of the target)")
      ->type_name("N");
  s.cmd->add_option("--grid", s.grid, "Launch grid in NKI spelling (default: the kernel's)")->type_name("SPEC");
  s.cmd->add_option("--output", s.output, "Directory for the artifact(s), options.json, cores.json and kernel.ir")
      ->type_name("DIR");
  s.dump = s.cmd->add_option("--dump-options", s.dump_file,
                             "Write the pipeline options as JSON to FILE and compile; without FILE print them and "
                             "stop")
               ->expected(0, 1)
               ->type_name("[FILE]");
  s.internal.push_back(s.cmd->add_option("--distribution-strategy", f.distribution_strategy,
                                         "Distribution preset: front-end options, unroll factor and mesh split")
                           ->type_name("{fsdp,nemo,llm-training}"));
  s.internal.push_back(s.cmd->add_flag("--distribution-type-llm-training", f.distribution_type_llm_training,
                                       "The same as --distribution-strategy llm-training"));
  s.internal.push_back(s.cmd->add_option("--layer-unroll-factor", f.layer_unroll_factor,
                                         "Unroll factor of the kernel's outermost loops (default 1; fsdp: 4)")
                           ->type_name("N"));
  for (CLI::Option* o : s.internal) o->group("");  // CLI11 leaves options of the empty group out of --help
  // Shows every flag: the internal ones join a group of their own, then the usual help is printed.
  s.cmd->add_flag_callback(
      "--help-hidden-list",
      [&s] {
        for (CLI::Option* o : s.internal) o->group("Internal options");
        throw CLI::CallForHelp();
      },
      "Print every flag, the internal ones included, and exit");
}

CompileCommand::~CompileCommand() = default;
bool CompileCommand::parsed() const { return s_->cmd->parsed(); }

int CompileCommand::run(const KernelRegistry& registry, std::ostream& out, std::ostream& err) const {
  const State& s = *s_;
  // The flags first (cheap, no file touched), then the kernel's arguments.
  const PipelineOptions options = seed_pipeline_options(s.flags);
  const RegisteredKernel* k = &registry.at(s.kernel);
  check_input_or_shape(k->name, s.inputs, s.shapes);
  const DType dtype = parse_dtype_flag(s.dtype);
  std::optional<GridSpec> requested;
  if (s.grid) requested = parse_grid(*s.grid);
  const bool dump_to_file = s.dump->count() > 0 && !s.dump_file.empty();
  const bool dump_and_stop = s.dump->count() > 0 && s.dump_file.empty();
  // Claim the outputs before any work: an unwritable place fails now, and nothing partial is left.
  std::optional<PendingFile> dump;
  if (dump_to_file) dump.emplace(s.dump_file);
  std::optional<PendingDirectory> dir;
  if (s.output && !dump_and_stop) dir.emplace(*s.output);

  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const std::string& sh : s.shapes) {
    shapes.push_back(parse_shape_flag(sh));
    dtypes.push_back(dtype);
  }
  for (const std::string& path : s.inputs) {
    const NpyArray a = read_npy(path);
    shapes.push_back(a.shape);
    dtypes.push_back(argument_dtype(a, dtype));
  }
  if (shapes.size() != k->kernel.arity()) {
    throw UserError("err_argument_count", k->name, {},
                    fmt::format("takes {} arguments (--input or --shape), {} given", k->kernel.arity(), shapes.size()));
  }
  const GridSpec grid = requested ? *requested : k->default_grid(shapes);
  const std::string options_text = pipeline_options_json(options);
  if (dump_and_stop) {
    out << options_text;
    return 0;
  }

  CompileOptions opt;
  opt.mode = options.spmd ? CompileMode::spmd : CompileMode::mpmd;
  opt.target = options.target;
  opt.cores = options.cores;
  opt.layer_unroll_factor = options.layer_unroll_factor;
  opt.unannotated_cores = options.unannotated_cores();
  opt.estimate_latency = true;
  opt.mesh = options.device_mesh();  // the world of a kernel that spans ranks: one rank per logical core
  opt.lnc = options.lnc;
  CompileReport r = compile(k->kernel.launch(grid), shapes, dtypes, opt);
  r.kernel = k->name;  // tensor_add_nc2 is tensor_add's Kernel on another grid: the report names what was asked
  if (communicator().rank() != 0) return 0;  // under MPI the report is the world's: rank 0 writes and prints it

  if (dump) {
    dump->write(options_text);
    dump->commit();
  }
  if (dir) {
    dir->write("options.json", options_text);
    dir->write("kernel.ir", r.ir_text);
    dir->write("cores.json", cores_json(r));
    std::vector<std::string> copied;  // SPMD cores share one
    for (const CoreArtifact& c : r.busy) {
      if (std::ranges::find(copied, c.key) != copied.end()) continue;
      copied.push_back(c.key);
      for (const char* file : kArtifactFiles)
        dir->copy(cache::entry_directory(c.key) / file, fmt::format("artifacts/{}/{}", c.key, file));
    }
    dir->commit();
  }
  const char* unit = r.ranks > 0 ? "rank" : "core";
  if (!options.spmd) {
    err << fmt::format("nki compile: compiling MPMD, one artifact per {}; pass --spmd to compile one artifact that "
                       "every {} shares\n",
                       unit, unit);
  }
  const std::string world = r.ranks > 0 ? fmt::format("{} ranks of mesh {} ({} cores)", r.ranks, r.mesh, r.cores)
                                        : fmt::format("{} cores", r.cores);
  out << fmt::format("{}: {} on {}, {}: {} artifact{} compiled, {} reused\n", r.kernel,
                     options.spmd ? "SPMD" : "MPMD", world, grid.axes.empty() ? "no grid" : "grid " + grid.str(),
                     r.compiled, r.compiled == 1 ? "" : "s", r.reused);
  for (const CoreArtifact& c : r.busy) {
    out << fmt::format("  {} {} {}, {} instance{}\n", r.ranks > 0 ? fmt::format("rank {}", c.nc) : fmt::format("NC{}", c.nc),
                       c.key, c.compiled ? "compiled" : "reused", c.instances, c.instances == 1 ? "" : "s");
  }
  out << fmt::format("simulated latency {:.3f} us on {}\n", r.simulated_latency_us, options.target);
  return 0;
}

}  // namespace nki::cli
