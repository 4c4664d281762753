/** \file The persistent compile cache every process (and rank) shares: where it is, what it holds. */
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace nki::cache {

/**
 * The cache directory: $NKI_CACHE_DIR, else $XDG_CACHE_HOME/nki, else ~/.cache/nki
 * (read at each call), unless set_directory() chose one for this process.
 */
std::filesystem::path directory();
/** The subdirectory of directory() for this project and Halide version, which holds everything the cache keeps. */
std::filesystem::path version_directory();
/** Overrides the directory for this process (nullopt: back to the environment). */
void set_directory(std::optional<std::filesystem::path> dir);

/** Counted over the life of the cache directory, by every process that used it. */
struct Stats {
  std::int64_t entries = 0;
  std::int64_t bytes = 0;
  std::int64_t hits = 0;      ///< artifacts loaded from the directory
  std::int64_t misses = 0;    ///< lookups that found no usable entry
  std::int64_t compiles = 0;  ///< artifacts compiled into the directory
};
Stats stats();

struct EntryInfo {
  std::string key;
  std::string kernel;
  std::string mode;  ///< "spmd" or "mpmd"
  std::int64_t bytes = 0;
};
std::vector<EntryInfo> list();

/** The directory of the entry with cache key `key` (key.txt, ir.txt, lowered.stmt, plan.json, kernel.so, ...). */
std::filesystem::path entry_directory(const std::string& key);

/** Drops this process's memo of loaded artifacts, so the next launch reads the directory again. */
void forget_loaded();

/** What clear() did: the entries it removed, and the keys it left because a compile holds their lock. */
struct Cleared {
  std::int64_t removed = 0;
  std::vector<std::string> in_use;  ///< sorted
};

/**
 * Removes every entry and temporary whose key's lock it can take at once (so a compile or load
 * of that key in another process or thread is never broken: its entry and temporaries stay,
 * reported in `in_use`), and resets the counters. Records other libraries keep under
 * version_directory() (autotuning's) are theirs to remove (nki::autotune::clear).
 */
Cleared clear();

/** How long a process waits for another's compile of the same key: $NKI_CACHE_LOCK_TIMEOUT (seconds, default 600). */
double lock_timeout_seconds();

}  // namespace nki::cache

namespace nki {

/** Artifacts this process compiled so far (not counting ones loaded from the cache directory). */
std::int64_t compile_count();

}  // namespace nki
