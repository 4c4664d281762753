/** \file isa.core_barrier and isa.sendrecv traced into ir::CollectiveOp steps that meet the cores of a logical core. */
#include "nki/isa_core_sync.h"

#include <fmt/format.h>

#include "nki/trace.h"

namespace nki::isa {

namespace {

/** Both instructions need NeuronCore-v3 (LNC=2 exists there). Reading the generation keys the trace by it. */
void check_generation(Trace& t, const char* op, const SourceLoc& loc) {
  if (const int gen = t.nc_version(); gen < 3) {
    t.fail("err_unsupported_nc_version", loc,
           fmt::format("{} needs NeuronCore-v3 or newer (trn2, trn3): a logical core of two NeuronCores; the target is "
                       "gen{}",
                       op, gen));
  }
}

}  // namespace

void core_barrier(const nl::tensor& data, const std::vector<int>& cores, const core_barrier_options& o,
                  std::source_location where) {
  Trace& t = Trace::current("isa::core_barrier", where);
  const SourceLoc loc = SourceLoc::from(where);
  check_generation(t, "isa::core_barrier", loc);
  const ir::TensorDecl& d = t.ir().tensors.at(static_cast<std::size_t>(data.id()));
  if (!ir::is_hbm(d.memory) || d.memory == ir::Memory::private_hbm) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("isa::core_barrier: data {} is in {}; it is the shared HBM tensor the cores write and read",
                       d.name, ir::memory_name(d.memory)));
  }
  if (cores != std::vector<int>{0, 1}) {
    t.fail("err_unsupported_cores", loc,
           fmt::format("isa::core_barrier: cores ({}); only (0, 1), the two cores of a logical core, are supported",
                       fmt::join(cores, ", ")));
  }
  ir::CollectiveOp op;
  op.kind = ir::CollectiveOp::Kind::core_barrier;
  op.srcs = {data.id()};
  op.group.groups = {cores};
  op.engine = static_cast<ir::Engine>(o.engine);
  op.loc = loc;
  t.emit(std::move(op));
}

void sendrecv(const nl::tensor& src, const nl::tensor& dst, const nl::index& send_to_rank, const nl::index& recv_from_rank,
              int pipe_id, const sendrecv_options& o, std::source_location where) {
  Trace& t = Trace::current("isa::sendrecv", where);
  const SourceLoc loc = SourceLoc::from(where);
  check_generation(t, "isa::sendrecv", loc);
  const ir::TensorDecl& s = t.ir().tensors.at(static_cast<std::size_t>(src.id()));
  const ir::TensorDecl& d = t.ir().tensors.at(static_cast<std::size_t>(dst.id()));
  for (const ir::TensorDecl* x : {&s, &d}) {
    if (x->memory != ir::Memory::sbuf) {
      t.fail("err_unsupported_memory", loc,
             fmt::format("isa::sendrecv: {} is in {}; src and dst are SBUF tensors", x->name, ir::memory_name(x->memory)));
    }
  }
  if (s.shape != d.shape || s.dtype != d.dtype) {
    t.fail("err_collective_shape_mismatch", loc,
           fmt::format("isa::sendrecv: src {} is {} {} and dst {} is {} {}; a tile goes into a dst of its shape and dtype",
                       s.name, dtype_name(s.dtype), shape_str(s.shape), d.name, dtype_name(d.dtype), shape_str(d.shape)));
  }
  if (src.id() == dst.id())
    t.fail("err_collective_buffers", loc, fmt::format("isa::sendrecv: {} is both src and dst", s.name));
  for (const nl::index* r : {&send_to_rank, &recv_from_rank}) {
    const ir::IndexExpr& e = r->expr();
    bool ok = e.shape.empty() && !ir::has_symbol(e, ir::Sym::Kind::loop) && !ir::has_symbol(e, ir::Sym::Kind::axis);
    if (ok) {
      const ir::IndexRange range = ir::range_of(e, [&](ir::Sym s) {
        return s.kind == ir::Sym::Kind::program_id ? t.grid().at(static_cast<std::size_t>(s.index)) : std::int64_t{t.world_size()};
      });
      ok = range.lo >= 0 && range.hi <= 1;
    }
    if (!ok) {
      t.fail("err_invalid_source_target_pairs", loc,
             fmt::format("isa::sendrecv: send_to_rank {} and recv_from_rank {}; each is 0 or 1 (a core of the logical "
                         "core) for every instance: a constant or an expression of the program ids",
                         ir::to_string(send_to_rank.expr()), ir::to_string(recv_from_rank.expr())));
    }
  }
  if (o.dma_engine == dma_engine::gpsimd_dma) {
    const std::int64_t limit = dtype_bytes(s.dtype) >= 4 ? 1024 : dtype_bytes(s.dtype) == 2 ? 512 : 256;
    const std::int64_t per_partition = shape_elements(s.shape) / s.shape.front() * dtype_bytes(s.dtype);
    if (per_partition > limit) {
      t.fail("err_size_of_dimension_exceed_arch_limit", loc,
             fmt::format("isa::sendrecv with gpsimd_dma: src {} holds {} bytes per partition; GpSimd's DMA takes at most {} "
                         "for {}",
                         s.name, per_partition, limit, dtype_name(s.dtype)));
    }
  }
  ir::CollectiveOp op;
  op.kind = ir::CollectiveOp::Kind::sendrecv;
  op.srcs = {src.id()};
  op.dsts = {dst.id()};
  op.send_to = send_to_rank.expr();
  op.recv_from = recv_from_rank.expr();
  op.pipe_id = pipe_id;
  op.engine = o.dma_engine == dma_engine::gpsimd_dma ? ir::Engine::gpsimd : ir::Engine::unknown;
  op.loc = loc;
  t.emit(std::move(op));
}

}  // namespace nki::isa
