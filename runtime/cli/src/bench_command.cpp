/** \file `nki bench`: a tile sweep of a tunable kernel, estimated by the cost model and timed on the host. */
#include "bench_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "argument_flags.h"
#include "nki/autotune.h"
#include "nki/npy.h"
#include "nki/profile.h"
#include "pending_file.h"
#include "shape_flag.h"
#include "sweep_plot.h"
#include "sweep_row.h"
#include "sweep_spec.h"

namespace nki::cli {

namespace {

/** More configurations than this is a typo in --sweep, not a sweep anyone waits for. */
constexpr std::size_t kMaxConfigs = 4096;

/** The configurations of `axes` over `k`'s parameters (unswept ones at their defaults), first parameter outermost. */
std::vector<TuningConfig> expand(const TunableKernel& k, const std::vector<SweepAxis>& axes, const std::string& spec) {
  for (const SweepAxis& a : axes) {
    const TunableParam* p = k.param(a.name);
    std::vector<std::string> names;
    for (const TunableParam& q : k.params) names.push_back(q.name);
    if (p == nullptr) {
      throw UserError("err_invalid_sweep", k.name, {},
                      fmt::format("--sweep \"{}\": {} is not a parameter of {}; its parameters: {}", spec, a.name,
                                  k.name, fmt::join(names, ", ")));
    }
    for (std::int64_t v : a.values) {
      if (std::find(p->values.begin(), p->values.end(), v) == p->values.end()) {
        throw UserError("err_invalid_sweep", k.name, {},
                        fmt::format("--sweep \"{}\": {}={} is not a value of {}'s {}; its values: {}", spec, a.name, v,
                                    k.name, a.name, fmt::join(p->values, ", ")));
      }
    }
  }
  std::vector<TuningConfig> configs{TuningConfig{}};
  for (const TunableParam& p : k.params) {
    std::vector<std::int64_t> values{p.default_value};
    for (const SweepAxis& a : axes)
      if (a.name == p.name) values = a.values;
    if (configs.size() * values.size() > kMaxConfigs) {
      throw UserError("err_invalid_sweep", k.name, {},
                      fmt::format("--sweep \"{}\": more than {} configurations", spec, kMaxConfigs));
    }
    std::vector<TuningConfig> next;
    for (const TuningConfig& c : configs) {
      for (std::int64_t v : values) {
        TuningConfig d = c;
        d.values.emplace_back(p.name, v);
        next.push_back(std::move(d));
      }
    }
    configs = std::move(next);
  }
  return configs;
}

/** The last swept parameter with more than one value (the plot's x axis); else the last parameter. */
std::string x_parameter(const TunableKernel& k, const std::vector<SweepAxis>& axes) {
  for (auto a = axes.rbegin(); a != axes.rend(); ++a)
    if (a->values.size() > 1) return a->name;
  return axes.empty() ? k.params.back().name : axes.back().name;
}

/** Deterministic test values for --shape arguments: small multiples of 1/8, different per argument. */
std::vector<float> generated_values(std::int64_t n, std::size_t arg) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::uint64_t h = (i + 1) * 2654435761ull + arg * 40503ull;
    v[i] = static_cast<float>(static_cast<std::int64_t>(h % 1024) - 512) / 8.0f;
  }
  return v;
}

/**
 * Empty when `got` matches `want`: bit for bit with tolerance 0, else every element within
 * tolerance x the largest magnitude of `want`; otherwise the first element that does not.
 */
std::string result_difference(const Tensor& got, const Tensor& want, double tolerance) {
  if (got.shape() != want.shape() || got.dtype() != want.dtype()) {
    return fmt::format("output {} {} against {} {}", shape_str(got.shape()), dtype_name(got.dtype()),
                       shape_str(want.shape()), dtype_name(want.dtype()));
  }
  if (tolerance == 0) {
    if (std::memcmp(got.data(), want.data(), static_cast<std::size_t>(got.bytes())) == 0) return {};
    for (std::int64_t i = 0; i < got.bytes(); ++i)
      if (got.data()[i] != want.data()[i]) return fmt::format("byte {} of the output differs", i);
  }
  const std::vector<double> g = got.to_values(), w = want.to_values();
  double scale = 0;
  for (double x : w) scale = std::max(scale, std::abs(x));
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (!(std::abs(g[i] - w[i]) <= tolerance * scale)) {
      return fmt::format("element {} is {}, against {} (allowed difference {})", i, g[i], w[i], tolerance * scale);
    }
  }
  return {};
}

/** A CSV field: quoted when it holds a comma, a quote or a newline. */
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

/** Progress on stderr: a bar redrawn in place on a terminal, one plain line per configuration otherwise. */
class Progress {
 public:
  Progress(std::ostream& err, std::size_t total)
      : err_(err), total_(total), bar_(&err == &std::cerr && ::isatty(STDERR_FILENO) == 1) {}
  void start(std::size_t i, const TuningConfig& c) {
    if (!bar_) return;
    constexpr std::size_t width = 30;
    const std::size_t filled = width * i / total_;
    err_ << fmt::format("\r\x1b[2K[{}{}] {}/{} {}", std::string(filled, '#'), std::string(width - filled, ' '), i,
                        total_, c.str())
         << std::flush;
  }
  void done(std::size_t i, const SweepRow& r) {
    if (bar_) {
      if (i + 1 == total_) err_ << fmt::format("\r\x1b[2K[{}] {}/{}\n", std::string(30, '#'), total_, total_) << std::flush;
      return;
    }
    std::string what = r.forbidden ? "forbidden" : fmt::format("simulated {:.3f} us", r.simulated_us);
    if (r.host_measured) what += fmt::format(", host {:.1f} us ({:.3f} GB/s)", r.host_us, r.host_gbps);
    err_ << fmt::format("nki bench: {}/{} {}: {}\n", i + 1, total_, r.config.str(), what);
  }

 private:
  std::ostream& err_;
  std::size_t total_;
  bool bar_;
};

}  // namespace

struct BenchCommand::State {
  const KernelRegistry* registry = nullptr;
  CLI::App* cmd = nullptr;
  std::string kernel, sweep;
  std::vector<std::string> inputs, shapes;
  std::string dtype = "fp32";
  std::string target = "trn2";
  std::string metric = "simulated";
  int iters = 3;
  std::optional<std::string> csv, json, plot;
};

BenchCommand::BenchCommand(CLI::App& app, const KernelRegistry& registry) : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.registry = &registry;
  s.cmd = app.add_subcommand("bench", "Sweep a tunable kernel's tile sizes: simulated latency and host speed per configuration");
  s.cmd->add_option("kernel", s.kernel, "Tunable kernel name (see `nki list`)")->required();
  s.cmd->add_option("--sweep", s.sweep, "Values per parameter, e.g. \"P=32,64,128;F=64..8192\" (LO..HI doubles)")
      ->required();
  s.cmd->add_option("--input", s.inputs, "Input .npy (its data is used for the host runs); once per argument");
  s.cmd->add_option("--shape", s.shapes, "Argument shape instead of a file, e.g. 4096x8192; once per argument");
  s.cmd->add_option("--dtype", s.dtype, "dtype of float arguments")->type_name(dtype_flag_choices())->default_str("fp32");
  s.cmd->add_option("--target", s.target, "Simulated chip")->type_name("{trn1,inf2,trn2,trn3}")->default_str("trn2");
  s.cmd->add_option("--metric", s.metric, "What the table is sorted by and the best chosen by")
      ->type_name("{simulated,host}")
      ->default_str("simulated");
  s.cmd->add_option("--iters", s.iters, "Timed host launches per configuration (median; 0: simulated only)")
      ->default_str("3");
  s.cmd->add_option("--csv", s.csv, "Write the table as CSV");
  s.cmd->add_option("--json", s.json, "Write the table as JSON");
  s.cmd->add_option("--plot", s.plot, "Render latency and GB/s against tile size as a PNG (gnuplot)");
}

BenchCommand::~BenchCommand() = default;

bool BenchCommand::parsed() const { return s_->cmd->parsed(); }

int BenchCommand::run(std::ostream& out, std::ostream& err) const {
  const State& s = *s_;
  const TunableKernel* k = s.registry->find_tunable(s.kernel);
  if (k == nullptr) {
    if (s.registry->find(s.kernel) != nullptr) {
      throw UserError("err_not_tunable", s.kernel, {},
                      fmt::format("has no tile parameters to sweep; tunable kernels: {}",
                                  fmt::join(s.registry->tunable_names(), ", ")));
    }
    throw UserError("err_unknown_kernel", "", {},
                    fmt::format("unknown kernel \"{}\"; tunable kernels: {}", s.kernel,
                                fmt::join(s.registry->tunable_names(), ", ")));
  }
  // Flags first (cheap), then files.
  const std::vector<SweepAxis> axes = parse_sweep(s.sweep);
  const std::vector<TuningConfig> configs = expand(*k, axes, s.sweep);
  check_input_or_shape(k->name, s.inputs, s.shapes);
  const std::size_t given = s.inputs.size() + s.shapes.size();
  if (given != k->make(k->defaults()).arity()) {
    throw UserError("err_argument_count", k->name, {},
                    fmt::format("takes {} arguments (--input or --shape), {} given", k->make(k->defaults()).arity(),
                                given));
  }
  const DType dtype = parse_dtype_flag(s.dtype);
  (void)sim::target_spec(s.target);
  if (s.metric != "simulated" && s.metric != "host") {
    throw UserError("err_invalid_metric", "", {}, fmt::format("unknown --metric \"{}\"; expected simulated or host", s.metric));
  }
  if (s.iters < 0 || (s.iters == 0 && s.metric == "host")) {
    throw UserError("err_invalid_iters", "", {},
                    fmt::format("--iters {}: expected a count >= {}", s.iters, s.metric == "host" ? 1 : 0));
  }
  std::vector<std::pair<std::string, std::string>> files;  // flag, path
  if (s.csv) files.emplace_back("--csv", *s.csv);
  if (s.json) files.emplace_back("--json", *s.json);
  if (s.plot) files.emplace_back("--plot", *s.plot);
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (files[i].second.empty()) throw UserError("err_output_not_writable", "", {}, files[i].first + " is an empty path");
    for (std::size_t j = 0; j < i; ++j) {
      std::error_code ea, eb;
      if (std::filesystem::weakly_canonical(files[i].second, ea) == std::filesystem::weakly_canonical(files[j].second, eb)) {
        throw UserError("err_output_not_writable", "", {},
                        fmt::format("{} and {} name the same file \"{}\"", files[j].first, files[i].first,
                                    files[i].second));
      }
    }
  }
  if (s.plot) require_gnuplot();

  // Claim the output files before any work: an unwritable path fails now, and nothing
  // partial is left whatever fails later.
  std::optional<PendingFile> csv, json, plot;
  if (s.csv) csv.emplace(*s.csv);
  if (s.json) json.emplace(*s.json);
  if (s.plot) plot.emplace(*s.plot);

  std::vector<TensorSpec> args;
  std::vector<NpyArray> arrays;
  for (const std::string& sh : s.shapes) args.push_back({parse_shape_flag(sh), dtype});
  for (const std::string& path : s.inputs) {
    arrays.push_back(read_npy(path));
    args.push_back({arrays.back().shape, is_integer(arrays.back().dtype) ? arrays.back().dtype : dtype});
  }
  std::vector<Shape> shapes;
  for (const TensorSpec& a : args) shapes.push_back(a.shape);

  // The host's tensors, on a device of the target with the two cores of an LNC=2 logical core.
  const sim::Device device(s.target, 2);
  std::vector<Tensor> tensors;
  std::int64_t arg_bytes = 0;
  if (s.iters > 0) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::int64_t n = shape_elements(args[i].shape);
      if (!arrays.empty()) {
        const NpyArray& a = arrays[i];
        tensors.push_back(is_integer(a.dtype) ? Tensor::from_values(device, a.shape, a.dtype, a.values)
                                              : Tensor::from_floats(a.shape, dtype, a.data, device));
      } else {
        tensors.push_back(Tensor::from_floats(args[i].shape, dtype, generated_values(n, i), device));
      }
      arg_bytes += tensors.back().bytes();
    }
  }
  arrays.clear();

  // What the hardware forbids is known from traces alone: a sweep with nothing to run fails before any output.
  std::vector<SweepRow> rows;
  for (const TuningConfig& c : configs) rows.push_back({c, config_rejection(*k, c, args, s.target)});
  if (std::all_of(rows.begin(), rows.end(), [](const SweepRow& r) { return r.forbidden.has_value(); })) {
    throw UserError("err_no_legal_configuration", k->name, {},
                    fmt::format("every configuration of --sweep \"{}\" is forbidden on {} (first: {}: {})", s.sweep,
                                s.target, rows.front().config.str(), *rows.front().forbidden));
  }

  // Every configuration computes the same function: each output is compared with the first one's.
  std::optional<Tensor> reference;
  std::string reference_config;
  Progress progress(err, configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    progress.start(i, configs[i]);
    SweepRow& row = rows[i];
    if (!row.forbidden) {
      const BoundLaunch launch = k->make(configs[i]).launch(k->grid(configs[i], shapes));
      row.simulated_us = profile(launch, args, s.target, false).latency_us;
      if (s.iters > 0) {
        const LaunchResult first = launch.run(tensors);  // compiles; checked before timing
        const Tensor& c = first.outputs.at(0);
        if (!reference) {
          reference = c;
          reference_config = configs[i].str();
        } else if (const std::string diff = result_difference(c, *reference, k->result_tolerance); !diff.empty()) {
          throw InternalError(fmt::format("{} with {} computes a different result from {}: {}", k->name,
                                          configs[i].str(), reference_config, diff));
        }
        std::int64_t bytes = arg_bytes;
        for (const Tensor& o : first.outputs) bytes += o.bytes();
        row.host_measured = true;
        row.host_us = benchmark_launch(launch, tensors, 0, s.iters).p50;
        row.host_gbps = static_cast<double>(bytes) / (row.host_us * 1e3);
      }
    }
    progress.done(i, row);
  }

  // Sorted by the metric, forbidden configurations last in sweep order.
  const bool host_metric = s.metric == "host";
  auto figure = [&](const SweepRow& r) { return host_metric ? r.host_us : r.simulated_us; };
  std::stable_sort(rows.begin(), rows.end(), [&](const SweepRow& a, const SweepRow& b) {
    if (a.forbidden || b.forbidden) return !a.forbidden && b.forbidden;
    return figure(a) < figure(b);
  });
  rows.front().best = true;
  const std::string metric_name = host_metric ? "host latency" : "simulated latency";

  std::vector<std::string> arg_text;
  for (const TensorSpec& a : args) arg_text.push_back(shape_str(a.shape));
  const std::string title = fmt::format("{} {} {} on {}", k->name, fmt::join(arg_text, " "),
                                        args.empty() ? "" : std::string(dtype_name(args[0].dtype)), s.target);

  // Files first (all or nothing), then the record and the table.
  if (csv) {
    std::string text;
    for (const auto& [n, v] : k->defaults().values) text += n + ",";
    text += "status,simulated_us,host_us,host_GBps,best,reason\n";
    for (const SweepRow& r : rows) {
      for (const auto& [n, v] : r.config.values) text += fmt::format("{},", v);
      if (r.forbidden) {
        text += fmt::format("forbidden,,,,,{}\n", csv_field(*r.forbidden));
      } else if (r.host_measured) {
        text += fmt::format("ok,{:.3f},{:.3f},{:.4f},{},\n", r.simulated_us, r.host_us, r.host_gbps, r.best ? 1 : 0);
      } else {
        text += fmt::format("ok,{:.3f},,,{},\n", r.simulated_us, r.best ? 1 : 0);
      }
    }
    csv->write(text);
  }
  if (json) {
    nlohmann::ordered_json j;
    j["kernel"] = k->name;
    nlohmann::ordered_json ja = nlohmann::ordered_json::array();
    for (const TensorSpec& a : args) ja.push_back({{"shape", a.shape}, {"dtype", std::string(dtype_name(a.dtype))}});
    j["args"] = ja;
    j["target"] = s.target;
    j["metric"] = s.metric;
    j["iters"] = s.iters;
    nlohmann::ordered_json best;
    for (const auto& [n, v] : rows.front().config.values) best[n] = v;
    j["best"] = best;
    nlohmann::ordered_json jc = nlohmann::ordered_json::array();
    for (const SweepRow& r : rows) {
      nlohmann::ordered_json c, o;
      for (const auto& [n, v] : r.config.values) c[n] = v;
      o["config"] = c;
      o["status"] = r.forbidden ? "forbidden" : "ok";
      if (r.forbidden) {
        o["reason"] = *r.forbidden;
      } else {
        o["simulated_us"] = r.simulated_us;
        if (r.host_measured) {
          o["host_us"] = r.host_us;
          o["host_GBps"] = r.host_gbps;
        }
        o["best"] = r.best;
      }
      jc.push_back(o);
    }
    j["configs"] = jc;
    json->write(j.dump(2) + "\n");
  }
  if (plot) plot->write(render_sweep_png(title, x_parameter(*k, axes), rows));
  autotune::store(*k, args, s.target, {rows.front().config, s.metric, figure(rows.front())});
  if (csv) csv->commit();
  if (json) json->commit();
  if (plot) plot->commit();

  std::size_t forbidden = 0;
  for (const SweepRow& r : rows) forbidden += r.forbidden ? 1 : 0;
  out << fmt::format("{}: {} configurations, {} forbidden; sorted by {}\n", title, rows.size(), forbidden, metric_name);
  std::string head = "     ";
  for (const TunableParam& p : k->params) head += fmt::format(" {:>7}", p.name);
  out << head << fmt::format(" {:>13} {:>12} {:>10}\n", "simulated_us", "host_us", "host_GBps");
  for (const SweepRow& r : rows) {
    std::string line = r.best ? "best " : "     ";
    for (const auto& [n, v] : r.config.values) line += fmt::format(" {:>7}", v);
    if (r.forbidden) {
      line += "  forbidden: " + *r.forbidden;
    } else if (r.host_measured) {
      line += fmt::format(" {:>13.3f} {:>12.1f} {:>10.3f}", r.simulated_us, r.host_us, r.host_gbps);
    } else {
      line += fmt::format(" {:>13.3f} {:>12} {:>10}", r.simulated_us, "-", "-");
    }
    out << line << "\n";
  }
  out << fmt::format("autotune: {} recorded for {} on {} (nki run {} --autotune)\n", rows.front().config.str(),
                     fmt::join(arg_text, " "), s.target, k->name);
  return 0;
}

}  // namespace nki::cli
