/** \file Hardware targets: the published numbers of each NeuronCore generation. */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nki::sim {

/**
 * One NeuronCore generation as the simulator sees it. Numbers are from the public
 * hardware tables (docs/reference.md, "Targets"); trn3's are assumptions documented there.
 */
struct TargetSpec {
  std::string name;                  ///< "trn1", "inf2", "trn2", "trn3"
  int cores_per_chip;                ///< physical NeuronCores on one chip
  int default_lnc;                   ///< physical cores per logical core by default
  std::int64_t hbm_bytes;            ///< HBM per chip, shared by its cores
  std::int64_t sbuf_bytes_per_core;  ///< partitions x sbuf_partition_bytes
  std::int64_t psum_bytes_per_core;  ///< partitions x psum_partition_bytes
  int partitions = 128;              ///< SBUF and PSUM partitions
  int psum_banks = 8;                ///< PSUM banks per partition; an accumulation group holds one
  double tensor_ghz = 0;             ///< Tensor engine clock (128x128 systolic array)
  double vector_ghz = 0;             ///< Vector engine clock
  double scalar_ghz = 0;             ///< Scalar (activation) engine clock
  double gpsimd_ghz = 0;             ///< GpSimd engine clock
  double hbm_gbps = 0;               ///< HBM bandwidth per chip, GB/s (1e9 bytes/s), shared by its cores
  int dma_queues = 16;               ///< DMA engines (queues) per core
  double dma_queue_gbps = 0;         ///< bandwidth of one DMA engine, GB/s
  double dma_fixed_us = 1.3;         ///< fixed cost of one DMA transfer
  double link_gbps = 0;              ///< chip-to-chip (NeuronLink) bandwidth per chip, GB/s, shared by its cores
  bool vector_gpsimd_share_sbuf_port = false;  ///< NeuronCore-v2: Vector and GpSimd serialize on SBUF access
  int nc_version = 3;                ///< NeuronCore generation (isa::get_nc_version): 2 trn1/inf2, 3 trn2, 4 trn3

  std::int64_t sbuf_partition_bytes() const { return sbuf_bytes_per_core / partitions; }
  std::int64_t psum_partition_bytes() const { return psum_bytes_per_core / partitions; }
  std::int64_t psum_bank_bytes() const { return psum_partition_bytes() / psum_banks; }
  /** Peak matmul FLOP/s of one core for 2-byte (bf16/fp16) inputs: 2 x 128 x 128 per cycle. */
  double peak_flops_bf16() const { return 2.0 * 128 * 128 * tensor_ghz * 1e9; }
};

/** The spec of a target by name; throws nki::UserError (err_unknown_target) naming the valid targets when unknown. */
const TargetSpec& target_spec(std::string_view name);
/** The names of all targets, in a fixed order: trn1, inf2, trn2, trn3. */
std::vector<std::string> target_names();

}  // namespace nki::sim
