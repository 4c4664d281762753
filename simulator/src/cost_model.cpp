/** \file The cost model: instruction costs from the published rules, and the list scheduler that builds the timeline. */
#include "nki/simulator/cost_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>

#include "nki/ir/walk.h"
#include "nki/simulator/capacity.h"
#include "nki/simulator/collective_cost.h"
#include "busy_intervals.h"
#include "op_info.h"

namespace nki::sim {

const char* engine_name(Engine e) {
  switch (e) {
    case Engine::tensor: return "Tensor";
    case Engine::vector: return "Vector";
    case Engine::scalar: return "Scalar";
    case Engine::gpsimd: return "GpSimd";
    case Engine::dma: return "DMA";
  }
  return "?";
}

std::int64_t matmul_cycles(std::int64_t stationary_free, std::int64_t moving_free, bool fp32_inputs) {
  const std::int64_t c = std::max(std::min<std::int64_t>(64, stationary_free), moving_free);
  return fp32_inputs ? 4 * c : c;
}
std::int64_t vector_cycles(std::int64_t free_size, int tile_inputs) {
  return std::max<std::int64_t>(64, free_size * std::max(1, tile_inputs));
}
std::int64_t scalar_cycles(std::int64_t free_size) { return std::max<std::int64_t>(64, free_size); }
std::int64_t gpsimd_cycles(std::int64_t free_size) { return 150 + free_size; }

double dma_efficiency(std::int64_t bytes_per_partition, bool strided) {
  const double eff = std::clamp(static_cast<double>(bytes_per_partition) / static_cast<double>(kDmaSaturatingRowBytes),
                                kDmaMinEfficiency, 1.0);
  return strided ? eff * kDmaStridedFactor : eff;
}

double dma_queue_us_at(const TargetSpec& t, std::int64_t bytes, double efficiency) {
  return t.dma_fixed_us + static_cast<double>(bytes) / (t.dma_queue_gbps * 1e3 * efficiency);  // GB/s = 1e3 bytes/us
}

double dma_queue_us(const TargetSpec& t, std::int64_t bytes, std::int64_t bytes_per_partition, bool strided) {
  return dma_queue_us_at(t, bytes, dma_efficiency(bytes_per_partition, strided));
}

namespace {

std::int64_t free_size(const Shape& s) {
  std::int64_t n = 1;
  for (std::size_t d = 1; d < s.size(); ++d) n *= s[d];
  return n;
}
std::int64_t partitions(const Shape& s) { return s.empty() ? 1 : s[0]; }

double ghz_of(const TargetSpec& t, Engine e) {
  switch (e) {
    case Engine::tensor: return t.tensor_ghz;
    case Engine::vector: return t.vector_ghz;
    case Engine::scalar: return t.scalar_ghz;
    case Engine::gpsimd: return t.gpsimd_ghz;
    case Engine::dma: return 1.0;
  }
  return 1.0;
}

void compute(Instruction& in, const TargetSpec& t, Engine e, std::int64_t rule_cycles, std::string what) {
  in.engine = e;
  in.cycles = rule_cycles + kAccessBubbleCycles;
  in.duration_us = static_cast<double>(in.cycles) / (ghz_of(t, e) * 1e3);
  in.what = std::move(what);
}

/** Whether the innermost tile axis walks the tensor with a stride over 16 bytes. */
bool strided_access(const ir::KernelIR& k, const ir::Access& a) {
  const ir::TensorDecl& tensor = k.tensors.at(static_cast<std::size_t>(a.tensor));
  if (a.shape.size() < 2) return false;
  const int axis = static_cast<int>(a.shape.size()) - 1;
  if (a.shape[static_cast<std::size_t>(axis)] == 1) return false;
  const std::vector<std::int64_t> strides = row_major_strides(tensor.shape);
  std::int64_t step = 0;
  for (std::size_t d = 0; d < a.indices.size(); ++d)
    step += a.indices[d].coeff_of({ir::Sym::Kind::axis, axis}) * strides[d];
  return std::abs(step) * dtype_bytes(tensor.dtype) > 16;
}

void dma(Instruction& in, const ir::KernelIR& k, const TargetSpec& t, const ir::Access& a, const Shape& tile,
         const char* dir) {
  const ir::TensorDecl& tensor = k.tensors.at(static_cast<std::size_t>(a.tensor));
  const std::int64_t eb = dtype_bytes(tensor.dtype);
  in.engine = Engine::dma;
  in.dma_bytes = shape_elements(tile) * eb;
  const bool strided = strided_access(k, a);
  in.duration_us = dma_queue_us(t, in.dma_bytes, free_size(tile) * eb, strided);
  in.what = fmt::format("dma {} {} {} {}{}", dir, tensor.name, shape_str(tile), dtype_name(tensor.dtype),
                        strided ? " strided" : "");
}

/**
 * Descriptor generation of an explicit DMA (isa.dma_copy's dge_mode): software DGE has GpSimd
 * write one descriptor per partition row before the transfer; hardware DGE is started by a
 * sequencer (Scalar, or Sync which has no queue here) in a fixed bubble; none (and unknown,
 * which the compiler resolves to static descriptors for affine addresses) costs nothing on chip.
 */
void dma_issue(Instruction& in, const TargetSpec& t, const ir::DmaInfo& d, std::int64_t rows) {
  if (d.transpose || d.sources > 1) {  // re-priced: element-wise descriptors, or every source read
    const std::int64_t bytes = in.dma_bytes * std::max(1, d.sources);
    const std::int64_t per_row = bytes / std::max<std::int64_t>(1, rows);
    in.dma_bytes = bytes;
    in.duration_us = d.transpose ? dma_queue_us_at(t, bytes, kDmaElementwiseEfficiency * kDmaStridedFactor)
                                 : dma_queue_us(t, bytes, per_row, false);
    if (d.transpose) in.what += " transpose";
    if (d.sources > 1) in.what += fmt::format(" compute of {} sources", d.sources);
  }
  if (d.dge == ir::DgeMode::swdge) {
    in.trigger = Engine::gpsimd;
    in.trigger_us = static_cast<double>(gpsimd_cycles(rows)) / (t.gpsimd_ghz * 1e3);
  } else if (d.dge == ir::DgeMode::hwdge && d.trigger == ir::Engine::scalar) {
    in.trigger = Engine::scalar;
    in.trigger_us = static_cast<double>(kAccessBubbleCycles) / (t.scalar_ghz * 1e3);
  }
  if (in.trigger_us > 0) in.what += fmt::format(" {} on {}", ir::dge_mode_name(d.dge), engine_name(in.trigger));
}

/**
 * A core_barrier (a semaphore to the other core, then a wait for its own) and a sendrecv by
 * GpSimd's own DMA are instructions of one engine; a sendrecv by the DMA engines is a transfer.
 */
bool core_sync_on_engine(const ir::CollectiveOp& c) {
  return c.kind == ir::CollectiveOp::Kind::core_barrier ||
         (c.kind == ir::CollectiveOp::Kind::sendrecv && c.engine == ir::Engine::gpsimd);
}

/** Their cycles: the barrier one semaphore wait; the GpSimd swap 150 + N of the tile's partition rows. */
std::int64_t core_sync_cycles(const ir::KernelIR& k, const ir::CollectiveOp& c) {
  if (c.kind == ir::CollectiveOp::Kind::core_barrier) return kDependencyCycles;
  const Shape& sh = k.tensors.at(static_cast<std::size_t>(c.srcs.front())).shape;
  return gpsimd_cycles(shape_elements(sh) / std::max<std::int64_t>(1, sh.front()));
}

}  // namespace

/** The simulator's engine for an author's engine= choice (unknown: `fallback`). */
Engine engine_of(ir::Engine e, Engine fallback) {
  switch (e) {
    case ir::Engine::unknown: return fallback;
    case ir::Engine::tensor: return Engine::tensor;
    case ir::Engine::vector: return Engine::vector;
    case ir::Engine::scalar: return Engine::scalar;
    case ir::Engine::gpsimd: return Engine::gpsimd;
  }
  return fallback;
}

/** Cycles of an elementwise pass over `n` elements per partition on engine `e` (`inputs` tiles read). */
std::int64_t elementwise_cycles(Engine e, std::int64_t n, int inputs) {
  switch (e) {
    case Engine::scalar: return scalar_cycles(n);
    case Engine::gpsimd: return gpsimd_cycles(n);
    default: return vector_cycles(n, inputs);
  }
}

/**
 * One partition of a tile spread over many (an nl elementwise op's operand, or broadcast_to):
 * the engines read and write within a partition, so the Tensor engine moves it, as a matmul of
 * a ones [1, P] stationary by the [1, N] row.
 */
void partition_broadcast(Instruction& in, const TargetSpec& t, const Shape& from, const Shape& to, DType dtype) {
  compute(in, t, Engine::tensor, matmul_cycles(partitions(to), free_size(to), dtype == DType::fp32),
          fmt::format("partition_broadcast {} to {}", shape_str(from), shape_str(to)));
  in.flops = 0;
}

bool instruction_of(const ir::KernelIR& k, std::size_t at, const TargetSpec& t, Instruction& in) {
  in = Instruction{};
  const ir::Op& op = k.body.at(at);
  auto tile = [&](int id) -> const ir::TileInfo& { return k.tiles.at(static_cast<std::size_t>(id)); };
  auto sbuf_tile = [&](const ir::Operand& o) { return !o.is_scalar() && tile(o.tile).memory == ir::Memory::sbuf; };
  if (is_fused(op)) {
    // Done by the instruction that made its operand (an accumulation, a negate, the output
    // cast): no time of its own, on that instruction's engine so no semaphore wait either.
    in.engine = engine_of(chosen_engine(op), Engine::vector);
    in.what = fmt::format("{} (fused)", op_label(op));
    return true;
  }
  if (const auto* l = std::get_if<ir::LoadOp>(&op)) {
    // The read half of an explicit DMA instruction is that instruction's (its store is priced).
    if (l->dma.part) return false;
    if (!ir::is_hbm(k.tensors.at(static_cast<std::size_t>(l->src.tensor)).memory)) return false;  // a view
    dma(in, k, t, l->src, tile(l->result).shape, "load");
    dma_issue(in, t, l->dma, partitions(tile(l->result).shape));
    return true;
  }
  if (const auto* s = std::get_if<ir::StoreOp>(&op)) {
    const ir::TensorDecl& dst = k.tensors.at(static_cast<std::size_t>(s->dst.tensor));
    const Shape& shape = tile(s->value).shape;
    if (s->atomic) {
      // nl.atomic_rmw: the DMA reads dst's rows and writes them back updated, one after the
      // other on one queue (two transfers by the load / store rule), descriptors from GpSimd.
      dma(in, k, t, s->dst, shape, "atomic_rmw add");
      in.dma_bytes *= 2;
      in.duration_us *= 2;
      dma_issue(in, t, s->dma, partitions(shape));
      return true;
    }
    if (ir::is_hbm(dst.memory) || s->dma.issued) {  // isa.dma_copy between on-chip arrays is a DMA too
      dma(in, k, t, s->dst, shape, s->index_tile >= 0 ? "scatter" : s->dma.issued ? "copy" : "store");
      dma_issue(in, t, s->dma, partitions(shape));
      return true;
    }
    const std::int64_t n = free_size(shape);
    const bool fast = s->accumulate && dst.dtype == DType::bf16 && tile(s->value).dtype == DType::bf16 &&
                      tile(s->value).memory == ir::Memory::sbuf && dst.memory == ir::Memory::sbuf;
    compute(in, t, Engine::vector, vector_cycles(n, s->accumulate && !fast ? 2 : 1),
            fmt::format("{} {} {}", s->accumulate ? "tensor_tensor add into" : "tensor_copy into", dst.name,
                        shape_str(shape)));
    return true;
  }
  if (const auto* a = std::get_if<ir::AllocOp>(&op)) {
    const ir::TensorDecl& tensor = k.tensors.at(static_cast<std::size_t>(a->tensor));
    if (!tensor.fill || ir::is_hbm(tensor.memory)) return false;
    // PSUM zeros are free: the first matmul into a fresh accumulator writes instead of adding.
    if (tensor.memory == ir::Memory::psum && *tensor.fill == 0.0) return false;
    const Shape& storage = ir::storage_shape(tensor);  // a placed array fills its physical blocks
    const std::int64_t n = shape_elements(storage) / storage[static_cast<std::size_t>(tensor.par_dim)];
    // Each block of an (unplaced) array is a tile of its own: one memset instruction per block.
    if (!tensor.placement.placed)
      for (int d = 0; d < tensor.par_dim; ++d) in.blocks *= tensor.shape[static_cast<std::size_t>(d)];
    compute(in, t, Engine::vector, vector_cycles(n / in.blocks, 1),
            fmt::format("memset {} {}{}", tensor.name, shape_str(tensor.shape),
                        in.blocks > 1 ? fmt::format(" per block of {}", in.blocks) : ""));
    return true;
  }
  if (const auto* a = std::get_if<ir::ActivationOp>(&op)) {
    const Shape& s = tile(a->result).shape;
    const bool copy = a->kind == ir::ActKind::copy && a->scale.is_scalar() && a->scale.scalar == 1.0 &&
                      a->bias.is_scalar() && a->bias.scalar == 0.0;
    // A copy from one partition to many (an elementwise op's partition broadcast): the engines
    // read and write within a partition, so the Tensor engine moves it, as a matmul of a ones
    // [1, P] stationary by the [1, N] row.
    const Shape& from = a->data.is_scalar() ? s : tile(a->data.tile).shape;
    if (copy && partitions(from) == 1 && partitions(s) > 1) {
      partition_broadcast(in, t, from, s, tile(a->data.tile).dtype);
      return true;
    }
    // Copies default to the Vector engine, activation functions to the Scalar engine; engine= overrides.
    const Engine e = engine_of(a->engine, copy ? Engine::vector : Engine::scalar);
    if (copy) {
      compute(in, t, e, elementwise_cycles(e, free_size(s), 1),
              fmt::format("tensor_copy {}{}", shape_str(s), a->engine == ir::Engine::unknown ? "" : fmt::format(" on {}", engine_name(e))));
    } else {
      if (e == Engine::scalar) {
        compute(in, t, e, scalar_cycles(free_size(s)), fmt::format("activation {} {}", ir::act_name(a->kind), shape_str(s)));
      } else {  // isa::reciprocal, isa::exponential: elementwise passes of the Vector (or GpSimd) engine
        compute(in, t, e, elementwise_cycles(e, free_size(s), 1),
                fmt::format("{} {} on {}", ir::act_name(a->kind), shape_str(s), engine_name(e)));
      }
    }
    return true;
  }
  if (const auto* b = std::get_if<ir::BinaryOp>(&op)) {
    const Shape& s = tile(b->result).shape;
    int inputs = (b->lhs.is_scalar() ? 0 : 1) + (b->rhs.is_scalar() ? 0 : 1);
    if (b->kind == ir::BinaryKind::prelu) {  // an activation function (nl.prelu): the Scalar engine's
      compute(in, t, Engine::scalar, scalar_cycles(free_size(s)), fmt::format("activation prelu {}", shape_str(s)));
      return true;
    }
    const bool add_mul = b->kind == ir::BinaryKind::add || b->kind == ir::BinaryKind::multiply;
    if (inputs == 2 && add_mul && sbuf_tile(b->lhs) && sbuf_tile(b->rhs) && tile(b->lhs.tile).dtype == DType::bf16 &&
        tile(b->rhs.tile).dtype == DType::bf16)
      inputs = 1;
    const Engine e = engine_of(b->engine, Engine::vector);
    compute(in, t, e, elementwise_cycles(e, free_size(s), inputs),
            fmt::format("tensor_tensor {} {}{}", ir::binary_name(b->kind), shape_str(s),
                        b->engine == ir::Engine::unknown ? "" : fmt::format(" on {}", engine_name(e))));
    return true;
  }
  if (const auto* s = std::get_if<ir::SelectOp>(&op)) {
    const Shape& sh = tile(s->result).shape;
    if (s->cond.is_scalar()) {
      compute(in, t, Engine::gpsimd, gpsimd_cycles(free_size(sh)), fmt::format("affine_select {}", shape_str(sh)));
    } else {
      const int inputs = 1 + (s->on_true.is_scalar() ? 0 : 1) + (s->on_false.is_scalar() ? 0 : 1);
      compute(in, t, Engine::vector, vector_cycles(free_size(sh), inputs), fmt::format("select {}", shape_str(sh)));
    }
    return true;
  }
  if (const auto* i = std::get_if<ir::IotaOp>(&op)) {
    const Shape& sh = tile(i->result).shape;
    compute(in, t, Engine::gpsimd, gpsimd_cycles(free_size(sh)), fmt::format("iota {}", shape_str(sh)));
    return true;
  }
  if (const auto* r = std::get_if<ir::ReduceOp>(&op)) {
    const Shape& sh = tile(r->data).shape;
    // var walks the data twice (the mean, then the squared deviations from it).
    const int passes = r->kind == ir::ReduceKind::var ? 2 : 1;
    compute(in, t, Engine::vector, passes * vector_cycles(free_size(sh), 1),
            fmt::format("tensor_reduce {} {}", ir::reduce_name(r->kind), shape_str(sh)));
    return true;
  }
  if (const auto* m = std::get_if<ir::MatmulOp>(&op)) {
    const ir::TileInfo& st = tile(m->stationary);
    const ir::TileInfo& mv = tile(m->moving);
    const bool fp32 = st.dtype == DType::fp32 || mv.dtype == DType::fp32;
    const std::int64_t kk = partitions(st.shape), mm = free_size(st.shape), nn = free_size(mv.shape);
    // double_row: each PE row takes an fp8 pair, so one pass contracts 2K rows in the time of K.
    const int rows = m->stationary2 >= 0 ? 2 : 1;
    // is_*_onezero: an fp32 operand of ones and zeros streams at twice the fp32 rate (2x, not 4x).
    const bool hinted = fp32 && (st.dtype != DType::fp32 || m->stationary_onezero) && (mv.dtype != DType::fp32 || m->moving_onezero);
    const std::int64_t cycles = matmul_cycles(mm, nn, fp32) / (hinted ? 2 : 1);
    const char* mode = m->transpose ? " transpose" : "";
    compute(in, t, Engine::tensor, cycles,
            rows == 2 ? fmt::format("nc_matmul double_row [{},2,{}]x[{},2,{}] {}", kk, mm, kk, nn, dtype_name(st.dtype))
                      : fmt::format("nc_matmul{} [{},{}]x[{},{}] {}", mode, kk, mm, kk, nn, dtype_name(st.dtype)));
    // tile_position / tile_size: the 32-row tiles of the PE array this matmul occupies.
    in.pe_rows = 0;
    for (std::int64_t q = m->tile_row / 32; q < (m->tile_row + m->tile_rows) / 32; ++q) in.pe_rows |= 1u << q;
    in.flops = 2 * rows * kk * mm * nn;
    in.ideal_tensor_us = static_cast<double>(in.flops) / (rows * t.peak_flops_bf16() / (fp32 ? 4.0 : 1.0)) * 1e6;
    return true;
  }
  if (const auto* q = std::get_if<ir::QuantizeMxOp>(&op)) {
    // One Vector instruction makes both outputs: the data op is charged, the scale op rides along.
    if (q->scale) {
      in.engine = Engine::vector;
      in.what = "quantize_mx scale (fused)";
      return true;
    }
    const Shape& sh = tile(q->data).shape;
    compute(in, t, Engine::vector, vector_cycles(free_size(sh), 1),
            fmt::format("quantize_mx {} {}", dtype_name(q->format), shape_str(sh)));
    return true;
  }
  if (const auto* m = std::get_if<ir::MatmulMxOp>(&op)) {
    // As nc_matmul: the moving columns stream once through the array; each row reads a packed
    // element, 4 values, so a pass contracts 4K values.
    const ir::TileInfo& st = tile(m->stationary);
    const std::int64_t kk = partitions(st.shape), mm = free_size(st.shape), nn = free_size(tile(m->moving).shape);
    compute(in, t, Engine::tensor, matmul_cycles(mm, nn, false),
            fmt::format("nc_matmul_mx [{},{}]x[{},{}] {}", kk, mm, kk, nn, dtype_name(st.dtype)));
    in.flops = 2 * 4 * kk * mm * nn;
    in.ideal_tensor_us = static_cast<double>(in.flops) / t.peak_flops_bf16() * 1e6;
    return true;
  }
  if (const auto* sc = std::get_if<ir::ScanOp>(&op)) {
    // Streams both inputs through the Vector engine like tensor_tensor; the carry adds no pass.
    const Shape& sh = tile(sc->result).shape;
    compute(in, t, Engine::vector, vector_cycles(free_size(sh), 2),
            fmt::format("tensor_tensor_scan {} {} {}", ir::binary_name(sc->op0), ir::binary_name(sc->op1), shape_str(sh)));
    return true;
  }
  if (const auto* v = std::get_if<ir::ViewOp>(&op)) {
    // A window of a tile is an access pattern of the instruction that reads it; spreading one
    // partition over many is a cross-partition move, priced as an elementwise op's partition
    // broadcast (one rule for both).
    const Shape& from = tile(v->data).shape;
    const Shape& sh = tile(v->result).shape;
    if (partitions(from) != 1 || partitions(sh) == 1) return false;
    partition_broadcast(in, t, from, sh, tile(v->data).dtype);
    return true;
  }
  if (const auto* g = std::get_if<ir::GatherOp>(&op)) {
    const Shape& sh = tile(g->result).shape;
    if (g->indices >= 0) {
      // nc_n_gather is n = ceil(elements per partition / 512) GpSimd instructions.
      const Engine e = engine_of(g->engine, Engine::gpsimd);
      const std::int64_t n = free_size(sh), groups = (n + 511) / 512;
      compute(in, t, e, e == Engine::gpsimd ? groups * gpsimd_cycles(0) + n : elementwise_cycles(e, n, 2),
              fmt::format("{} {}", g->label, shape_str(sh)));
    } else {  // nc_stream_shuffle: one pass of the Vector engine over the tile
      compute(in, t, engine_of(g->engine, Engine::vector), vector_cycles(free_size(sh), 1),
              fmt::format("{} {}", g->label, shape_str(sh)));
    }
    return true;
  }
  if (const auto* c = std::get_if<ir::CollectiveOp>(&op); c && core_sync_on_engine(*c)) {
    const Engine e = engine_of(c->engine, Engine::gpsimd);
    in.engine = e;
    in.cycles = core_sync_cycles(k, *c);
    in.duration_us = static_cast<double>(in.cycles) / (ghz_of(t, e) * 1e3);
    in.what = c->kind == ir::CollectiveOp::Kind::core_barrier ? "core_barrier" : "sendrecv gpsimd_dma";
    return true;
  }
  if (const auto* c = std::get_if<ir::CollectiveOp>(&op)) {
    // As a group of one on rank 0 (a plain launch); the scheduler prices each core's own group.
    const CollectiveSteps st = collective_steps(k, *c, CollectiveShape{}, 0, t, t.link_gbps);
    in.engine = Engine::dma;
    in.dma_bytes = st.bytes();
    in.duration_us = st.steps * st.step_us(t);
    in.what = fmt::format("{} of {} buffers, {} steps of {} bytes", ir::collective_name(c->kind), c->srcs.size(),
                          st.steps, st.step_bytes);
    return true;
  }
  if (const auto* tr = std::get_if<ir::TransposeOp>(&op)) {
    const ir::TileInfo& d = tile(tr->data);
    if (tr->engine == ir::Engine::vector) {  // the Vector engine's 32x32 transpose: one pass over the tile
      compute(in, t, Engine::vector, vector_cycles(free_size(d.shape), 1),
              fmt::format("nc_transpose {} on Vector", shape_str(d.shape)));
      return true;
    }
    compute(in, t, Engine::tensor, matmul_cycles(free_size(d.shape), partitions(d.shape), d.dtype == DType::fp32),
            fmt::format("nc_transpose {}", shape_str(d.shape)));
    return true;
  }
  return false;
}

namespace {

using Box = std::vector<std::pair<std::int64_t, std::int64_t>>;

bool overlap(const Box& a, const Box& b) {
  for (std::size_t d = 0; d < a.size(); ++d)
    if (a[d].second < b[d].first || b[d].second < a[d].first) return false;
  return true;
}

struct HistEntry {
  Box box;
  double end;
  bool write;
  int queue;
};

bool covers(const Box& outer, const Box& inner) {
  for (std::size_t d = 0; d < outer.size(); ++d)
    if (inner[d].first < outer[d].first || inner[d].second > outer[d].second) return false;
  return true;
}

/**
 * Recent accesses of one tensor. An access that covers an earlier one's box, is a write or
 * meets a read, and ends late enough (by the dependency latency when on another queue) makes
 * the earlier one redundant: every later access that would wait for it waits at least as long
 * for the newer. So a buffer rewritten each iteration keeps a short history and the
 * dependencies stay exact; past kKeep entries, the oldest fold into floors (conservative).
 */
struct TensorHistory {
  std::vector<HistEntry> recent;
  double floor_write = 0, floor_any = 0;
  static constexpr std::size_t kKeep = 1024;
  void add(HistEntry e, double max_latency) {
    std::erase_if(recent, [&](const HistEntry& old) {
      return (e.write || !old.write) && e.end >= old.end + (old.queue == e.queue ? 0.0 : max_latency) &&
             covers(e.box, old.box);
    });
    if (recent.size() == kKeep) {
      const HistEntry& old = recent.front();
      floor_any = std::max(floor_any, old.end);
      if (old.write) floor_write = std::max(floor_write, old.end);
      recent.erase(recent.begin());
    }
    recent.push_back(std::move(e));
  }
};

/** The buffers of one on-chip tensor allocated in a loop (loop_buffers): each allocation takes the next. */
struct BufferRing {
  std::vector<TensorHistory> parked;  ///< the histories of the buffers not in use
  std::size_t at = 0;
};

class CoreScheduler {
 public:
  CoreScheduler(const ir::KernelIR& k, const ir::LoopNest& nest, const TargetSpec& t,
                const std::vector<Instruction>& instr, const std::vector<bool>& has_instr,
                const std::vector<std::size_t>& fused_store, double hbm_share_gbps, double link_share_gbps,
                const std::vector<int>& collective_ordinal, const std::vector<CollectiveShape>& collectives,
                const std::vector<int>& buffers, CoreProfile& out, bool keep_events)
      : k_(k), nest_(nest), t_(t), instr_(instr), has_(has_instr), fused_(fused_store),
        hbm_bytes_per_us_(hbm_share_gbps * 1e3), link_share_gbps_(link_share_gbps),
        collective_ordinal_(collective_ordinal), collectives_(collectives), out_(out), keep_(keep_events),
        loop_(k.loops.size(), 0),
        tile_end_(k.tiles.size(), 0), tile_queue_(k.tiles.size(), -1), view_(k.tiles.size()), hist_(k.tensors.size()),
        queue_free_(4 + static_cast<std::size_t>(t.dma_queues), 0.0), buffers_(buffers),
        rings_(k.tensors.size()), dma_(static_cast<std::size_t>(t.dma_queues)) {
    for (Engine e : {Engine::tensor, Engine::vector, Engine::scalar, Engine::gpsimd})
      max_latency_ = std::max(max_latency_, dep_latency(e));
  }

  void run_instances() {
    rank_ = out_.rank;
    for (std::size_t i = 0; i < out_.instances.size(); ++i) {
      pid_ = out_.instances[i];
      instance_ = static_cast<std::int32_t>(i);
      regs_.assign(static_cast<std::size_t>(k_.registers), 0);  // every instance's registers start at 0
      known_.assign(static_cast<std::size_t>(k_.registers), true);
      run(-1);
    }
    double latency = 0;
    for (double f : queue_free_) latency = std::max(latency, f);
    out_.latency_us = latency;
    for (int e = 0; e < kEngines; ++e) {
      const double queues = e == static_cast<int>(Engine::dma) ? t_.dma_queues : 1;
      out_.engines[static_cast<std::size_t>(e)].utilization =
          latency > 0 ? out_.engines[static_cast<std::size_t>(e)].busy_us / (latency * queues) : 0.0;
    }
  }

 private:
  const ir::KernelIR& k_;
  const ir::LoopNest& nest_;
  const TargetSpec& t_;
  const std::vector<Instruction>& instr_;
  const std::vector<bool>& has_;
  const std::vector<std::size_t>& fused_;
  double hbm_bytes_per_us_;
  double link_share_gbps_;                       ///< this core's share of the chip's NeuronLink bandwidth
  const std::vector<int>& collective_ordinal_;   ///< per body index: which CollectiveOp it is (-1: none)
  const std::vector<CollectiveShape>& collectives_;  ///< this core's group of each, in body order
  CoreProfile& out_;
  bool keep_;
  std::vector<std::int64_t> pid_, loop_;
  std::int64_t rank_ = 0;
  std::int32_t instance_ = 0;
  std::vector<double> tile_end_;
  std::vector<int> tile_queue_;
  std::vector<std::optional<std::pair<int, Box>>> view_;  ///< tiles that index an on-chip tensor
  std::vector<TensorHistory> hist_;
  std::vector<double> queue_free_;
  const std::vector<int>& buffers_;  ///< per tensor: the buffers its allocation rotates over (loop_buffers)
  std::vector<BufferRing> rings_;  ///< per tensor with more than one buffer
  double max_latency_ = 0;        ///< the longest semaphore wait of any engine (history pruning)
  void record(int tensor, HistEntry e) { hist_[static_cast<std::size_t>(tensor)].add(std::move(e), max_latency_); }
  /** An allocation of `tensor`: with B buffers, the next one (and its history) replaces the current. */
  void next_buffer(int tensor) {
    const auto t = static_cast<std::size_t>(tensor);
    const int b = buffers_[t];
    if (b <= 1) return;
    BufferRing& ring = rings_[t];
    if (ring.parked.empty()) ring.parked.resize(static_cast<std::size_t>(b));
    ring.parked[ring.at] = std::move(hist_[t]);
    ring.at = (ring.at + 1) % ring.parked.size();
    hist_[t] = std::move(ring.parked[ring.at]);
  }
  std::array<double, kPeRowTiles> pe_free_{};  ///< when each 32-row tile of the PE array is free
  double tensor_issue_ = 0;                    ///< start of the last Tensor engine instruction (in-order issue)
  double port_free_ = 0;  ///< NeuronCore-v2: the SBUF port Vector and GpSimd share
  /// This core's share of HBM, and each DMA queue: the intervals their bytes move in.
  BusyIntervals hbm_;
  std::vector<BusyIntervals> dma_;

  /**
   * Places a transfer of `bytes` whose inputs are ready at `ready` and whose data takes
   * `move_us` on a queue: after the fixed cost (descriptor fetch and completion, which a queue
   * overlaps with the bytes of the transfers before it), in the earliest gap of any queue, its
   * bytes also in a gap of the core's HBM share. Returns {queue index, data start, end}.
   */
  struct Placed {
    int queue;
    double start, end;
  };
  Placed place_transfer(double ready, double move_us, std::int64_t bytes) {
    const double hbm_us = static_cast<double>(bytes) / hbm_bytes_per_us_;
    double occupy = move_us;
    for (;;) {
      int q = 0;
      double start = dma_[0].first_fit(ready + t_.dma_fixed_us, occupy);
      for (int i = 1; i < t_.dma_queues; ++i) {
        const double s = dma_[static_cast<std::size_t>(i)].first_fit(ready + t_.dma_fixed_us, occupy);
        if (s < start) start = s, q = i;
      }
      const double hbm_start = hbm_.first_fit(start, hbm_us);
      const double end = std::max(start + move_us, hbm_start + hbm_us);
      if (end - start <= occupy || dma_[static_cast<std::size_t>(q)].first_fit(start, end - start) == start) {
        dma_[static_cast<std::size_t>(q)].reserve(start, end - start);
        hbm_.reserve(hbm_start, hbm_us);
        queue_free_[static_cast<std::size_t>(4 + q)] = std::max(queue_free_[static_cast<std::size_t>(4 + q)], end);
        return {4 + q, start, end};
      }
      occupy = end - start;  // HBM stretches it past the gap: look for one that long
    }
  }

  /** Schedules the ops directly in `loop` (-1: the kernel's top level), each nested loop for its trip count. */
  void run(int loop) {
    for (std::size_t i : nest_.level(loop)) {
      if (const auto* l = std::get_if<ir::LoopOp>(&k_.body[i])) {
        const ir::LoopInfo& info = k_.loops[static_cast<std::size_t>(l->loop)];
        const std::int64_t trip = ir::is_dynamic(info.kind) ? dynamic_trip(info) : info.trip;
        // The bounds are read once, as the loop starts; the induction is known when they are.
        const bool bounds_known = (info.lower_reg < 0 || reg_known(info.lower_reg)) &&
                                  (info.upper_reg < 0 || reg_known(info.upper_reg));
        const std::int64_t lo = info.lower_reg >= 0 && bounds_known ? reg(info.lower_reg) : info.lower;
        for (std::int64_t it = 0; it < trip; ++it) {
          loop_[static_cast<std::size_t>(l->loop)] = ir::is_dynamic(info.kind) ? 0 : it;
          if (info.kind == ir::LoopKind::while_loop) {
            if (it > 0 && !(reg_known(info.cond) && reg(info.cond) != 0)) break;
            set_reg(info.induction, reg_known(info.cond) ? std::optional(reg(info.cond)) : std::nullopt);
          } else if (info.kind == ir::LoopKind::dynamic) {
            set_reg(info.induction, bounds_known ? std::optional(static_cast<std::int32_t>(lo + it * info.step))
                                                 : std::nullopt);
          }
          run(l->loop);
        }
        continue;
      }
      if (const auto* r = std::get_if<ir::RegisterOp>(&k_.body[i])) track_register(*r);
      step(i);
    }
  }

  // ---- registers, as far as the estimate (which has no data) can know them ----
  // A register is known when it holds a constant: register_alloc(x), register_move of a
  // constant or of a known register, register_load of an nl.shared_constant. A dynamic loop
  // whose bounds are known runs its real trip count; one with an unknown bound (read from
  // data), and a while_loop whose condition becomes unknown, is charged one iteration.
  std::vector<std::int32_t> regs_;
  std::vector<bool> known_;
  bool reg_known(int r) const { return static_cast<std::size_t>(r) < known_.size() && known_[static_cast<std::size_t>(r)]; }
  std::int32_t reg(int r) const { return regs_[static_cast<std::size_t>(r)]; }
  void set_reg(int r, std::optional<std::int32_t> v) {
    if (regs_.size() != static_cast<std::size_t>(k_.registers)) {
      regs_.assign(static_cast<std::size_t>(k_.registers), 0);
      known_.assign(static_cast<std::size_t>(k_.registers), true);  // every register starts at 0
    }
    known_[static_cast<std::size_t>(r)] = v.has_value();
    if (v) regs_[static_cast<std::size_t>(r)] = *v;
  }
  void track_register(const ir::RegisterOp& op) {
    if (regs_.size() != static_cast<std::size_t>(k_.registers)) set_reg(0, 0);
    if (op.kind == ir::RegisterOp::Kind::move) {
      set_reg(op.dst, op.src < 0 ? std::optional(op.imm) : reg_known(op.src) ? std::optional(reg(op.src)) : std::nullopt);
    } else if (op.kind == ir::RegisterOp::Kind::load) {
      const ir::TensorDecl& t = k_.tensors[static_cast<std::size_t>(op.mem.tensor)];
      if (t.values.empty()) {
        set_reg(op.dst, std::nullopt);
        return;
      }
      std::int64_t flat = 0;
      const std::vector<std::int64_t> none;
      for (std::size_t d = 0; d < op.mem.indices.size(); ++d)
        flat = flat * t.shape[d] + ir::evaluate(op.mem.indices[d], pid_, loop_, none, rank_);
      const auto v = static_cast<std::int64_t>(t.values[static_cast<std::size_t>(flat)]);
      set_reg(op.dst, static_cast<std::int32_t>(static_cast<std::uint32_t>(v)));
    }
  }
  std::int64_t dynamic_trip(const ir::LoopInfo& info) {
    if (regs_.size() != static_cast<std::size_t>(k_.registers)) set_reg(0, 0);
    if (info.kind == ir::LoopKind::while_loop) {
      if (reg_known(info.cond) && reg(info.cond) == 0) return 0;
      return reg_known(info.cond) ? ir::kWhileLoopLimit : 1;  // the loop itself stops when the condition does
    }
    if ((info.lower_reg >= 0 && !reg_known(info.lower_reg)) || (info.upper_reg >= 0 && !reg_known(info.upper_reg))) return 1;
    return ir::dynamic_trip(info, regs_);
  }

  Box box_of(const ir::Access& a) const {
    Box b(a.indices.size());
    for (std::size_t d = 0; d < a.indices.size(); ++d) {
      const ir::IndexExpr& e = a.indices[d];
      std::int64_t lo = e.constant, hi = e.constant;
      for (const ir::Term& term : e.terms) {
        if (term.sym.kind == ir::Sym::Kind::axis) {
          const std::int64_t ext = a.shape.at(static_cast<std::size_t>(term.sym.index)) - 1;
          (term.coeff >= 0 ? hi : lo) += term.coeff * ext;
        } else {
          const auto& vals = term.sym.kind == ir::Sym::Kind::loop ? loop_ : pid_;
          const std::int64_t v = term.coeff * (term.sym.kind == ir::Sym::Kind::rank ? rank_ : vals.at(static_cast<std::size_t>(term.sym.index)));
          lo += v;
          hi += v;
        }
      }
      // Blocks that a placement puts in one memory (ir::storage_index) are one box: a write into
      // block b + n waits for the reads of block b, as the hardware's reuse of the buffer does.
      const ir::TensorDecl& t = k_.tensors[static_cast<std::size_t>(a.tensor)];
      if (lo == hi && t.placement.placed && lo >= 0 && lo < t.shape[d]) lo = hi = ir::storage_index(t, d, lo);
      b[d] = {lo, hi};
    }
    return b;
  }
  Box whole(int tensor) const {
    Box b;
    for (std::int64_t s : k_.tensors[static_cast<std::size_t>(tensor)].shape) b.push_back({0, s - 1});
    return b;
  }

  struct Ready {
    double at = 0;
    void need(double t) { at = std::max(at, t); }
  };

  double dep_latency(Engine consumer) const {
    return consumer == Engine::dma ? 0.0 : static_cast<double>(kDependencyCycles) / (ghz_of(t_, consumer) * 1e3);
  }

  /** Readiness from earlier accesses of `tensor` overlapping `box`: writes only for a read, any for a write. */
  void tensor_deps(int tensor, const Box& box, bool write, int queue, double lat, Ready& r) const {
    const TensorHistory& h = hist_[static_cast<std::size_t>(tensor)];
    r.need(write ? h.floor_any : h.floor_write);
    for (const HistEntry& e : h.recent) {
      if (!write && !e.write) continue;
      if (!overlap(e.box, box)) continue;
      r.need(e.end + (e.queue == queue ? 0.0 : lat));
    }
  }

  /**
   * A collective: its ring steps one after the other on all of the core's DMA queues (each
   * step's bytes spread over them), once its srcs are written and nothing still reads or writes
   * its dsts; each step's bytes also take this core's share of HBM. A rank that moves nothing
   * (a permute it has no part in) has no instruction.
   */
  void collective(std::size_t at, const ir::CollectiveOp& op) {
    if (core_sync_on_engine(op)) {
      core_sync(at, op);
      return;
    }
    const auto ord = static_cast<std::size_t>(collective_ordinal_[at]);
    // sendrecv passes a tile between the two cores of a logical core: a pair on one chip.
    const CollectiveShape group = op.kind == ir::CollectiveOp::Kind::sendrecv ? CollectiveShape{2, 1}
                                  : ord < collectives_.size()                 ? collectives_[ord]
                                                                              : CollectiveShape{};
    const CollectiveSteps c = collective_steps(k_, op, group, static_cast<int>(rank_), t_, link_share_gbps_);
    if (c.steps == 0) return;
    const int dma_q = static_cast<int>(Engine::dma);
    Ready r;
    for (int s : op.srcs) tensor_deps(s, whole(s), false, dma_q, 0.0, r);
    for (int d : op.dsts) tensor_deps(d, whole(d), true, dma_q, 0.0, r);
    if (op.metadata >= 0) tensor_deps(op.metadata, whole(op.metadata), ir::writes_metadata(op), dma_q, 0.0, r);
    const auto first = queue_free_.begin() + 4;
    r.need(*std::max_element(first, queue_free_.end()));
    const double start = r.at;
    double end = start;
    for (int s = 0; s < c.steps; ++s) {
      const double hbm_us = static_cast<double>(c.step_bytes) / hbm_bytes_per_us_;
      const double hbm_start = hbm_.first_fit(end + t_.dma_fixed_us, hbm_us);
      hbm_.reserve(hbm_start, hbm_us);
      end = std::max(end + c.step_us(t_), hbm_start + hbm_us);
    }
    std::fill(first, queue_free_.end(), end);
    for (BusyIntervals& q : dma_) q.reserve(q.last_end(), end - q.last_end());
    out_.dma_bytes += c.bytes();
    EngineUse& use = out_.engines[static_cast<std::size_t>(Engine::dma)];
    use.busy_us += (end - start) * t_.dma_queues;  // DMA busy time is summed over queues
    ++use.instructions;
    if (keep_)
      for (int q = 4; q < 4 + t_.dma_queues; ++q) out_.events.push_back({q, at, instance_, start, end});
    for (int s : op.srcs) record(s, {whole(s), end, false, dma_q});
    for (int d : op.dsts) record(d, {whole(d), end, true, dma_q});
    if (op.metadata >= 0) record(op.metadata, {whole(op.metadata), end, ir::writes_metadata(op), dma_q});
  }

  /**
   * isa::core_barrier: a semaphore update to the other core and a wait for its own, on the engine
   * that runs it (GpSimd by default), once this core's writes to `data` are done; later accesses
   * of `data` wait for it. isa::sendrecv by gpsimd_dma: GpSimd reads src and writes dst. The other
   * core's progress is not modelled: it runs the same program and is taken to arrive alike.
   */
  void core_sync(std::size_t at, const ir::CollectiveOp& op) {
    const Engine e = engine_of(op.engine, Engine::gpsimd);
    const int q = static_cast<int>(e);
    Ready r;
    for (int s : op.srcs) tensor_deps(s, whole(s), false, q, 0.0, r);
    for (int d : op.dsts) tensor_deps(d, whole(d), true, q, 0.0, r);
    r.need(queue_free_[static_cast<std::size_t>(q)]);
    const double start = r.at, end = start + static_cast<double>(core_sync_cycles(k_, op)) / (ghz_of(t_, e) * 1e3);
    queue_free_[static_cast<std::size_t>(q)] = end;
    EngineUse& use = out_.engines[static_cast<std::size_t>(e)];
    use.busy_us += end - start;
    ++use.instructions;
    if (keep_) out_.events.push_back({q, at, instance_, start, end});
    // A barrier's data: what the other core wrote is there now, so later accesses wait for it.
    const bool barrier = op.kind == ir::CollectiveOp::Kind::core_barrier;
    for (int s : op.srcs) record(s, {whole(s), end, barrier, q});
    for (int d : op.dsts) record(d, {whole(d), end, true, q});
  }

  void step(std::size_t at) {
    const ir::Op& op = k_.body[at];
    if (const auto* l = std::get_if<ir::LoadOp>(&op); l && !has_[at]) {  // a view of an on-chip tensor
      Box b = box_of(l->src);
      Ready r;
      tensor_deps(l->src.tensor, b, false, -1, 0.0, r);
      tile_end_[static_cast<std::size_t>(l->result)] = r.at;
      tile_queue_[static_cast<std::size_t>(l->result)] = -1;
      view_[static_cast<std::size_t>(l->result)] = std::pair{l->src.tensor, std::move(b)};
      return;
    }
    if (const auto* v = std::get_if<ir::ViewOp>(&op); v && !has_[at]) {  // a window of a tile: ready with the tile
      const std::size_t from = static_cast<std::size_t>(v->data), to = static_cast<std::size_t>(v->result);
      tile_end_[to] = tile_end_[from];
      tile_queue_[to] = tile_queue_[from];
      view_[to] = view_[from];
      return;
    }
    // An on-chip tensor allocated again (in a loop) takes its next buffer: it waits only for the
    // accesses of the allocation that last used that buffer.
    if (const auto* a = std::get_if<ir::AllocOp>(&op)) next_buffer(a->tensor);
    if (const auto* c = std::get_if<ir::CollectiveOp>(&op)) {
      collective(at, *c);
      return;
    }
    if (!has_[at]) return;
    if (std::holds_alternative<ir::StoreOp>(op) && fused_[at] < at) return;  // done by its producer
    // A memset of an array with block dimensions is an instruction per block (each a tile).
    for (std::int64_t b = 0; b < instr_[at].blocks; ++b) issue(at, instr_[at].blocks > 1 ? b : -1);
  }

  /** The box of block `b` (row-major over the dimensions before par_dim) of an on-chip array. */
  Box block_box(int tensor, std::int64_t b) const {
    const ir::TensorDecl& t = k_.tensors[static_cast<std::size_t>(tensor)];
    Box box = whole(tensor);
    for (int d = t.par_dim; d-- > 0;) {
      const std::int64_t n = t.shape[static_cast<std::size_t>(d)];
      box[static_cast<std::size_t>(d)] = {b % n, b % n};
      b /= n;
    }
    return box;
  }

  /** Schedules the instruction of op `at` (`block` >= 0: that block of its memset). */
  void issue(std::size_t at, std::int64_t block) {
    const ir::Op& op = k_.body[at];
    const Instruction& in = instr_[at];
    const double lat = dep_latency(in.engine);
    int queue = static_cast<int>(in.engine);
    Ready r;
    const bool port = t_.vector_gpsimd_share_sbuf_port && (in.engine == Engine::vector || in.engine == Engine::gpsimd);
    if (port) r.need(port_free_);

    // What the instruction reads and writes.
    std::vector<int> tiles = ir::tiles_read(op);
    std::vector<std::pair<int, Box>> reads, writes;
    for (int tile : tiles) {
      const std::size_t ti = static_cast<std::size_t>(tile);
      r.need(tile_end_[ti] + (tile_queue_[ti] == queue ? 0.0 : (tile_end_[ti] > 0 ? lat : 0.0)));
      if (view_[ti]) reads.push_back(*view_[ti]);
    }
    // A data-dependent row (a gather's or scatter's index tile) may be any row of the tensor.
    auto rows_by_index = [&](Box b, int tensor, bool indirect) {
      if (indirect) b[0] = whole(tensor)[0];
      return b;
    };
    auto add_store = [&](const ir::StoreOp& s) {
      Box b = rows_by_index(box_of(s.dst), s.dst.tensor, s.index_tile >= 0);
      if (s.accumulate || s.atomic) reads.push_back({s.dst.tensor, b});
      writes.push_back({s.dst.tensor, std::move(b)});
    };
    if (const auto* l = std::get_if<ir::LoadOp>(&op))
      reads.push_back({l->src.tensor, rows_by_index(box_of(l->src), l->src.tensor, l->index_tile >= 0)});
    if (const auto* s = std::get_if<ir::StoreOp>(&op)) add_store(*s);
    if (const auto* a = std::get_if<ir::AllocOp>(&op))
      writes.push_back({a->tensor, block < 0 ? whole(a->tensor) : block_box(a->tensor, block)});
    if (fused_[at] > at) add_store(std::get<ir::StoreOp>(k_.body[fused_[at]]));
    // A reshape / view(dtype) shares its tensor's storage: its accesses order against all of it.
    for (auto* list : {&reads, &writes})
      for (auto& [tensor, box] : *list)
        if (const int root = ir::storage_of(k_, tensor); root != tensor) tensor = root, box = whole(root);
    for (const auto& [tensor, box] : reads) tensor_deps(tensor, box, false, queue, lat, r);
    for (const auto& [tensor, box] : writes) tensor_deps(tensor, box, true, queue, lat, r);
    // The Tensor engine issues in order, and an instruction waits only for the PE rows it uses
    // (tile_position / tile_size): matmuls on disjoint row tiles overlap.
    const bool tensor_engine = in.engine == Engine::tensor;
    if (tensor_engine) {
      r.need(tensor_issue_);
      for (int q = 0; q < kPeRowTiles; ++q)
        if (in.pe_rows & (1u << q)) r.need(pe_free_[static_cast<std::size_t>(q)]);
    } else if (in.engine != Engine::dma) {  // a transfer takes a gap of any queue (place_transfer)
      r.need(queue_free_[static_cast<std::size_t>(queue)]);
    }

    if (in.trigger_us > 0) {
      // The DMA's descriptors (dge_mode): the issuing engine writes them once the transfer's
      // inputs are ready, in its own program order; the transfer starts after.
      const std::size_t tq = static_cast<std::size_t>(in.trigger);
      const double t0 = std::max(r.at, queue_free_[tq]);
      queue_free_[tq] = t0 + in.trigger_us;
      r.need(t0 + in.trigger_us);
      EngineUse& use = out_.engines[tq];
      use.busy_us += in.trigger_us;
      ++use.instructions;
    }
    double start = r.at;
    double end = start + in.duration_us;
    if (in.engine == Engine::dma) {  // DMA has no semaphore latency: the queue did not matter above
      const Placed p = place_transfer(r.at, in.duration_us - t_.dma_fixed_us, in.dma_bytes);
      queue = p.queue;
      start = p.start;
      end = p.end;
      out_.dma_bytes += in.dma_bytes;
    }
    int rows_used = kPeRowTiles;
    if (tensor_engine) {
      tensor_issue_ = start;
      rows_used = 0;
      for (int q = 0; q < kPeRowTiles; ++q)
        if (in.pe_rows & (1u << q)) pe_free_[static_cast<std::size_t>(q)] = end, ++rows_used;
    }
    queue_free_[static_cast<std::size_t>(queue)] = std::max(queue_free_[static_cast<std::size_t>(queue)], end);
    if (port) port_free_ = end;
    if (!is_fused(op)) {  // a fused op is part of another instruction: no count, no event
      EngineUse& use = out_.engines[static_cast<std::size_t>(in.engine)];
      // Busy time of the Tensor engine counts the share of the PE rows used, so overlapping
      // row tiles never make it more than fully busy.
      use.busy_us += (end - start) * rows_used / kPeRowTiles;
      ++use.instructions;
      if (keep_) out_.events.push_back({queue, at, instance_, start, end});
    }

    const int def = ir::tile_defined(op);
    if (def >= 0) {
      tile_end_[static_cast<std::size_t>(def)] = end;
      tile_queue_[static_cast<std::size_t>(def)] = queue;
      view_[static_cast<std::size_t>(def)].reset();
    }
    for (auto& [tensor, box] : reads) record(tensor, {std::move(box), end, false, queue});
    for (auto& [tensor, box] : writes) record(tensor, {std::move(box), end, true, queue});
  }
};

}  // namespace

ProfileReport estimate(const ir::KernelIR& k, const std::vector<CoreWork>& cores, const TargetSpec& t, bool keep_events) {
  ProfileReport rep;
  rep.kernel = k.name;
  rep.target = t.name;
  const std::size_t n = k.body.size();
  std::vector<Instruction> instr(n);
  std::vector<bool> has(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    has[i] = instruction_of(k, i, t, instr[i]);
    rep.ops.emplace_back(op_label(k.body[i]));
    rep.op_locs.push_back(op_loc(k.body[i]));
  }
  // An op whose result goes straight into an on-chip tensor (the next op stores it there and
  // nothing else reads it) writes the tensor itself: that store is no instruction of its own.
  // Covers buf[...] = nl::load(...) (one DMA), psum[...] += nl::matmul(...) (the matmul
  // accumulates in PSUM) and buf[...] = a + b (the engine writes buf).
  // Ops fused into an instruction (its accumulation, its output cast) and their stores may
  // sit between the producer and its store.
  // Walked backwards, so those inner stores are matched before the producer looks past them.
  std::vector<std::size_t> fused(n);
  for (std::size_t i = 0; i < n; ++i) fused[i] = i;
  for (std::size_t i = n; i-- > 0;) {
    const int def = ir::tile_defined(k.body[i]);
    std::size_t j = i + 1;
    while (j < n && (is_fused(k.body[j]) || (std::holds_alternative<ir::StoreOp>(k.body[j]) && fused[j] != j &&
                                             is_fused(k.body[fused[j]]))))
      ++j;
    if (j == n) continue;
    const auto* s = std::get_if<ir::StoreOp>(&k.body[j]);
    if (def < 0 || !has[i] || s == nullptr || s->value != def || fused[i] != i) continue;
    // A masked store fuses when it carries its producer's mask (buf[...] = op(..., mask=m)).
    const ir::Predicate* producer_mask = nullptr;
    std::visit([&](const auto& o) {
      if constexpr (requires { o.mask; }) producer_mask = &o.mask;
    }, k.body[i]);
    if (s->dma.issued) continue;  // an explicit DMA instruction: the store is the transfer
    if (!s->mask.empty() && (producer_mask == nullptr || !(*producer_mask == s->mask))) continue;
    const ir::Memory dst = k.tensors.at(static_cast<std::size_t>(s->dst.tensor)).memory;
    if (dst != ir::Memory::sbuf && dst != ir::Memory::psum) continue;
    if (s->accumulate && !(std::holds_alternative<ir::MatmulOp>(k.body[i]) && dst == ir::Memory::psum)) continue;
    bool used_elsewhere = false;
    for (std::size_t q = 0; q < n && !used_elsewhere; ++q) {
      if (q == j || (q > i && q < j)) continue;  // the store, and the ops fused into this instruction
      for (int tile : ir::tiles_read(k.body[q])) used_elsewhere |= tile == def;
    }
    if (used_elsewhere) continue;
    fused[i] = j;  // the producer points at its store, the store back at its producer
    fused[j] = i;
  }

  const ir::LoopNest nest(k);
  // What the capacity check refuses, the estimate refuses too (loop_buffers runs it).
  const std::vector<int> buffers = loop_buffers(k, t);
  std::map<int, int> active;  // busy cores per chip
  for (const CoreWork& c : cores) active[c.chip] += c.instances.empty() ? 0 : 1;
  std::vector<int> ordinal(n, -1);
  int collectives = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (std::holds_alternative<ir::CollectiveOp>(k.body[i])) ordinal[i] = collectives++;
  for (const CoreWork& c : cores) {
    if (c.instances.empty()) continue;
    // Each chip's HBM and NeuronLink bandwidths are split among its busy cores.
    const double share = t.hbm_gbps / std::max(1, active[c.chip]);
    const double link_share = t.link_gbps / std::max(1, active[c.chip]);
    CoreProfile& cp = rep.cores.emplace_back();
    cp.nc = c.nc;
    cp.rank = c.rank;
    cp.instances = c.instances;
    CoreScheduler(k, nest, t, instr, has, fused, share, link_share, ordinal, c.collectives, buffers, cp, keep_events)
        .run_instances();
  }

  // FLOPs and the ideal Tensor engine time: per op, times how often it runs.
  std::vector<double> runs(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    if (ir::is_loop_marker(k.body[i])) continue;
    runs[i] = 1.0;
    for (int l : nest.enclosing(i)) runs[i] *= static_cast<double>(k.loops[static_cast<std::size_t>(l)].trip);
  }
  double instances = 0;
  for (const CoreProfile& c : rep.cores) instances += static_cast<double>(c.instances.size());
  double ideal_us = 0;
  for (std::size_t i = 0; i < n; ++i) {
    rep.flops += static_cast<std::int64_t>(static_cast<double>(instr[i].flops) * runs[i] * instances);
    ideal_us += instr[i].ideal_tensor_us * runs[i] * instances;
  }
  for (const CoreProfile& c : rep.cores) {
    rep.latency_us = std::max(rep.latency_us, c.latency_us);
    rep.dma_bytes += c.dma_bytes;
    for (const EngineUse& e : c.engines) rep.instructions += e.instructions;
  }
  if (rep.latency_us > 0) {
    rep.hfu = ideal_us / (rep.latency_us * static_cast<double>(std::max<std::size_t>(1, rep.cores.size())));
    rep.dma_gbps = static_cast<double>(rep.dma_bytes) / (rep.latency_us * 1e3);
  }
  return rep;
}

}  // namespace nki::sim
