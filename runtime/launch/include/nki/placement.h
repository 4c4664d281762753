/** \file Grid placement: which NeuronCore runs which instances of a launch grid. */
#pragma once

#include <string>
#include <vector>

#include "nki/grid.h"
#include "nki/schedule.h"

namespace nki {

/**
 * Places every instance of `grid` on one of `device_cores` NeuronCores.
 *
 * The rule: a factor written nc(k) selects the core. With several nc factors the
 * core index is their row-major combination (in axis order, then factor order).
 * Factors without nc run on the core their nc factors chose; a grid without any
 * nc runs entirely on NC0, the first core of the logical core (NKI's LNC
 * behaviour: unannotated axes are not split across physical cores). Each core
 * runs its instances in row-major order of their logical program ids. Every core
 * of the device gets an entry, possibly empty.
 *
 * `unannotated_cores` > 1 (the compiler's enable_internal_spmd_opt on a logical core of that
 * many physical cores): a grid without any nc factor is split instead into that many
 * contiguous blocks of its instances in row-major order, block k on NC k; the first
 * (instances mod unannotated_cores) blocks hold one instance more. Grids with nc factors are
 * placed as above.
 *
 * Throws nki::UserError when the grid needs more cores than the device has, or has an axis
 * of size < 1.
 */
std::vector<CoreSchedule> place_instances(const GridSpec& grid, int device_cores, const std::string& kernel = "",
                                          int unannotated_cores = 1);

/**
 * place_instances, remembered: the placements of the last 16 grids (of at most 2^20 ids, an id
 * per axis per instance) are kept per (grid, device_cores, unannotated_cores), so a launch rerun places
 * nothing; the copy returned shares its ids with the kept one. Thread-safe.
 */
std::vector<CoreSchedule> placement_of(const GridSpec& grid, int device_cores, const std::string& kernel = "",
                                       int unannotated_cores = 1);

}  // namespace nki
