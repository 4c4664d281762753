/** \file `nki cache list | stats | clear [--json]` and `nki compile`: the compile cache from the command line. */
#include "cache_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "nki/compile.h"
#include "nki/communicator.h"
#include "nki/compile_cache.h"
#include "nki/error.h"
#include "nki/npy.h"
#include "nki/registry.h"
#include "shape_flag.h"

namespace nki::cli {

struct CacheCommand::State {
  CLI::App* cache = nullptr;
  CLI::App* list = nullptr;
  CLI::App* stats = nullptr;
  CLI::App* clear = nullptr;
  bool json = false;
};

CacheCommand::CacheCommand(CLI::App& app) : s_(std::make_unique<State>()) {
  s_->cache = app.add_subcommand("cache", "The compile cache shared by every process: list, stats, clear");
  s_->cache->require_subcommand(1);
  s_->list = s_->cache->add_subcommand("list", "One line per entry: key, kernel, mode, bytes");
  s_->stats = s_->cache->add_subcommand("stats", "Entries, bytes, hits, misses and compiles over the cache's life");
  s_->clear = s_->cache->add_subcommand("clear", "Remove every entry and reset the counters");
  for (CLI::App* sub : {s_->list, s_->stats, s_->clear}) sub->add_flag("--json", s_->json, "One JSON object");
}

CacheCommand::~CacheCommand() = default;
bool CacheCommand::parsed() const { return s_->cache->parsed(); }
std::string CacheCommand::name() const {
  for (CLI::App* sub : {s_->list, s_->stats, s_->clear})
    if (sub->parsed()) return "nki cache " + sub->get_name();
  return "nki cache";
}

int CacheCommand::run(std::ostream& out) const {
  const std::string dir = cache::directory().string();
  if (s_->list->parsed()) {
    const std::vector<cache::EntryInfo> entries = cache::list();
    if (s_->json) {
      nlohmann::ordered_json j = nlohmann::ordered_json::array();
      for (const auto& e : entries)
        j.push_back({{"key", e.key}, {"kernel", e.kernel}, {"mode", e.mode}, {"bytes", e.bytes}});
      out << nlohmann::ordered_json{{"directory", dir}, {"entries", j}}.dump() << "\n";
      return 0;
    }
    for (const auto& e : entries) out << fmt::format("{}  {:<24} {:<5} {:>10} bytes\n", e.key, e.kernel, e.mode, e.bytes);
    return 0;
  }
  if (s_->stats->parsed()) {
    const cache::Stats st = cache::stats();
    if (s_->json) {
      out << nlohmann::ordered_json{{"directory", dir},     {"entries", st.entries}, {"bytes", st.bytes},
                                    {"hits", st.hits},      {"misses", st.misses},   {"compiles", st.compiles}}
                 .dump()
          << "\n";
      return 0;
    }
    out << fmt::format("directory {}\nentries   {}\nbytes     {}\nhits      {}\nmisses    {}\ncompiles  {}\n", dir,
                       st.entries, st.bytes, st.hits, st.misses, st.compiles);
    return 0;
  }
  const std::int64_t removed = cache::clear();
  if (s_->json) out << nlohmann::ordered_json{{"directory", dir}, {"removed", removed}}.dump() << "\n";
  else out << fmt::format("removed {} entr{} from {}\n", removed, removed == 1 ? "y" : "ies", dir);
  return 0;
}

struct CompileCommand::State {
  CLI::App* cmd = nullptr;
  std::string kernel;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  std::string dtype = "fp32";
  std::optional<std::string> grid;
  bool spmd = false;
};

CompileCommand::CompileCommand(CLI::App& app) : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.cmd = app.add_subcommand("compile", "Compile a kernel into the cache for every core, without running it");
  s.cmd->add_option("kernel", s.kernel, "Kernel name (see `nki list`)")->required();
  s.cmd->add_option("--input", s.inputs, "Input .npy whose shape (and integer dtype) the kernel takes; once per argument");
  s.cmd->add_option("--shape", s.shapes, "Argument shape instead of a file, e.g. 512x2048; once per argument");
  s.cmd->add_option("--dtype", s.dtype, "Kernel dtype of float arguments")->default_str("fp32");
  s.cmd->add_option("--grid", s.grid, "Launch grid in NKI spelling (default: the kernel's)");
  s.cmd->add_flag("--spmd", s.spmd, "SPMD: one artifact shared by every core (default: MPMD, one per core)");
}

CompileCommand::~CompileCommand() = default;
bool CompileCommand::parsed() const { return s_->cmd->parsed(); }

int CompileCommand::run(const KernelRegistry& registry, std::ostream& out, std::ostream& err) const {
  const State& s = *s_;
  const RegisteredKernel* k = registry.find(s.kernel);
  if (k == nullptr) {
    throw UserError("err_unknown_kernel", "", {},
                    fmt::format("unknown kernel \"{}\"; known kernels: {}", s.kernel, fmt::join(registry.names(), ", ")));
  }
  if (!s.inputs.empty() && !s.shapes.empty()) {
    throw UserError("err_argument_count", k->name, {}, "give the arguments as --input files or as --shape, not both");
  }
  const std::optional<DType> dtype = parse_dtype(s.dtype);
  if (!dtype) {
    throw UserError("err_unknown_dtype", "", {}, fmt::format("unknown --dtype \"{}\"; expected one of fp32, bf16, fp16, "
                                                             "fp8_e4m3, fp8_e5m2, int8, int16, int32, uint8, uint16, "
                                                             "uint32, bool",
                                                             s.dtype));
  }
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const std::string& sh : s.shapes) {
    shapes.push_back(parse_shape_flag(sh));
    dtypes.push_back(*dtype);
  }
  for (const std::string& path : s.inputs) {
    const NpyArray a = read_npy(path);
    shapes.push_back(a.shape);
    dtypes.push_back(is_integer(a.dtype) ? a.dtype : *dtype);
  }
  if (shapes.size() != k->kernel.arity()) {
    throw UserError("err_argument_count", k->name, {},
                    fmt::format("takes {} arguments (--input or --shape), {} given", k->kernel.arity(), shapes.size()));
  }
  GridSpec grid = k->default_grid(shapes);
  if (s.grid) grid = parse_grid(*s.grid);
  CompileOptions opt;
  opt.mode = s.spmd ? CompileMode::spmd : CompileMode::mpmd;
  opt.cores = std::max<int>(2, static_cast<int>(grid.nc_cores()));
  const CompileReport r = compile(k->kernel.launch(grid), shapes, dtypes, opt);
  if (communicator().rank() != 0) return 0;  // under MPI the report is the world's: rank 0 prints it
  if (!s.spmd) {
    err << fmt::format("nki compile: compiling MPMD, one artifact per core; pass --spmd to compile one artifact that "
                       "every core shares\n");
  }
  out << fmt::format("{}: {} on {} cores, grid {}: {} artifact{} compiled, {} reused\n", r.kernel,
                     s.spmd ? "SPMD" : "MPMD", r.cores, grid.str(), r.compiled, r.compiled == 1 ? "" : "s", r.reused);
  for (const CoreArtifact& c : r.busy)
    out << fmt::format("  NC{} {} {}\n", c.nc, c.key, c.compiled ? "compiled" : "reused");
  return 0;
}

}  // namespace nki::cli
