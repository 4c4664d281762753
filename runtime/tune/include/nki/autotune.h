/**
 * \file Autotuning that persists: the best configuration of a tunable kernel per (kernel,
 * argument shapes and dtypes, target), kept in the cache directory (docs/cache.md) for the
 * next launch that asks for it.
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "nki/kernel.h"
#include "nki/profile.h"
#include "nki/tunable_kernel.h"

namespace nki::autotune {

/** The winner of a sweep, and by which measure it won. */
struct Record {
  TuningConfig config;
  std::string metric;  ///< "simulated" (device latency, us) or "host" (median launch time, us)
  double value = 0;    ///< the winner's figure in that metric
};

/**
 * Records `best` for this kernel, these arguments and this target, replacing any earlier
 * record; with it the canonical IR hash of `best`'s kernel, so a changed kernel is noticed.
 * Written to a temporary and renamed into place: a reader sees the old record or the new one.
 * Returns the record it replaced as it was stored (whether or not lookup() would still use
 * it), or nullopt when there was none or it could not be read.
 */
std::optional<Record> store(const TunableKernel& k, const std::vector<TensorSpec>& args, const std::string& target,
                            const Record& best);

/** A lookup: the record, or why there is none to use. */
struct Lookup {
  std::optional<Record> record;
  std::string miss;  ///< when there is no record: "no record", "the kernel changed since ...", ...
};

/**
 * The record for this kernel, arguments and target, if one was stored and still holds: its
 * configuration is still one of the kernel's, and the kernel it builds still traces to the
 * IR it was tuned with (any change to the kernel's code or to the library's lowering of it
 * changes that). Shapes, dtypes and target are part of the record's key.
 */
Lookup lookup(const TunableKernel& k, const std::vector<TensorSpec>& args, const std::string& target);

/** Where the record of this kernel, arguments and target lives (it may not exist). */
std::filesystem::path record_path(const std::string& kernel, const std::vector<TensorSpec>& args,
                                  const std::string& target);

/** A record as `nki cache list` shows it: what it was tuned for, and what won. */
struct StoredRecord {
  std::string kernel;
  std::string args;    ///< "[256,1024] [256,1024] bf16"
  std::string target;
  Record best;
};

/** Every readable record of the cache directory, sorted by kernel, then arguments and target; damaged ones are left out. */
std::vector<StoredRecord> list();

/** Removes every autotuning record of the cache directory; returns how many there were. */
std::int64_t clear();

/** A launch of a tunable kernel with the configuration autotuning chose, or its defaults. */
struct TunedLaunch {
  BoundLaunch launch;
  TuningConfig config;
  bool autotuned = false;  ///< config came from a record
  std::string miss;        ///< when not autotuned: why (Lookup::miss)
};

/**
 * The launch for these arguments on `target`: with `autotune`, the recorded configuration when
 * lookup() finds one that holds, else the defaults; without, the defaults. The grid is the
 * kernel's for the chosen configuration (it throws nki::UserError when the shapes do not tile).
 */
TunedLaunch tuned_launch(const TunableKernel& k, const std::vector<TensorSpec>& args, const std::string& target,
                         bool autotune = true);

}  // namespace nki::autotune
