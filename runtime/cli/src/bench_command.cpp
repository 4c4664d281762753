/** \file `nki bench`: its flags, the arguments, nki::sweep with progress, then the files, the record and the table. */
#include "bench_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "cli/argument_flags.h"
#include "cli/launch_choice.h"
#include "nki/npy.h"
#include "nki/simulator/device.h"
#include "nki/simulator/target.h"
#include "nki/sweep.h"
#include "cli/pending_file.h"
#include "cli/shape_flag.h"
#include "sweep_plot.h"
#include "sweep_progress.h"
#include "cli/sweep_spec.h"
#include "cli/sweep_table.h"

namespace nki::cli {

/** The flags of `nki bench`, as given (outside the anonymous namespace: BenchCommand::State holds them). */
struct BenchFlags {
  std::string kernel, sweep;
  std::vector<std::string> inputs, shapes;
  std::string dtype = "fp32";
  std::string target = "trn2";
  std::string metric = "simulated";
  int iters = 3;
  std::optional<std::string> csv, json_file, plot;
  bool json = false;       ///< the JSON on stdout instead of the table
  bool no_record = false;  ///< leave the autotune record as it is
};

namespace {

/** The flags once checked: what they name, before any file is touched. */
struct CheckedFlags {
  std::string described_as;  ///< --sweep "...", as messages name the sweep
  std::vector<SweepAxis> axes;
  std::vector<TuningConfig> configs;
  DType dtype;
  SweepMetric metric;
};

/** The claimed output files. */
struct BenchOutputs {
  std::optional<PendingFile> csv, json, plot;
};

/** The kernel's arguments: shapes and dtypes, and the tensors of --input files when the host runs time them. */
struct BenchArguments {
  std::vector<TensorSpec> specs;
  std::optional<sim::Device> device;
  std::vector<Tensor> tensors;
};

/** --csv, --json-file and --plot: none empty, no two naming the same file. */
void check_output_paths(const BenchFlags& s) {
  std::vector<std::pair<std::string, std::string>> files;  // flag, path
  if (s.csv) files.emplace_back("--csv", *s.csv);
  if (s.json_file) files.emplace_back("--json-file", *s.json_file);
  if (s.plot) files.emplace_back("--plot", *s.plot);
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (files[i].second.empty()) throw UserError("err_output_not_writable", "", {}, files[i].first + " is an empty path");
    for (std::size_t j = 0; j < i; ++j) {
      if (same_file(files[i].second, files[j].second)) {
        throw UserError("err_output_not_writable", "", {},
                        fmt::format("{} and {} name the same file \"{}\"", files[j].first, files[i].first,
                                    files[i].second));
      }
    }
  }
}

CheckedFlags check_flags(const BenchFlags& s, const TunableKernel& k) {
  CheckedFlags f;
  f.described_as = fmt::format("--sweep \"{}\"", s.sweep);
  f.axes = parse_sweep(s.sweep);
  f.configs = sweep_configs(k, f.axes, f.described_as);
  check_input_or_shape(k.name, s.inputs, s.shapes);
  const std::size_t arity = k.make(k.defaults()).arity(), given = s.inputs.size() + s.shapes.size();
  if (given != arity) {
    throw UserError("err_argument_count", k.name, {},
                    fmt::format("takes {} arguments (--input or --shape), {} given", arity, given));
  }
  f.dtype = parse_dtype_flag(s.dtype);
  (void)sim::target_spec(s.target);
  f.metric = parse_metric_flag(s.metric);
  check_iters(s.iters, f.metric, "--iters ");
  check_output_paths(s);
  if (s.plot) require_gnuplot();
  return f;
}

/** Claims the output files before any work: an unwritable path fails now, and nothing partial is left whatever fails later. */
void claim_outputs(const BenchFlags& s, BenchOutputs& outputs) {
  if (s.csv) outputs.csv.emplace(*s.csv);
  if (s.json_file) outputs.json.emplace(*s.json_file);
  if (s.plot) outputs.plot.emplace(*s.plot);
}

/**
 * The arguments from --shape or --input: a float file's dtype is --dtype, an integer or bool
 * file keeps its own. The files' data is kept for the host runs (on a device of the target
 * with the two cores of an LNC=2 logical core); --shape arguments get nki::sweep's values.
 */
void read_arguments(const BenchFlags& s, DType dtype, BenchArguments& args) {
  for (const std::string& sh : s.shapes) args.specs.push_back({parse_shape_flag(sh), dtype});
  std::vector<NpyArray> arrays;
  for (const std::string& path : s.inputs) {
    arrays.push_back(read_npy(path));
    args.specs.push_back({arrays.back().shape, argument_dtype(arrays.back(), dtype)});
  }
  if (arrays.empty() || s.iters == 0) return;
  const sim::Device& device = args.device.emplace(s.target, 2);
  for (const NpyArray& a : arrays) args.tensors.push_back(argument_tensor(a, dtype, device));
}

/** nki::sweep of the checked configurations, its progress on `err`. */
std::vector<SweepRow> sweep_with_progress(const BenchFlags& s, const TunableKernel& k, const CheckedFlags& flags,
                                          const BenchArguments& args, std::ostream& err) {
  SweepProgress progress(err, flags.configs.size());
  SweepOptions options;
  options.metric = flags.metric;
  options.iters = s.iters;
  options.described_as = flags.described_as;
  options.on_start = [&](std::size_t i, const TuningConfig& c) { progress.start(i, c); };
  options.on_done = [&](std::size_t i, const SweepRow& r) { progress.done(i, r); };
  if (!args.tensors.empty()) return sweep(k, flags.configs, args.tensors, options);
  return sweep(k, flags.configs, args.specs, s.target, options);
}

/** The last swept parameter with more than one value (the plot's x axis); else the last parameter. */
std::string x_parameter(const TunableKernel& k, const std::vector<SweepAxis>& axes) {
  for (auto a = axes.rbegin(); a != axes.rend(); ++a)
    if (a->values.size() > 1) return a->name;
  return axes.empty() ? k.params.back().name : axes.back().name;
}

/** "[256,1024] [256,1024]": the arguments' shapes. */
std::string shapes_text(const std::vector<TensorSpec>& args) {
  std::vector<std::string> text;
  for (const TensorSpec& a : args) text.push_back(shape_str(a.shape));
  return fmt::format("{}", fmt::join(text, " "));
}

/** "tensor_add_tiled [256,1024] [256,1024] bf16 on trn2": what the table and the plot are of. */
std::string sweep_title(const TunableKernel& k, const std::vector<TensorSpec>& args, const std::string& target) {
  return fmt::format("{} {} {} on {}", k.name, shapes_text(args),
                     args.empty() ? "" : std::string(dtype_name(args[0].dtype)), target);
}

/**
 * The files first (all or nothing), then the record: a file that cannot be written (or a plot
 * gnuplot fails on) leaves no record, and a record that cannot be stored leaves no file.
 * Returns the record this sweep replaced, if any.
 */
std::optional<autotune::Record> write_outputs(BenchOutputs& outputs, const BenchFlags& s, const TunableKernel& k,
                                              const CheckedFlags& flags, const std::vector<TensorSpec>& args,
                                              const std::vector<SweepRow>& rows) {
  if (outputs.csv) outputs.csv->write(sweep_csv(k, rows));
  if (outputs.json) outputs.json->write(sweep_json(k.name, args, s.target, flags.metric, s.iters, rows));
  if (outputs.plot) outputs.plot->write(render_sweep_png(sweep_title(k, args, s.target), x_parameter(k, flags.axes), rows));
  std::optional<autotune::Record> replaced;
  if (!s.no_record) replaced = record_best(k, args, s.target, flags.metric, rows);
  if (outputs.csv) outputs.csv->commit();
  if (outputs.json) outputs.json->commit();
  if (outputs.plot) outputs.plot->commit();
  return replaced;
}

}  // namespace

struct BenchCommand::State {
  const KernelRegistry* registry = nullptr;
  CLI::App* cmd = nullptr;
  BenchFlags flags;
};

BenchCommand::BenchCommand(CLI::App& app, const KernelRegistry& registry) : s_(std::make_unique<State>()) {
  s_->registry = &registry;
  BenchFlags& s = s_->flags;
  CLI::App* cmd = s_->cmd =
      app.add_subcommand("bench", "Sweep a tunable kernel's tile sizes: simulated latency and host speed per configuration");
  cmd->add_option("kernel", s.kernel, "Tunable kernel name (see `nki list`)")->required();
  cmd->add_option("--sweep", s.sweep, "Values per parameter, e.g. \"P=32,64,128;F=64..8192\" (LO..HI doubles)")
      ->required();
  cmd->add_option("--input", s.inputs, "Input .npy (its data is used for the host runs); once per argument");
  cmd->add_option("--shape", s.shapes, "Argument shape instead of a file, e.g. 4096x8192; once per argument");
  cmd->add_option("--dtype", s.dtype, "dtype of float arguments")->type_name(dtype_flag_choices())->default_str("fp32");
  cmd->add_option("--target", s.target, "Simulated chip")->type_name("{trn1,inf2,trn2,trn3}")->default_str("trn2");
  cmd->add_option("--metric", s.metric, "What the table is sorted by and the best chosen by")
      ->type_name("{simulated,host}")
      ->default_str("simulated");
  cmd->add_option("--iters", s.iters, "Timed host launches per configuration (median; 0: simulated only)")
      ->default_str("3");
  cmd->add_option("--csv", s.csv, "Write the table as CSV");
  cmd->add_flag("--json", s.json, "Print the table as JSON on stdout (the autotune line goes to stderr)");
  cmd->add_option("--json-file", s.json_file, "Write the table as JSON to this file");
  cmd->add_flag("--no-record", s.no_record, "Leave the autotune record as it is (a sweep otherwise records its best)");
  cmd->add_option("--plot", s.plot, "Render latency and GB/s against tile size as a PNG (gnuplot)");
}

BenchCommand::~BenchCommand() = default;

bool BenchCommand::parsed() const { return s_->cmd->parsed(); }

int BenchCommand::run(std::ostream& out, std::ostream& err) const {
  const BenchFlags& s = s_->flags;
  const TunableKernel& k = find_tunable_kernel(*s_->registry, s.kernel);
  const CheckedFlags flags = check_flags(s, k);  // the flags first (cheap), then the files
  BenchOutputs outputs;
  claim_outputs(s, outputs);
  BenchArguments args;
  read_arguments(s, flags.dtype, args);
  const std::vector<SweepRow> rows = sweep_with_progress(s, k, flags, args, err);
  const std::optional<autotune::Record> replaced = write_outputs(outputs, s, k, flags, args.specs, rows);
  // A sweep that changes what `--autotune` launches says so: the old winner is gone.
  if (replaced && replaced->config != rows.front().config) {
    err << fmt::format("nki bench: {}: replaced the autotune record for {} on {}: {} -> {}\n", k.name,
                       shapes_text(args.specs), s.target, replaced->config.str(), rows.front().config.str());
  }
  const std::string record =
      s.no_record ? fmt::format("autotune: {} is the best for {} on {}; not recorded (--no-record)\n",
                                rows.front().config.str(), shapes_text(args.specs), s.target)
                  : fmt::format("autotune: {} recorded for {} on {} (nki run {} --autotune)\n", rows.front().config.str(),
                                shapes_text(args.specs), s.target, k.name);
  if (s.json) {
    out << sweep_json(k.name, args.specs, s.target, flags.metric, s.iters, rows);
    err << record;
    return 0;
  }
  out << sweep_table(k, sweep_title(k, args.specs, s.target), flags.metric, rows);
  out << record;
  return 0;
}

}  // namespace nki::cli
