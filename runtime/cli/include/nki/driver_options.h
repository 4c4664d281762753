/** \file The compiler driver's flags and the pipeline options one function seeds from them (docs/compile.md). */
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nki/mesh.h"
#include "nki/replica_groups.h"

namespace nki {

/**
 * The flags of `nki compile` that shape the pipeline, as the user typed them. Numbers stay
 * text so that a bad value is refused by seed_pipeline_options in its own words.
 */
struct DriverFlags {
  std::string target = "trn2";                        ///< --target
  std::optional<std::string> lnc;                     ///< --lnc / --logical-nc-config
  bool spmd = false;                                  ///< --spmd / --enable-experimental-spmd
  std::optional<std::string> distribution_strategy;   ///< --distribution-strategy
  bool distribution_type_llm_training = false;        ///< --distribution-type-llm-training
  std::optional<std::string> layer_unroll_factor;     ///< --layer-unroll-factor
  std::optional<std::string> mesh;                    ///< --mesh data=D,tensor=T,pipeline=P
  std::optional<std::string> cores;                   ///< --cores (physical cores in the world)
};

/** One named axis of the device mesh. */
struct MeshAxisSize {
  std::string name;
  std::int64_t size = 1;
};

/** What the rest of the pipeline is driven by. */
struct PipelineOptions {
  std::string target;
  int lnc = 1;                        ///< physical cores per logical core
  int cores = 1;                      ///< physical cores in the world
  bool spmd = false;                  ///< one artifact for every core (else one per core)
  bool enable_internal_spmd_opt = false;  ///< spread a grid without nc over the logical core's cores
  std::optional<std::string> distribution_strategy;  ///< fsdp, nemo or llm-training (either spelling)
  int layer_unroll_factor = 1;        ///< unroll factor of the kernel's outermost loops
  std::vector<std::string> frontend_options;  ///< in order
  std::vector<MeshAxisSize> mesh;         ///< pipeline, data, tensor (major to minor), over the logical cores
  std::map<std::string, GroupList> replica_groups;  ///< per mesh axis: the groups of a collective over it

  int logical_cores() const { return cores / lnc; }
  /** The mesh as a nki::Mesh over the logical cores (axes pipeline, data, tensor; device ids 0, 1, ... row-major). */
  Mesh device_mesh() const;
  /** The cores a grid without nc factors is placed on: lnc with the internal SPMD opt, else 1. */
  int unannotated_cores() const { return enable_internal_spmd_opt ? lnc : 1; }
};

/// The distribution strategies, as --distribution-strategy takes them.
inline constexpr const char* kDistributionStrategies[] = {"fsdp", "nemo", "llm-training"};
/// Unroll factor fsdp sets when the user did not.
inline constexpr int kFsdpLayerUnrollFactor = 4;
/// Largest --layer-unroll-factor: each unrolled copy of a loop body is compiled code of its own.
inline constexpr int kMaxLayerUnrollFactor = 64;

/**
 * The one translation from driver flags to pipeline options (docs/compile.md has the table):
 * target and lnc (default 2 on trn2, 1 elsewhere; > 1 only on trn2), world size, the
 * strategy's front-end options and default unroll factor, `spmd` and
 * `enable_internal_spmd_opt` (spmd on a logical core of more than one physical core), and
 * the mesh (the strategy's default split unless --mesh names one) with each axis's replica
 * groups. Throws nki::UserError naming the flag, the value and what was expected.
 */
PipelineOptions seed_pipeline_options(const DriverFlags& flags);

/** The options as the JSON object `--dump-options` prints (docs/compile.md), with a final newline. */
std::string pipeline_options_json(const PipelineOptions& options);

}  // namespace nki
