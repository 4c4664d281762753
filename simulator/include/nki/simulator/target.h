/** \file Hardware targets: the published numbers of each NeuronCore generation. */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nki::sim {

struct TargetSpec {
  std::string name;                  ///< "trn1", "inf2", "trn2"
  int cores_per_chip;                ///< physical NeuronCores on one chip
  int default_lnc;                   ///< physical cores per logical core by default
  std::int64_t hbm_bytes;            ///< HBM per chip, shared by its cores
  std::int64_t sbuf_bytes_per_core;  ///< 128 partitions x 192 KiB
  std::int64_t psum_bytes_per_core;  ///< 128 partitions x 16 KiB
};

/** The spec of a target by name; throws nki::UserError naming the valid targets when unknown. */
const TargetSpec& target_spec(std::string_view name);
/** The names of all targets, in a fixed order. */
std::vector<std::string> target_names();

}  // namespace nki::sim
