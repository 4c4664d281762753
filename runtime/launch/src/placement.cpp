/** \file Grid placement onto NeuronCores (nki/placement.h). */
#include "nki/placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <utility>

#include "nki/error.h"
#include "nki/simulator/host_memory.h"

namespace nki {

std::vector<CoreSchedule> place_instances(const GridSpec& grid, int device_cores, const std::string& kernel,
                                          int unannotated_cores) {
  for (const GridAxis& a : grid.axes) {
    for (const GridFactor& f : a.factors) {
      if (f.size < 1) {
        throw UserError("err_invalid_grid", kernel, {},
                        fmt::format("grid \"{}\" has a factor of size {}; sizes must be positive", grid.str(), f.size));
      }
    }
  }
  // Spreading a grid without nc over a logical core's physical cores needs those cores.
  const bool spread = unannotated_cores > 1 && grid.nc_cores() == 1;
  const std::int64_t needed = spread ? unannotated_cores : grid.nc_cores();
  if (needed > device_cores) {
    throw UserError("err_grid_exceeds_cores", kernel, {},
                    fmt::format("grid \"{}\" spreads over {} NeuronCores but the device has {}", grid.str(), needed,
                                device_cores));
  }
  // Placement keeps every instance's id (one int64 per axis) and, at worst, a run of its own (a
  // uint32: InstanceIds::runs): refuse a grid whose ids alone would not fit in memory.
  const std::int64_t total = grid.instances();
  const std::int64_t per_instance =
      static_cast<std::int64_t>(std::max<std::size_t>(1, grid.axes.size()) * sizeof(std::int64_t) + sizeof(std::uint32_t));
  if (total > sim::host_memory_bytes() / per_instance) {
    throw UserError("err_grid_too_large", kernel, {},
                    fmt::format("grid \"{}\" has {} instances; placing them on cores needs {} bytes, more than the "
                                "host's {} bytes of memory",
                                grid.str(), total, static_cast<__int128>(total) * per_instance,
                                sim::host_memory_bytes()));
  }
  std::vector<CoreSchedule> cores(static_cast<std::size_t>(device_cores));
  for (int c = 0; c < device_cores; ++c) cores[c] = {c, InstanceIds(grid.axes.size())};
  // Each core's share, known up front: the nc factors split the grid evenly, a spread in blocks.
  if (spread) {
    for (std::int64_t c = 0; c < unannotated_cores; ++c)
      cores[static_cast<std::size_t>(c)].instances.reserve(static_cast<std::size_t>(total / unannotated_cores + 1));
  } else {
    for (std::int64_t c = 0; c < grid.nc_cores(); ++c)
      cores[static_cast<std::size_t>(c)].instances.reserve(static_cast<std::size_t>(total / grid.nc_cores()));
  }

  const std::vector<std::int64_t> shape = grid.logical_shape();
  // The core is a row-major combination of the nc factor indices (last nc factor fastest). Each
  // axis's factors take their indices from that axis's id alone, so the core is a sum of one
  // term per axis: tabulated per axis index once (axes without nc add nothing), not divided
  // out for every instance.
  std::vector<std::vector<std::int64_t>> term(shape.size());
  if (!spread) {
    std::int64_t weight = 1;
    for (std::size_t a = grid.axes.size(); a-- > 0;) {
      const auto& factors = grid.axes[a].factors;
      const std::int64_t axis_weight = weight;
      for (const GridFactor& f : factors)
        if (f.nc) weight *= f.size;
      if (weight == axis_weight) continue;
      term[a].resize(static_cast<std::size_t>(shape[a]));
      for (std::int64_t i = 0; i < shape[a]; ++i) {
        std::int64_t rest = i, w = axis_weight, core = 0;
        for (std::size_t f = factors.size(); f-- > 0;) {
          const std::int64_t idx = rest % factors[f].size;
          rest /= factors[f].size;
          if (factors[f].nc) {
            core += idx * w;
            w *= factors[f].size;
          }
        }
        term[a][static_cast<std::size_t>(i)] = core;
      }
    }
  }
  std::vector<std::int64_t> pid(shape.size(), 0);
  // Spread: the first `extra` blocks hold base + 1 instances, the others base.
  const std::int64_t base = spread ? total / unannotated_cores : 0, extra = spread ? total % unannotated_cores : 0;
  const std::int64_t big = extra * (base + 1);  // instances in the larger blocks
  for (std::int64_t n = 0; n < total; ++n) {
    std::int64_t core = 0;
    if (spread) {
      core = n < big ? n / (base + 1) : extra + (n - big) / base;
    } else {
      for (std::size_t a = 0; a < term.size(); ++a)
        if (!term[a].empty()) core += term[a][static_cast<std::size_t>(pid[a])];
    }
    cores[static_cast<std::size_t>(core)].instances.push_back(pid);
    for (int a = static_cast<int>(pid.size()) - 1; a >= 0; --a) {  // next id in row-major order
      if (++pid[a] < shape[a]) break;
      pid[a] = 0;
    }
  }
  return cores;
}

namespace {

/** The placements of recent launches, most recently used last. */
class PlacementCache {
 public:
  std::vector<CoreSchedule> get(const GridSpec& grid, int device_cores, const std::string& kernel, int unannotated_cores) {
    {
      std::lock_guard lock(mutex_);
      for (std::size_t i = entries_.size(); i-- > 0;) {
        Entry& e = entries_[i];
        if (e.cores != device_cores || e.unannotated != unannotated_cores || !(e.grid == grid)) continue;
        std::rotate(entries_.begin() + static_cast<std::ptrdiff_t>(i), entries_.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                    entries_.end());
        return entries_.back().placed;
      }
    }
    std::vector<CoreSchedule> placed = place_instances(grid, device_cores, kernel, unannotated_cores);  // may throw
    // A grid whose ids would dwarf everything else kept is placed anew each time.
    if (grid.instances() > kMaxIds / static_cast<std::int64_t>(std::max<std::size_t>(1, grid.axes.size()))) return placed;
    std::lock_guard lock(mutex_);
    if (entries_.size() == kEntries) entries_.erase(entries_.begin());
    entries_.push_back({grid, device_cores, unannotated_cores, placed});
    return placed;
  }

 private:
  static constexpr std::size_t kEntries = 16;
  static constexpr std::int64_t kMaxIds = std::int64_t{1} << 20;  // per entry: 8 MiB
  struct Entry {
    GridSpec grid;
    int cores;
    int unannotated;
    std::vector<CoreSchedule> placed;
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace

std::vector<CoreSchedule> placement_of(const GridSpec& grid, int device_cores, const std::string& kernel,
                                       int unannotated_cores) {
  static PlacementCache* cache = new PlacementCache;  // leaked on purpose: launches may run during exit
  return cache->get(grid, device_cores, kernel, unannotated_cores);
}

}  // namespace nki
