/** \file Autotuning records in the cache directory: DIR/v.../autotune/KEY.json (docs/cache.md). */
#include "nki/autotune.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>
#include <random>
#include <sstream>

#include "nki/compile_cache.h"
#include "nki/ir/passes.h"
#include "nki/simulator/target.h"
#include "nki/traced_kernel.h"

namespace nki::autotune {

namespace fs = std::filesystem;

namespace {

nlohmann::ordered_json args_json(const std::vector<TensorSpec>& args) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const TensorSpec& t : args) a.push_back({{"shape", t.shape}, {"dtype", std::string(dtype_name(t.dtype))}});
  return a;
}

/** What the key hashes: kernel name, each argument's shape and dtype, the target. */
std::string key_text(const std::string& kernel, const std::vector<TensorSpec>& args, const std::string& target) {
  return nlohmann::ordered_json{{"kernel", kernel}, {"args", args_json(args)}, {"target", target}}.dump();
}

/** The canonical IR hash of `config`'s kernel for these arguments and its grid: the kernel's identity. */
std::string ir_hash(const TunableKernel& k, const TuningConfig& config, const std::vector<TensorSpec>& args,
                    const std::string& target) {
  const std::vector<Shape> shapes = shapes_of(args);
  const std::vector<DType> dtypes = dtypes_of(args);
  return k.make(config).trace(shapes, dtypes, k.grid(config, shapes), sim::target_spec(target).nc_version)->hash;
}

/** Where every record lives. */
fs::path records_directory() { return cache::version_directory() / "autotune"; }

/** A record file's content as `nki cache list` shows it; throws a json exception when a field is missing. */
StoredRecord stored_record(const nlohmann::ordered_json& j) {  // ordered: the parameters in the kernel's order
  StoredRecord r;
  r.kernel = j.at("key").at("kernel").get<std::string>();
  r.target = j.at("key").at("target").get<std::string>();
  std::vector<std::string> shapes;
  std::string dtype;
  for (const auto& a : j.at("key").at("args")) {
    shapes.push_back(shape_str(a.at("shape").get<Shape>()));
    dtype = a.at("dtype").get<std::string>();
  }
  r.args = fmt::format("{} {}", fmt::join(shapes, " "), dtype);
  for (const auto& [name, v] : j.at("config").items()) r.best.config.values.emplace_back(name, v.get<std::int64_t>());
  r.best.metric = j.at("metric").get<std::string>();
  r.best.value = j.at("value").get<double>();
  return r;
}

/** The record of this key in the file at `path`, if it holds one that can be read. */
std::optional<Record> readable_record(const fs::path& path, const std::string& key) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  try {
    const nlohmann::ordered_json j = nlohmann::ordered_json::parse(f);
    if (nlohmann::json::parse(j.at("key").dump()).dump() != nlohmann::json::parse(key).dump()) return std::nullopt;
    return stored_record(j).best;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

fs::path record_path(const std::string& kernel, const std::vector<TensorSpec>& args, const std::string& target) {
  return records_directory() / (ir::hash_text(key_text(kernel, args, target)) + ".json");
}

std::optional<Record> store(const TunableKernel& k, const std::vector<TensorSpec>& args, const std::string& target,
                            const Record& best) {
  nlohmann::ordered_json config;
  for (const auto& [name, v] : best.config.values) config[name] = v;
  const nlohmann::ordered_json j{{"key", nlohmann::ordered_json::parse(key_text(k.name, args, target))},
                                 {"config", config},
                                 {"ir_hash", ir_hash(k, best.config, args, target)},
                                 {"metric", best.metric},
                                 {"value", best.value}};
  const fs::path path = record_path(k.name, args, target);
  std::optional<Record> replaced = readable_record(path, key_text(k.name, args, target));
  fs::create_directories(path.parent_path());
  const fs::path tmp =
      path.parent_path() / fmt::format(".{}.{}.{}", path.filename().string(), ::getpid(), std::random_device{}());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << j.dump(2) << "\n";
    f.flush();
    if (!f) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw UserError("err_cache_write_failed", k.name, {},
                      fmt::format("cannot write the autotuning record {} (disk full?)", path.filename().string()));
    }
  }
  fs::rename(tmp, path);
  return replaced;
}

Lookup lookup(const TunableKernel& k, const std::vector<TensorSpec>& args, const std::string& target) {
  const fs::path path = record_path(k.name, args, target);
  std::ifstream f(path, std::ios::binary);
  if (!f) return {std::nullopt, "no record"};
  std::ostringstream text;
  text << f.rdbuf();
  Record r;
  std::string recorded_hash;
  try {
    const nlohmann::json j = nlohmann::json::parse(text.str());
    // A hash collision, or a record copied by hand, is another key's record: not ours.
    if (j.at("key").dump() != nlohmann::json::parse(key_text(k.name, args, target)).dump()) {
      return {std::nullopt, fmt::format("record {} holds another key", path.filename().string())};
    }
    for (const TunableParam& p : k.params) r.config.values.emplace_back(p.name, j.at("config").at(p.name).get<std::int64_t>());
    if (j.at("config").size() != k.params.size()) {
      return {std::nullopt, "the kernel's parameters changed since it was tuned"};
    }
    recorded_hash = j.at("ir_hash").get<std::string>();
    r.metric = j.at("metric").get<std::string>();
    r.value = j.at("value").get<double>();
  } catch (const nlohmann::json::exception& e) {
    return {std::nullopt, fmt::format("record {} is damaged ({})", path.filename().string(), e.what())};
  }
  for (const auto& [name, v] : r.config.values) {
    const std::vector<std::int64_t>& allowed = k.param(name)->values;
    if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
      return {std::nullopt, fmt::format("{}={} is no longer a value of the kernel's {}", name, v, name)};
    }
  }
  std::string now;
  try {
    now = ir_hash(k, r.config, args, target);
  } catch (const UserError& e) {
    return {std::nullopt, fmt::format("the recorded {} no longer launches ({})", r.config.str(), e.what())};
  }
  if (now != recorded_hash) {
    return {std::nullopt, fmt::format("the kernel changed since it was tuned (IR {}, tuned with {})", now, recorded_hash)};
  }
  return {r, ""};
}

TunedLaunch tuned_launch(const TunableKernel& k, const std::vector<TensorSpec>& args, const std::string& target,
                         bool autotune) {
  const std::vector<Shape> shapes = shapes_of(args);
  TuningConfig config = k.defaults();
  std::string miss = "autotune not asked for";
  bool autotuned = false;
  if (autotune) {
    Lookup l = lookup(k, args, target);
    if (l.record) {
      config = l.record->config;
      autotuned = true;
      miss.clear();
    } else {
      miss = l.miss;
    }
  }
  return {k.launch(config, shapes), config, autotuned, miss};
}

std::vector<StoredRecord> list() {
  std::vector<StoredRecord> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(records_directory(), ec)) {
    if (e.path().extension() != ".json" || e.path().filename().string().starts_with(".")) continue;
    try {
      std::ifstream f(e.path(), std::ios::binary);
      StoredRecord r = stored_record(nlohmann::ordered_json::parse(f));
      out.push_back(std::move(r));
    } catch (const std::exception&) {
      // A damaged record is never used (lookup reports it); the list shows what can be.
    }
  }
  std::sort(out.begin(), out.end(), [](const StoredRecord& a, const StoredRecord& b) {
    return std::tie(a.kernel, a.args, a.target) < std::tie(b.kernel, b.args, b.target);
  });
  return out;
}

std::int64_t clear() {
  std::error_code ec;
  std::int64_t records = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(records_directory(), ec))
    records += e.path().extension() == ".json";
  fs::remove_all(records_directory(), ec);
  return records;
}

}  // namespace nki::autotune
