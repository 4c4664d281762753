/**
 * \file The compile cache: an in-process memo over a directory of ahead-of-time artifacts
 * shared by every process. Layout (docs/cache.md):
 *
 *   DIR/v<project>-halide<version>/
 *     runtime/halide_runtime.so      the Halide runtime every artifact links against (one per version)
 *     entries/KEY/                   key.txt ir.txt lowered.stmt options.json plan.json kernel.so complete
 *     locks/KEY.lock                 flock: one compile per key across threads and processes
 *     tmp/                           entries being written; renamed into entries/ when complete
 *     stats.json, stats.lock         hits, misses, compiles over the life of the directory
 */
#include "nki/compile_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "artifact.h"
#include "compiled_program.h"
#include "halide_lowering.h"
#include "nki/ir/passes.h"
#include "nki/ir/kernel_ir.h"
#include "compile/program_cache.h"

#ifndef NKI_PROJECT_VERSION
#define NKI_PROJECT_VERSION "0"
#endif

namespace nki {

namespace fs = std::filesystem;

namespace {

std::atomic<std::int64_t> compiles{0};
std::mutex override_mutex;
std::optional<fs::path> dir_override;

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw std::runtime_error(fmt::format("cannot read {}", p.filename().string()));
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_file(const fs::path& p, const std::string& data) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
  f.flush();
  if (!f) throw std::runtime_error(fmt::format("cannot write {} (disk full?)", p.string()));
}

/** FNV-1a of a file's bytes: the completion marker's checksum. */
std::string checksum(const std::string& bytes) { return ir::hash_text(bytes); }

/** The versioned root: artifacts of another project or Halide version never mix. */
fs::path version_root() {
  return cache::directory() / fmt::format("v{}-halide{}", NKI_PROJECT_VERSION, halide_version());
}

/** An exclusive flock on `path`, released when destroyed (or when the process dies). */
class FileLock {
 public:
  /** Waits up to the cache's lock timeout; `what` names the key in messages. */
  FileLock(const fs::path& path, const std::string& kernel, const std::string& what) {
    fs::create_directories(path.parent_path());
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error(fmt::format("cannot open the lock {}", path.string()));
    const auto start = std::chrono::steady_clock::now();
    bool said = false;
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!said && waited > 0.2) {
        fmt::print(stderr, "nki: waiting for another compile of {} (cache key {})\n", kernel, what);
        said = true;
      }
      if (waited > cache::lock_timeout_seconds()) {
        ::close(fd_);
        throw UserError("err_cache_lock_timeout", kernel, {},
                        fmt::format("waited {:.0f} s for another process compiling cache key {} (lock {}); raise "
                                    "NKI_CACHE_LOCK_TIMEOUT or remove a stuck compiler",
                                    waited, what, path.filename().string()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~FileLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

/** Adds to the directory's counters (under their own lock). */
void count(std::int64_t hits, std::int64_t misses, std::int64_t compiled) {
  try {
    const fs::path root = version_root();
    fs::create_directories(root);
    FileLock lock(root / "stats.lock", "stats", "stats");
    nlohmann::json j = {{"hits", 0}, {"misses", 0}, {"compiles", 0}};
    std::error_code ec;
    if (fs::exists(root / "stats.json", ec)) {
      try {
        j = nlohmann::json::parse(read_file(root / "stats.json"));
      } catch (...) {  // damaged counters restart at zero rather than fail a launch
      }
    }
    j["hits"] = j.value("hits", 0) + hits;
    j["misses"] = j.value("misses", 0) + misses;
    j["compiles"] = j.value("compiles", 0) + compiled;
    write_file(root / "stats.json.tmp", j.dump() + "\n");
    fs::rename(root / "stats.json.tmp", root / "stats.json");
  } catch (const std::exception&) {  // counters are advisory: a full disk must not fail a launch here
  }
}

/** The shared Halide runtime of this cache version, built once (under a lock) and loaded once. */
void ensure_runtime(const std::string& kernel) {
  static std::mutex mu;
  static bool ready = false;
  std::lock_guard guard(mu);
  if (ready) return;
  const fs::path dir = version_root() / "runtime";
  const fs::path so = dir / "halide_runtime.so";
  fs::create_directories(dir);
  {
    FileLock lock(dir / "runtime.lock", kernel, "halide-runtime");
    std::error_code ec;
    if (!fs::exists(dir / "complete", ec) || read_file(dir / "complete") != checksum(read_file(so)) + "\n") {
      const fs::path obj = dir / fmt::format("halide_runtime.{}.o", ::getpid());
      const fs::path tmp = dir / fmt::format("halide_runtime.{}.so", ::getpid());
      build_halide_runtime_object(obj.string());
      link_shared_object(obj, tmp);
      fs::remove(obj, ec);
      fs::rename(tmp, so);
      write_file(dir / "complete", checksum(read_file(so)) + "\n");
    }
  }
  load_halide_runtime(so);
  ready = true;
}

/** A complete, intact entry loaded; nullopt when there is none; throws std::runtime_error when damaged. */
std::shared_ptr<const Program> try_load(const fs::path& entry, const CompileRequest& r, const std::string& key_text) {
  std::error_code ec;
  if (!fs::exists(entry, ec)) return nullptr;
  if (!fs::exists(entry / "complete", ec)) throw std::runtime_error("its completion marker is missing");
  const std::string so = read_file(entry / "kernel.so");
  const std::string plan = read_file(entry / "plan.json");
  const std::string marker = read_file(entry / "complete");
  if (marker != checksum(so) + " " + checksum(plan) + "\n") throw std::runtime_error("its checksum does not match");
  if (read_file(entry / "key.txt") != key_text) throw std::runtime_error("it holds another key's artifact");
  return make_compiled_program(r.ir, plan_from_json(plan), LoadedArtifact::open(entry / "kernel.so"));
}

/** Compiles into a temporary directory and renames it into place as `entry`. */
void build_entry(const fs::path& entry, const CompileRequest& r, const std::string& key_text) {
  const fs::path tmp_root = version_root() / "tmp";
  fs::create_directories(tmp_root);
  std::random_device rd;
  const fs::path tmp = tmp_root / fmt::format("{}.{}.{:08x}", entry.filename().string(), ::getpid(), rd());
  fs::create_directories(tmp);
  try {
    std::string lowered;
    KernelPlan plan =
        build_kernel_object(*r.ir, r.pid_base, r.layer_unroll_factor, (tmp / "kernel.o").string(), &lowered);
    plan.rank = r.rank;  // MPMD: rank_id is this constant
    link_shared_object(tmp / "kernel.o", tmp / "kernel.so");
    fs::remove(tmp / "kernel.o");
    const std::string plan_text = plan_to_json(plan);
    write_file(tmp / "plan.json", plan_text);
    write_file(tmp / "key.txt", key_text);
    write_file(tmp / "ir.txt", r.text);
    write_file(tmp / "lowered.stmt", lowered);
    nlohmann::ordered_json options = {{"kernel", r.ir->name},
                                      {"mode", r.rank < 0 ? "spmd" : "mpmd"},
                                      {"target", r.target},
                                      {"pid_base", r.pid_base},
                                      {"rank", r.rank},
                                      {"mesh", r.mesh},
                                      {"layer_unroll_factor", r.layer_unroll_factor},
                                      {"halide", halide_version()},
                                      {"project", NKI_PROJECT_VERSION}};
    write_file(tmp / "options.json", options.dump(2) + "\n");
    write_file(tmp / "complete", checksum(read_file(tmp / "kernel.so")) + " " + checksum(plan_text) + "\n");
    std::error_code ec;
    fs::remove_all(entry, ec);  // a damaged entry being replaced
    fs::create_directories(entry.parent_path());
    fs::rename(tmp, entry);
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
}

/** Disk lookup, or one compile across threads and processes. */
CompileOutcome load_or_build(const CompileRequest& r, const std::string& key_text, const std::string& key) {
  ensure_runtime(r.ir->name);
  const fs::path entry = version_root() / "entries" / key;
  auto attempt = [&]() -> std::shared_ptr<const Program> {
    try {
      return try_load(entry, r, key_text);
    } catch (const std::exception& e) {
      fmt::print(stderr, "nki: warning: cache entry {} of {} is damaged ({}); rebuilding it\n", key, r.ir->name,
                 e.what());
      return nullptr;
    }
  };
  if (auto p = attempt()) {
    count(1, 0, 0);
    return {p, false, key};
  }
  FileLock lock(version_root() / "locks" / (key + ".lock"), r.ir->name, key);
  if (auto p = attempt()) {  // another process compiled it while this one waited
    count(1, 0, 0);
    return {p, false, key};
  }
  try {
    build_entry(entry, r, key_text);
  } catch (const UserError&) {  // the kernel's own limits (err_tensor_too_large ...)
    throw;
  } catch (const InternalError&) {
    throw;
  } catch (const std::runtime_error& e) {  // a full disk, a quota, a failing linker: the cache is as it was
    throw UserError("err_cache_write_failed", r.ir->name, {},
                    fmt::format("cannot write cache entry {} in {}: {}; nothing of it was kept", key,
                                version_root().string(), e.what()));
  }
  compiles.fetch_add(1);
  count(0, 1, 1);
  try {
    return {try_load(entry, r, key_text), true, key};
  } catch (const std::exception& e) {
    throw InternalError(fmt::format("{}: a freshly compiled cache entry {} does not load: {}", r.ir->name, key, e.what()));
  }
}

std::mutex memo_mutex;
/// Keyed by the full key text, so two kernels can never share an entry by a hash collision.
std::map<std::string, std::shared_future<CompileOutcome>> memo;
std::atomic<std::uint64_t> memo_generation{0};  ///< times `memo` was dropped

}  // namespace

std::string cache_key_text(const CompileRequest& r) {
  // Everything that changes the artifact, nothing that varies between ranks of one SPMD world.
  std::string s = fmt::format("nki {} lowering {}\nhalide {}\nhost {}\ntarget {}\nmode {}\n", NKI_PROJECT_VERSION,
                              kLoweringRevision, halide_version(), artifact_target_string(), r.target,
                              r.rank < 0 ? "spmd" : "mpmd");
  if (r.rank >= 0) s += fmt::format("rank {}\npid_base {}\n", r.rank, fmt::join(r.pid_base, ","));
  if (!r.mesh.empty()) s += fmt::format("mesh {}\n", r.mesh);
  s += fmt::format("layer_unroll_factor {}\n", r.layer_unroll_factor);
  return s + r.text;
}

CompileOutcome compiled_program_for(const CompileRequest& r) {
  const std::string key_text = cache_key_text(r);
  std::promise<CompileOutcome> promise;
  std::shared_future<CompileOutcome> future;
  bool first = false;
  {
    std::lock_guard lock(memo_mutex);
    auto it = memo.find(key_text);
    if (it != memo.end()) {
      future = it->second;
    } else {
      future = promise.get_future().share();
      memo.emplace(key_text, future);
      first = true;
    }
  }
  if (first) {
    try {
      promise.set_value(load_or_build(r, key_text, ir::hash_text(key_text)));  // hashed when first, not per launch
    } catch (...) {
      {
        std::lock_guard lock(memo_mutex);
        memo.erase(key_text);  // a failed compile is not remembered; the next launch retries
      }
      promise.set_exception(std::current_exception());
    }
  }
  CompileOutcome out = future.get();
  if (!first) out.compiled = false;  // this caller reused what another compiled or loaded
  return out;
}

void forget_compiled_programs() {
  std::lock_guard lock(memo_mutex);
  memo.clear();
  memo_generation.fetch_add(1);
}

std::uint64_t compiled_programs_generation() { return memo_generation.load(); }

std::int64_t compile_count() { return compiles.load(); }

namespace cache {

fs::path directory() {
  {
    std::lock_guard lock(override_mutex);
    if (dir_override) return *dir_override;
  }
  if (const char* d = std::getenv("NKI_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "nki";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "nki";
  return fs::temp_directory_path() / "nki-cache";
}

fs::path version_directory() { return version_root(); }

void set_directory(std::optional<fs::path> dir) {
  std::lock_guard lock(override_mutex);
  dir_override = std::move(dir);
}

double lock_timeout_seconds() {
  if (const char* t = std::getenv("NKI_CACHE_LOCK_TIMEOUT"); t && *t) {
    char* end = nullptr;
    const double v = std::strtod(t, &end);
    if (end != t && *end == '\0' && v >= 0) return v;
    throw UserError("err_invalid_env", "", {},
                    fmt::format("NKI_CACHE_LOCK_TIMEOUT='{}'; expected a number of seconds >= 0", t));
  }
  return 600.0;
}

std::vector<EntryInfo> list() {
  std::vector<EntryInfo> out;
  std::error_code ec;
  const fs::path entries = version_root() / "entries";
  if (!fs::exists(entries, ec)) return out;
  for (const auto& e : fs::directory_iterator(entries, ec)) {
    EntryInfo info{e.path().filename().string(), "?", "?", 0};
    for (const auto& f : fs::recursive_directory_iterator(e.path(), ec))
      if (f.is_regular_file(ec)) info.bytes += static_cast<std::int64_t>(f.file_size(ec));
    try {
      const nlohmann::json o = nlohmann::json::parse(read_file(e.path() / "options.json"));
      info.kernel = o.value("kernel", "?");
      info.mode = o.value("mode", "?");
    } catch (...) {
    }
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const EntryInfo& a, const EntryInfo& b) { return a.key < b.key; });
  return out;
}

Stats stats() {
  Stats s;
  for (const EntryInfo& e : list()) {
    ++s.entries;
    s.bytes += e.bytes;
  }
  try {
    const nlohmann::json j = nlohmann::json::parse(read_file(version_root() / "stats.json"));
    s.hits = j.value("hits", 0);
    s.misses = j.value("misses", 0);
    s.compiles = j.value("compiles", 0);
  } catch (...) {
  }
  return s;
}

void forget_loaded() { forget_compiled_programs(); }

fs::path entry_directory(const std::string& key) { return version_root() / "entries" / key; }

Cleared clear() {
  const fs::path root = version_root();
  std::error_code ec;
  // Every key with an entry or a temporary ("KEY.PID.RANDOM"), with the paths to remove.
  std::map<std::string, std::vector<fs::path>> keys;
  std::set<std::string> with_entry;
  for (const auto& e : fs::directory_iterator(root / "entries", ec)) {
    keys[e.path().filename().string()].push_back(e.path());
    with_entry.insert(e.path().filename().string());
  }
  for (const auto& t : fs::directory_iterator(root / "tmp", ec)) {
    const std::string name = t.path().filename().string();
    keys[name.substr(0, name.find('.'))].push_back(t.path());
  }
  Cleared out;
  for (const auto& [key, paths] : keys) {
    const int fd = ::open((root / "locks" / (key + ".lock")).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {  // a compile of the key is running: leave it whole
      ::close(fd);
      out.in_use.push_back(key);
      continue;
    }
    for (const fs::path& p : paths) fs::remove_all(p, ec);
    if (with_entry.contains(key)) ++out.removed;
    if (fd >= 0) {
      ::flock(fd, LOCK_UN);
      ::close(fd);
    }
  }
  if (fs::exists(root / "stats.json", ec)) {
    FileLock lock(root / "stats.lock", "stats", "stats");
    fs::remove(root / "stats.json", ec);
  }
  forget_compiled_programs();
  return out;
}

}  // namespace cache

}  // namespace nki
