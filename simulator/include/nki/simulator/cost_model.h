/** \file The cost model: IR ops as instructions on NeuronCore engine queues, scheduled into a timeline. */
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "nki/ir/kernel_ir.h"
#include "nki/simulator/target.h"

namespace nki::sim {

/** The engine queues of a NeuronCore. DMA stands for the core's `dma_queues` DMA queues. */
enum class Engine : std::uint8_t { tensor, vector, scalar, gpsimd, dma };
inline constexpr int kEngines = 5;
/** "Tensor", "Vector", "Scalar", "GpSimd", "DMA": the names in reports, JSON and traces. */
const char* engine_name(Engine e);

// ---- the published cost rules (docs/reference.md, "Cost rules"), in engine cycles ----
/** Fixed cost of every compute instruction: one SBUF/PSUM access bubble. */
inline constexpr std::int64_t kAccessBubbleCycles = 60;
/** Between an instruction and one that depends on it on another engine (semaphore wait), in the consumer's cycles. */
inline constexpr std::int64_t kDependencyCycles = 100;

/** nc_matmul: max(min(64, stationary free), moving free); 4x for fp32 inputs. */
std::int64_t matmul_cycles(std::int64_t stationary_free, std::int64_t moving_free, bool fp32_inputs);
/** Vector engine: max(64, N x tile inputs); bf16 add/multiply of two SBUF tiles counts as one input. */
std::int64_t vector_cycles(std::int64_t free_size, int tile_inputs);
/** Scalar engine activation: max(64, N). */
std::int64_t scalar_cycles(std::int64_t free_size);
/** GpSimd: 150 + N. */
std::int64_t gpsimd_cycles(std::int64_t free_size);
/** Bytes per partition row at which a DMA queue reaches its full bandwidth (ISA notes: "4 KiB or more to saturate"). */
inline constexpr std::int64_t kDmaSaturatingRowBytes = 4096;
/**
 * The least efficiency of a DMA queue, however short its rows: calibrated on the matmul table
 * (rows of 256 B and of 1 KiB move at the same rate per byte there; docs/reference.md, "Cost constants").
 */
inline constexpr double kDmaMinEfficiency = 0.25;
/** A transfer whose innermost tile axis steps over 16 bytes in HBM runs at half the rate (ISA notes). */
inline constexpr double kDmaStridedFactor = 0.5;
/**
 * A transfer by element-wise descriptors (a DMA transpose): 1/8 of a queue, before the strided
 * halving. No published figure: an assumption, listed as one in docs/reference.md.
 */
inline constexpr double kDmaElementwiseEfficiency = 0.125;
/** DMA efficiency of a transfer: clamp(bytes per partition / 4096, 1/4, 1), halved when strided. */
double dma_efficiency(std::int64_t bytes_per_partition, bool strided);
/**
 * One DMA transfer of `bytes` (`bytes_per_partition` per partition) on one queue, in us:
 * fixed cost + bytes / (queue bandwidth x dma_efficiency).
 */
double dma_queue_us(const TargetSpec& t, std::int64_t bytes, std::int64_t bytes_per_partition, bool strided);
/** The same at a given efficiency. */
double dma_queue_us_at(const TargetSpec& t, std::int64_t bytes, double efficiency);

/** One instruction an op becomes (no schedule yet). */
struct Instruction {
  Engine engine = Engine::vector;
  std::int64_t cycles = 0;        ///< compute engines: cycles of that engine, the access bubble included
  double duration_us = 0;         ///< the time it occupies its queue (DMA: on one queue, before HBM sharing)
  std::int64_t dma_bytes = 0;     ///< DMA: bytes moved
  std::int64_t flops = 0;         ///< Tensor engine: 2 x K x M x N of a matmul
  double ideal_tensor_us = 0;     ///< matmul FLOPs at the engine's peak for its dtype (for hfu)
  std::string what;               ///< e.g. "nc_matmul [128,128]x[128,512] bf16"
  Engine trigger = Engine::dma;   ///< DMA: the engine that writes its descriptors first (dge_mode), if trigger_us > 0
  double trigger_us = 0;
  /// Tensor engine: the 32-row tiles of the 128x128 PE array it occupies, a bit each (matmul
  /// tiling mode; every other instruction the whole array).
  std::uint32_t pe_rows = 0xF;
  /// A memset of an on-chip array with block dimensions (those before par_dim): this one
  /// instruction is issued once per block, each writing its own block.
  std::int64_t blocks = 1;
};
/** The PE array's rows in tiles of 32: the finest row tiling of nc_matmul (NeuronCore-v3+). */
inline constexpr int kPeRowTiles = 4;

/** The instruction an op becomes; nullopt-like `engine` unset is signalled by returning false. */
bool instruction_of(const ir::KernelIR& k, std::size_t op, const TargetSpec& t, Instruction& out);

/** One scheduled instruction, for timelines and traces. */
struct Event {
  int queue = 0;         ///< 0..3: Tensor, Vector, Scalar, GpSimd; 4 + q: DMA queue q
  std::size_t op = 0;    ///< body index of the op
  std::int32_t instance = 0;  ///< index into the core's instances
  double start_us = 0, end_us = 0;
};

struct EngineUse {
  double busy_us = 0;
  double utilization = 0;  ///< busy / (core latency x queues of the engine)
  std::int64_t instructions = 0;
};

struct CoreProfile {
  int nc = 0;
  int rank = 0;  ///< the world rank the core ran for (rank_id())
  std::vector<std::vector<std::int64_t>> instances;  ///< program ids, in run order
  double latency_us = 0;
  std::array<EngineUse, kEngines> engines{};
  std::int64_t dma_bytes = 0;
  std::vector<Event> events;  ///< only when asked for
};

/** What `nki profile` and nki::profile report. */
struct ProfileReport {
  std::string kernel, target, grid;
  int ranks = 0;                ///< a world launch's ranks (each core is one: CoreProfile::rank); 0 for a plain launch
  double latency_us = 0;        ///< the slowest core
  std::int64_t flops = 0;       ///< Tensor engine FLOPs (2 x K x M x N per matmul)
  double hfu = 0;               ///< ideal Tensor engine time / (latency x cores used), 0..1
  std::int64_t dma_bytes = 0;
  double dma_gbps = 0;          ///< dma_bytes / latency
  std::int64_t instructions = 0;
  std::vector<CoreProfile> cores;  ///< cores that ran instances
  std::vector<std::string> ops;    ///< per body index: "nl::load", ...
  std::vector<SourceLoc> op_locs;  ///< per body index: the kernel source line
};

/** How one collective (ir::CollectiveOp) of a world launch meets, as one rank sees it. */
struct CollectiveShape {
  int ranks = 1;  ///< the size of the rank's group (a permute: 2 when the rank sends or receives, else 1)
  int chips = 1;  ///< how many chips the group's ranks are on (1: all on this core's chip)
};

/** The instances one NeuronCore runs, in order (as the launch places them). */
struct CoreWork {
  int nc = 0;
  std::vector<std::vector<std::int64_t>> instances;
  int rank = 0;  ///< the world rank the core runs for (rank_id(); 0 outside a world launch)
  int chip = 0;  ///< the chip the core is on: the cores of one chip share its HBM bandwidth
  /// Per ir::CollectiveOp of the kernel, in body order; a collective past the end meets a group
  /// of one (a plain launch), which moves its bytes within the core.
  std::vector<CollectiveShape> collectives;
};

/**
 * Schedules every core's instances: each op becomes an instruction on its engine queue; an
 * instruction starts when its queue is free and its inputs are ready (tiles by def-use,
 * tensors by the overlap of the boxes accesses touch: read after write, write after read or
 * write). Engines run concurrently; on NeuronCore-v2 Vector and GpSimd share the SBUF port.
 * A loop-local on-chip tensor rotates over its loop_buffers; a DMA transfer takes the first gap
 * of any queue after its fixed cost. Each chip's HBM bandwidth is split evenly among its cores
 * that run instances. Needs no data. Throws what check_capacity throws for a kernel that does
 * not fit the target.
 */
ProfileReport estimate(const ir::KernelIR& k, const std::vector<CoreWork>& cores, const TargetSpec& t,
                       bool keep_events);

/** The report as one JSON object (docs/reference.md, "nki profile --json"). */
std::string profile_json(const ProfileReport& r);
/** Chrome Trace Event JSON: one process per NeuronCore, one thread per engine queue. */
std::string chrome_trace_json(const ProfileReport& r);
/** The human-readable report `nki profile` prints. */
std::string profile_text(const ProfileReport& r);

}  // namespace nki::sim
