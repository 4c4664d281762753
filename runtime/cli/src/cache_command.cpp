/** \file `nki cache list | stats | clear [--json]`: the compile cache from the command line. */
#include "cache_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "nki/autotune.h"
#include "nki/compile_cache.h"

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
  s_->clear = s_->cache->add_subcommand("clear", "Remove every entry and autotuning record and reset the counters");
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
    const std::vector<autotune::StoredRecord> records = autotune::list();
    if (s_->json) {
      nlohmann::ordered_json j = nlohmann::ordered_json::array();
      for (const auto& e : entries)
        j.push_back({{"key", e.key}, {"kernel", e.kernel}, {"mode", e.mode}, {"bytes", e.bytes}});
      nlohmann::ordered_json a = nlohmann::ordered_json::array();
      for (const auto& r : records) {
        nlohmann::ordered_json config;
        for (const auto& [name, v] : r.best.config.values) config[name] = v;
        a.push_back({{"kernel", r.kernel}, {"args", r.args}, {"target", r.target}, {"config", config},
                     {"metric", r.best.metric}, {"value", r.best.value}});
      }
      out << nlohmann::ordered_json{{"directory", dir}, {"entries", j}, {"autotune", a}}.dump() << "\n";
      return 0;
    }
    for (const auto& e : entries) out << fmt::format("{}  {:<24} {:<5} {:>10} bytes\n", e.key, e.kernel, e.mode, e.bytes);
    // The records `nki bench` left for `--autotune`: what each was tuned for and what won.
    for (const auto& r : records)
      out << fmt::format("autotune  {} {} on {}: {} ({} {:.3f} us)\n", r.kernel, r.args, r.target, r.best.config.str(),
                         r.best.metric, r.best.value);
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
  const cache::Cleared cleared = cache::clear();
  autotune::clear();  // the records tuned on the entries go with them
  if (s_->json) {
    out << nlohmann::ordered_json{{"directory", dir}, {"removed", cleared.removed}, {"in_use", cleared.in_use}}.dump()
        << "\n";
    return 0;
  }
  out << fmt::format("removed {} entr{} from {}", cleared.removed, cleared.removed == 1 ? "y" : "ies", dir);
  if (!cleared.in_use.empty()) {
    out << fmt::format("; kept {} in use by a compile (its lock is held): {}", cleared.in_use.size(),
                       fmt::join(cleared.in_use, ", "));
  }
  out << "\n";
  return 0;
}

}  // namespace nki::cli
