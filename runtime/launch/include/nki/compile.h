/** \file Compiling a kernel for a world of cores without running it (what `nki compile` does). */
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nki/kernel.h"
#include "nki/mesh.h"

namespace nki {

struct CompileOptions {
  CompileMode mode = CompileMode::spmd;
  std::string target = "trn2";
  /// Physical cores in the world; 0: the target's default (one logical core). Under MPI
  /// each rank is a chip of cores/ranks of them (rounded up).
  int cores = 0;
  int layer_unroll_factor = 1;  ///< unroll factor of the kernel's outermost loops (1: rolled)
  /// A grid without nc factors is split over this many cores (place_instances); 1: all on NC0.
  int unannotated_cores = 1;
  bool estimate_latency = false;  ///< also run the cost model on the placement (CompileReport::simulated_latency_us)
  /// The world of a kernel that spans ranks (collectives, rank_id): one rank per device of this
  /// mesh, each running the whole grid on one logical core of `lnc` NeuronCores, its axis-named
  /// collectives' groups the mesh's (nki::WorldLaunch's model). A kernel that does not span
  /// ranks ignores it and is placed on the cores as above.
  std::optional<Mesh> mesh;
  int lnc = 1;  ///< NeuronCores per rank with `mesh` (ranks per chip: the target's cores / lnc)
};

/** The artifact one core of the world uses. */
struct CoreArtifact {
  int nc = 0;
  std::string key;
  bool compiled = false;  ///< this call compiled it (else it was in memory or the cache directory)
  std::int64_t instances = 0;  ///< grid instances the core runs
};

struct CompileReport {
  std::string kernel;
  /// A world compile (CompileOptions::mesh and a kernel that spans ranks): the ranks of the
  /// world; `busy` then lists ranks (nc is the world rank). 0 otherwise.
  int ranks = 0;
  std::string mesh;  ///< the world's mesh (Mesh::str), for a world compile
  std::string ir_hash;
  CompileMode mode = CompileMode::spmd;
  int cores = 0;                    ///< cores in the world
  int compiled = 0;                 ///< distinct artifacts compiled
  int reused = 0;                   ///< distinct artifacts found already compiled
  std::vector<CoreArtifact> busy;   ///< every core that runs instances, in core order
  std::string ir_text;              ///< canonical IR of the traced kernel
  double simulated_latency_us = 0;  ///< the cost model's latency of this placement (with estimate_latency)
};

/**
 * Traces `launch`'s kernel for argument shapes and dtypes, places its grid on the world's
 * cores, and compiles into the cache what those cores need (SPMD: one artifact; MPMD: one
 * per busy core). Runs the SPMD guard rails; with `estimate_latency`, also checks on-chip
 * capacity and estimates the placement's latency with the simulator's cost model. Under MPI
 * (nki/mpi_world.h) every rank calls it alike: the grid is placed on the world's cores, each rank
 * compiles what its own chip's cores need (one rank per host and cache directory first, the
 * others then loading it), and every rank returns the report of the whole world.
 * With a mesh and a kernel that spans ranks it compiles for the mesh's ranks instead: SPMD one
 * artifact for all, MPMD one per rank with its rank and groups baked in; the mesh's groups are
 * part of the key. Collectives whose groups do not fit the mesh are refused (nki::UserError).
 */
CompileReport compile(const BoundLaunch& launch, const std::vector<Shape>& shapes, const std::vector<DType>& dtypes,
                      const CompileOptions& options = {});

}  // namespace nki
