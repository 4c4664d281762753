/** \file The reference interpreter: the IR executed op by op in plain C++, every index checked. */
#include "reference_interpreter.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <utility>

#include "nki/error.h"
#include "nki/ir/mx_format.h"
#include "nki/ir/passes.h"
#include "nki/ir/walk.h"
#include "bounds_check.h"
#include "checked_state.h"
#include "core/atomic_add.h"
#include "core/rank_link.h"

namespace nki {

namespace {

/** How a user would name the op in messages: nl::load, nl::add, nl::where, ... */
std::string op_label(const ir::KernelIR& k, const ir::Op& op) {
  if (std::holds_alternative<ir::LoadOp>(op)) return "nl::load";
  if (const auto* s = std::get_if<ir::StoreOp>(&op)) {
    if (s->atomic) return "nl::atomic_rmw";
    if (s->index_tile >= 0) return "isa::dma_copy";
    if (ir::is_hbm(k.tensors[static_cast<std::size_t>(s->dst.tensor)].memory)) return "nl::store";
    return s->accumulate ? "`+=`" : "`=`";
  }
  if (const auto* a = std::get_if<ir::ActivationOp>(&op)) return fmt::format("nl::{}", ir::act_name(a->kind));
  if (const auto* b = std::get_if<ir::BinaryOp>(&op)) return fmt::format("nl::{}", ir::binary_name(b->kind));
  if (const auto* s = std::get_if<ir::SelectOp>(&op)) return s->cond.is_scalar() ? "isa::affine_select" : "nl::where";
  if (std::holds_alternative<ir::IotaOp>(op)) return "isa::iota";
  if (const auto* r = std::get_if<ir::ReduceOp>(&op)) return fmt::format("nl::{}", ir::reduce_name(r->kind));
  if (std::holds_alternative<ir::MatmulOp>(op)) return "nl::matmul";
  if (std::holds_alternative<ir::TransposeOp>(op)) return "nl::transpose";
  if (std::holds_alternative<ir::QuantizeMxOp>(op)) return "isa::quantize_mx";
  if (std::holds_alternative<ir::MatmulMxOp>(op)) return "isa::nc_matmul_mx";
  return "an op";
}

SourceLoc loc_of(const ir::Op& op) {
  return std::visit(
      [](const auto& o) -> SourceLoc {
        if constexpr (requires { o.loc; }) return o.loc;
        else return {};
      },
      op);
}

class ReferenceRunner final : public CoreRunner {
 public:
  /** `nest`: the loops of `ir`; `checked`: the launch's shared checked-mode state, or null for an unchecked run. */
  ReferenceRunner(const ir::KernelIR& ir, const ir::LoopNest& nest, std::vector<TensorBinding> tensors,
                  CheckedLaunch* checked = nullptr)
      : ir_(ir), nest_(nest), tensors_(std::move(tensors)), tiles_(ir.tiles.size()), loop_(ir.loops.size(), 0),
        regs_(static_cast<std::size_t>(ir.registers), 0), checked_(checked),
        core_(checked != nullptr ? checked->cores.fetch_add(1) : 0) {
    // Per-instance tensors (SBUF, PSUM, private HBM) are this core's own memory.
    own_.reserve(ir_.tensors.size());
    for (std::size_t i = 0; i < ir_.tensors.size(); ++i) {
      const ir::TensorDecl& t = ir_.tensors[i];
      if (!ir::is_per_instance(t.memory)) continue;
      // A placed array's storage has its physical blocks only (ir::Placement): aliased blocks share it.
      const Shape& storage = ir::storage_shape(t);
      own_.emplace_back(static_cast<std::size_t>(shape_elements(storage) * dtype_bytes(t.dtype)));
      tensors_[i] = {own_.back().data(), storage, row_major_strides(storage), t.dtype};
    }
    if (checked_) init_checked();
  }

  /** An element of a tile or on-chip tensor no op computed: masked off (kMaskedOff) or an index into undefined_. */
  static constexpr std::int32_t kDefined = -1, kMaskedOff = -2;
  /** The first read of a masked-off element: every element computed from it is undefined for this reason. */
  struct Undefined {
    int tile;            ///< the tile whose mask left the element uncomputed
    std::int64_t flat;   ///< the element, row-major in that tile
    std::size_t reader;  ///< body index of the op that read it
  };

  std::vector<DevicePrint> take_device_prints() override { return std::exchange(prints_, {}); }

  void run_batch(std::span<const std::int64_t> pid, std::int64_t count) override {
    std::vector<std::int64_t> current(pid.begin(), pid.end());
    rank_ = link_ != nullptr ? link_->rank() : 0;
    for (std::int64_t i = 0; i < count; ++i) {
      pid_ = current;
      std::fill(regs_.begin(), regs_.end(), 0);  // every instance's registers start at 0
      if (checked_) begin_checked_instance();
      run(-1);
      if (!current.empty()) ++current.back();
    }
  }

 private:
  const ir::KernelIR& ir_;
  const ir::LoopNest& nest_;
  std::vector<TensorBinding> tensors_;
  std::vector<std::vector<std::byte>> own_;
  std::vector<std::vector<double>> tiles_;  ///< exact values of each tile's dtype
  std::vector<std::int64_t> pid_;
  std::int64_t rank_ = 0;                   ///< rank_id() of the instances (the rank link's)
  std::vector<std::int64_t> loop_;          ///< current value of each loop variable
  std::vector<std::int32_t> regs_;          ///< the instance's registers (RegisterOp, dynamic loops)
  std::vector<DevicePrint> prints_;         ///< nl.device_print lines not yet taken

  // ---- checked mode (all unused when checked_ is null) ----
  CheckedLaunch* checked_;
  int core_;                          ///< this runner's core among the launch's (write records)
  std::int64_t core_syncs_ = 0;       ///< core_barriers and sendrecvs this core has passed
  std::vector<std::vector<std::uint8_t>> written_;     ///< per-instance tensors: element written this instance
  std::vector<std::vector<std::int64_t>> own_writer_;  ///< private HBM: the record that last wrote each element
  std::size_t at_ = 0;                                 ///< the op being executed
  // Masked-off elements are undefined (NKI does not compute them). Checked mode tracks which
  // elements are, and what they reach: an op that reads one computes an undefined element
  // (as the hardware computes garbage there), and a store of one into a tensor the caller sees
  // (shared HBM) is the error. Kernels that compute garbage only where they never store it
  // (NKI's own rmsnorm tutorial) pass; kernels that rely on masked-off zeros do not.
  std::vector<std::vector<std::int32_t>> tile_undef_;  ///< per tile: empty when all defined, else per element
  std::vector<std::vector<std::int32_t>> mem_undef_;   ///< per per-instance tensor: the same for what was written
  std::vector<std::size_t> def_op_;                    ///< per tile: body index of the op defining it
  mutable std::vector<Undefined> undefined_;
  mutable std::int32_t read_undef_ = kDefined;         ///< while computing one element: the first undefined input

  void init_checked() {
    written_.resize(ir_.tensors.size());
    own_writer_.resize(ir_.tensors.size());
    tile_undef_.resize(ir_.tiles.size());
    mem_undef_.resize(ir_.tensors.size());
    def_op_.assign(ir_.tiles.size(), 0);
    for (std::size_t i = 0; i < ir_.body.size(); ++i)
      if (const int t = ir::tile_defined(ir_.body[i]); t >= 0) def_op_[static_cast<std::size_t>(t)] = i;
  }

  /** Notes a read of element `flat` of `tile` (checked mode): the first undefined one of an element's inputs. */
  void note_read(int tile, std::int64_t flat) const {
    if (read_undef_ != kDefined) return;
    const std::vector<std::int32_t>& u = tile_undef_[static_cast<std::size_t>(tile)];
    if (u.empty()) return;
    const std::int32_t v = u[static_cast<std::size_t>(flat)];
    if (v == kDefined) return;
    read_undef_ = v >= 0 ? v : first_read(tile, flat);
  }
  void note_mem_read(int tensor, std::int64_t flat) const {
    if (read_undef_ != kDefined) return;
    const std::vector<std::int32_t>& u = mem_undef_[static_cast<std::size_t>(tensor)];
    if (!u.empty()) read_undef_ = u[static_cast<std::size_t>(flat)];
  }
  std::int32_t first_read(int tile, std::int64_t flat) const {
    undefined_.push_back({tile, flat, at_});
    return static_cast<std::int32_t>(undefined_.size() - 1);
  }

  /** A store writes an undefined element where the caller sees it. */
  [[noreturn]] void report_undefined(const ir::StoreOp& op, std::int32_t why, const std::vector<std::int64_t>& c) const {
    const Undefined& u = undefined_[static_cast<std::size_t>(why)];
    const ir::Op& reader = ir_.body[u.reader];
    const ir::Op& origin = ir_.body[def_op_[static_cast<std::size_t>(u.tile)]];
    const Shape& ts = ir_.tiles[static_cast<std::size_t>(u.tile)].shape;
    const ir::TensorDecl& t = ir_.tensors[static_cast<std::size_t>(op.dst.tensor)];
    const auto [idx, flat] = coord_of(op.dst, c);
    std::string detail = fmt::format(
        "{} {} reads element [{}] of the tile of {} at {}, which its mask left undefined (masked-off elements are "
        "not computed)",
        where(at_), op_label(ir_, reader), fmt::join(coord_of_flat(ts, u.flat), ","), op_label(ir_, origin),
        loc_of(origin).str());
    if (u.reader == at_) detail += fmt::format(", and stores it to element [{}] of tensor {} {}", fmt::join(idx, ","), t.name, shape_str(t.shape));
    else detail += fmt::format("; the result reaches element [{}] of tensor {} {} through {} at {}", fmt::join(idx, ","), t.name,
                               shape_str(t.shape), op_label(ir_, ir_.body[at_]), op.loc.str());
    throw UserError("err_uninitialized_read", ir_.name, loc_of(reader), std::move(detail));
  }

  /** Every per-instance tensor starts poisoned and unwritten. */
  void begin_checked_instance() {
    undefined_.clear();
    for (std::size_t i = 0; i < ir_.tensors.size(); ++i) {
      const ir::TensorDecl& t = ir_.tensors[i];
      if (!ir::is_per_instance(t.memory)) continue;
      fresh(i);
    }
  }

  void fresh(std::size_t tensor) {
    const ir::TensorDecl& t = ir_.tensors[tensor];
    const std::int64_t n = shape_elements(ir::storage_shape(t));
    written_[tensor].assign(static_cast<std::size_t>(n), 0);
    mem_undef_[tensor].clear();
    if (t.memory == ir::Memory::private_hbm) own_writer_[tensor].assign(static_cast<std::size_t>(n), kNeverWritten);
    poison(tensors_[tensor].data, t.dtype, n);
  }

  std::string where(std::size_t op) const {
    std::string w = pid_.empty() ? "instance (no grid)" : fmt::format("instance [{}]", fmt::join(pid_, ","));
    for (int l : nest_.enclosing(op)) w += fmt::format(" l{}={}", l, loop_[static_cast<std::size_t>(l)]);
    return w;
  }
  std::string where(const WriteRecord& r) const {
    std::string w = r.pid.empty() ? "instance (no grid)" : fmt::format("instance [{}]", fmt::join(r.pid, ","));
    for (int l : nest_.enclosing(r.op)) w += fmt::format(" l{}={}", l, r.loop[static_cast<std::size_t>(l)]);
    return w + fmt::format(" ({})", loc_of(ir_.body[r.op]).str());
  }

  /** Tensor coordinate and row-major flat index of the element access `a` reaches at tile coordinate `c`. */
  std::pair<std::vector<std::int64_t>, std::int64_t> coord_of(const ir::Access& a, const std::vector<std::int64_t>& c) const {
    const TensorBinding& t = tensors_[static_cast<std::size_t>(a.tensor)];
    const ir::TensorDecl& decl = ir_.tensors[static_cast<std::size_t>(a.tensor)];
    std::vector<std::int64_t> idx(a.indices.size());
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < a.indices.size(); ++d) {
      idx[d] = eval(a.indices[d], c);
      if (idx[d] < 0 || idx[d] >= decl.shape[d]) throw_access_out_of_bound(a, c, idx[d], d);
      flat = flat * t.shape[d] + ir::storage_index(decl, d, idx[d]);
    }
    return {idx, flat};
  }

  /**
   * The elements of the storage that element `flat` of tensor `ti` covers: itself, or for a
   * reshape / view(dtype) the elements of the tensor it reinterprets that hold its bytes.
   * Checked mode tracks writers per element of that one storage.
   */
  struct StorageElements {
    std::size_t tensor;
    std::int64_t first, count;
  };
  StorageElements storage_elements(std::size_t ti, std::int64_t flat) const {
    const ir::TensorDecl& t = ir_.tensors[ti];
    if (t.view_of < 0) return {ti, flat, 1};
    const ir::TensorDecl& of = ir_.tensors[static_cast<std::size_t>(t.view_of)];
    const std::int64_t vb = dtype_bytes(t.dtype), ob = dtype_bytes(of.dtype);
    const std::int64_t first = flat * vb / ob, last = ((flat + 1) * vb - 1) / ob;
    return {static_cast<std::size_t>(t.view_of), first, last - first + 1};
  }

  /** Tensor coordinate and flat index a scatter's tile coordinate `c` writes: dimension 0 is its partition's row. */
  std::pair<std::vector<std::int64_t>, std::int64_t> scatter_coord(const ir::StoreOp& op, const std::vector<std::int64_t>& c,
                                                                   const std::vector<std::int64_t>& rows) const {
    const TensorBinding& t = tensors_[static_cast<std::size_t>(op.dst.tensor)];
    std::vector<std::int64_t> idx(op.dst.indices.size());
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < op.dst.indices.size(); ++d) {
      idx[d] = d == 0 ? rows[static_cast<std::size_t>(c[0])] : eval(op.dst.indices[d], c);
      if (idx[d] < 0 || idx[d] >= t.shape[d]) throw_access_out_of_bound(op.dst, c, idx[d], d);
      flat = flat * t.shape[d] + idx[d];
    }
    return {idx, flat};
  }

  /** A read of element `c` of access `a` by op `op`: it must have been written (or filled, or be an argument). */
  void check_read(const ir::Access& a, const std::vector<std::int64_t>& c, const SourceLoc& loc) const {
    const ir::TensorDecl& t = ir_.tensors[static_cast<std::size_t>(a.tensor)];
    const std::size_t ti = static_cast<std::size_t>(ir::storage_of(ir_, a.tensor));
    if ((t.memory == ir::Memory::hbm_input || t.memory == ir::Memory::constant_hbm) && !checked_->writers[ti]) return;  // before coord_of, as reads of arguments always were
    const auto [idx, flat] = coord_of(a, c);
    check_read_at(static_cast<std::size_t>(a.tensor), idx, flat, loc);
  }
  /**
   * The same for element `idx` (row-major `flat`) of tensor `vi`: a reshape / view(dtype) reads the
   * elements of its storage that hold the element's bytes.
   */
  void check_read_at(std::size_t vi, const std::vector<std::int64_t>& idx, std::int64_t flat, const SourceLoc& loc) const {
    const ir::TensorDecl& t = ir_.tensors[vi];
    const std::size_t ti = static_cast<std::size_t>(ir::storage_of(ir_, static_cast<int>(vi)));
    if ((t.memory == ir::Memory::hbm_input || t.memory == ir::Memory::constant_hbm) && !checked_->writers[ti]) return;
    bool ok = true;
    if (ir::is_per_instance(t.memory)) {
      ok = written_[ti][static_cast<std::size_t>(flat)] != 0;
    } else if (checked_->writers[ti]) {
      const StorageElements e = storage_elements(vi, flat);
      for (std::int64_t f = e.first; f < e.first + e.count; ++f)
        ok = ok && checked_->writers[ti][static_cast<std::size_t>(f)].load(std::memory_order_acquire) != kNeverWritten;
    }
    if (ok) return;
    throw UserError("err_uninitialized_read", ir_.name, loc,
                    fmt::format("{} reads element [{}] of tensor {} {} ({}), which nothing wrote: fresh {} holds {}",
                                where(at_), fmt::join(idx, ","), t.name, shape_str(t.shape), ir::memory_name(t.memory),
                                ir::memory_name(t.memory), is_float(t.dtype) ? "NaN" : "the pattern 0xA5"));
  }

  /**
   * Two writes of one element conflict when instances differ, or when an affine_range enclosing
   * both differs. Instances on two cores with a core_barrier or sendrecv between the writes are
   * ordered by it (each core's k-th meets the other's k-th): no conflict.
   */
  bool conflict(const WriteRecord& a, const WriteRecord& b) const {
    if (a.atomic && b.atomic) return false;  // atomic updates commute, whoever makes them
    if (a.pid != b.pid) return a.core == b.core || a.core_syncs == b.core_syncs;
    if (a.accumulate && b.accumulate) return false;
    const std::span<const int> ea = nest_.enclosing(a.op);
    const std::span<const int> eb = nest_.enclosing(b.op);
    for (std::size_t q = 0; q < ea.size() && q < eb.size() && ea[q] == eb[q]; ++q) {
      const std::size_t l = static_cast<std::size_t>(ea[q]);
      if (ir_.loops[l].kind == ir::LoopKind::affine && a.loop[l] != b.loop[l]) return true;
    }
    return false;
  }

  /**
   * `b` is the write that found `a`. Instances apart, named at the later instance's write: the
   * same whichever core stored first.
   */
  [[noreturn]] void report_conflict(const ir::TensorDecl& t, const std::vector<std::int64_t>& idx, const WriteRecord& a,
                                    const WriteRecord& b) const {
    const bool instances = a.pid != b.pid;
    const WriteRecord& first = a.pid < b.pid || (a.pid == b.pid && a.loop <= b.loop) ? a : b;
    const WriteRecord& second = &first == &a ? b : a;
    const SourceLoc& loc = std::get<ir::StoreOp>(ir_.body[instances ? second.op : b.op]).loc;
    throw UserError(instances ? "err_instances_write_same_element" : "err_unexpected_output_dependencies", ir_.name, loc,
                    fmt::format("element [{}] of tensor {} {} is written by {} and by {}", fmt::join(idx, ","), t.name,
                                shape_str(t.shape), where(first), where(second)));
  }

  void checked_load(const ir::LoadOp& op) {
    const ir::TileInfo& ti = ir_.tiles[static_cast<std::size_t>(op.result)];
    const auto& readers = checked_->readers[static_cast<std::size_t>(op.src.tensor)];
    const std::int64_t rec = readers ? checked_->records.append({pid_, loop_, at_, false, false, core_, core_syncs_}) : -1;
    std::vector<std::int64_t> c(ti.shape.size(), 0);
    do {
      if (!holds(op.mask, c)) continue;
      check_read(op.src, c, op.loc);
      if (readers && op.index_tile < 0) check_read_against_writes(op.src.tensor, coord_of(op.src, c), rec, op.loc);
    } while (next_coord(c, ti.shape));
  }

  /**
   * Two accesses of one element, one a write, race when their instances differ and nothing
   * orders them: instances run in no order NKI defines, one core's instances included; cores
   * are ordered only across a core_barrier or sendrecv between the accesses.
   */
  static bool unordered(const WriteRecord& a, const WriteRecord& b) {
    return a.pid != b.pid && (a.core == b.core || a.core_syncs == b.core_syncs);
  }

  /**
   * A load of an element of a tensor instances write: a race with another instance's write
   * (or nl.atomic_rmw update) of it. Each side publishes itself, then looks for the other
   * (sequentially consistent), so whichever runs second sees the first.
   */
  void check_read_against_writes(int tensor, const std::pair<std::vector<std::int64_t>, std::int64_t>& at,
                                 std::int64_t rec, const SourceLoc& loc) const {
    const auto ti = static_cast<std::size_t>(tensor);
    const auto f = static_cast<std::size_t>(at.second);
    std::int64_t first = kNeverWritten;
    if (!checked_->readers[ti][f].compare_exchange_strong(first, rec) && checked_->records[first].pid != pid_) {
      std::int64_t other = kNeverWritten;
      checked_->other_readers[ti][f].compare_exchange_strong(other, rec);
    }
    const std::int64_t w = checked_->writers[ti] ? checked_->writers[ti][f].load() : kNeverWritten;
    if (w < 0) return;
    const WriteRecord& writer = checked_->records[w];
    if (writer.atomic && writer.pid != pid_) report_atomic_race(ir_.tensors[ti], at.first, writer, checked_->records[rec], loc);
    if (!writer.atomic && unordered(writer, checked_->records[rec]))
      report_read_write_race(ir_.tensors[ti], at.first, writer, checked_->records[rec], loc);
  }
  /** The other half: a write (or atomic update) of an element another instance read. */
  void check_write_against_reads(std::size_t ti, std::size_t f, const std::vector<std::int64_t>& idx, std::int64_t rec,
                                 const SourceLoc& loc) const {
    if (!checked_->readers[ti]) return;
    const WriteRecord& write = checked_->records[rec];
    for (const auto* slots : {&checked_->readers, &checked_->other_readers}) {
      const std::int64_t r = (*slots)[ti][f].load();
      if (r < 0) continue;
      const WriteRecord& read = checked_->records[r];
      if (write.atomic && read.pid != pid_) report_atomic_race(ir_.tensors[ti], idx, write, read, loc);
      if (!write.atomic && unordered(write, read)) report_read_write_race(ir_.tensors[ti], idx, write, read, loc);
    }
  }
  [[noreturn]] void report_read_write_race(const ir::TensorDecl& t, const std::vector<std::int64_t>& idx,
                                           const WriteRecord& write, const WriteRecord& read, const SourceLoc& loc) const {
    throw UserError("err_read_write_race", ir_.name, loc,
                    fmt::format("element [{}] of tensor {} {} is written by {} and read by {}: NKI runs instances in no "
                                "order, so the read may see the value before or after the write; let one instance both "
                                "write and read it, or read it in a later launch",
                                fmt::join(idx, ","), t.name, shape_str(t.shape), where(write), where(read)));
  }
  [[noreturn]] void report_atomic_race(const ir::TensorDecl& t, const std::vector<std::int64_t>& idx,
                                       const WriteRecord& update, const WriteRecord& read, const SourceLoc& loc) const {
    throw UserError("err_instances_write_same_element", ir_.name, loc,
                    fmt::format("element [{}] of tensor {} {} is updated by nl::atomic_rmw in {} and read by {}: the "
                                "value read depends on when the update lands",
                                fmt::join(idx, ","), t.name, shape_str(t.shape), where(update), where(read)));
  }

  void checked_store(const ir::StoreOp& op, const std::vector<std::int64_t>& rows = {}) {
    const std::size_t ti = static_cast<std::size_t>(op.dst.tensor);
    const ir::TensorDecl& t = ir_.tensors[ti];
    const bool hbm = ir::is_hbm(t.memory);
    std::int64_t rec = -1;
    if (hbm) rec = checked_->records.append({pid_, loop_, at_, op.accumulate, op.atomic, core_, core_syncs_});
    std::map<std::int64_t, std::int64_t> scattered;  // a scatter's elements: flat index -> the partition that wrote it
    std::vector<std::int64_t> c(op.dst.shape.size(), 0);
    do {
      if (!holds(op.mask, c)) continue;
      const bool indirect = op.index_tile >= 0;
      if (indirect && rows[static_cast<std::size_t>(c[0])] < 0) continue;  // a skipped row
      const auto [idx, flat] = indirect ? scatter_coord(op, c, rows) : coord_of(op.dst, c);
      if (op.accumulate || op.atomic) check_read_at(ti, idx, flat, op.loc);
      if (indirect && !op.atomic) {
        const auto [it, fresh] = scattered.try_emplace(flat, c[0]);
        if (!fresh)
          throw UserError("err_unexpected_output_dependencies", ir_.name, op.loc,
                          ir::scatter_duplicate_message(t, idx, it->second, c[0]));
      }
      if (t.view_of >= 0) {  // a write through a reshape / view(dtype) is a write of the storage's elements
        const StorageElements e = storage_elements(ti, flat);
        for (std::int64_t f = e.first; f < e.first + e.count; ++f) {
          const std::int64_t old = checked_->writers[e.tensor][static_cast<std::size_t>(f)].exchange(rec, std::memory_order_acq_rel);
          if (old >= 0 && old != rec && conflict(checked_->records[old], checked_->records[rec]))
            report_conflict(t, idx, checked_->records[old], checked_->records[rec]);
        }
        continue;
      }
      const std::size_t f = static_cast<std::size_t>(flat);
      std::int64_t old = kNeverWritten;
      if (t.memory == ir::Memory::private_hbm) old = std::exchange(own_writer_[ti][f], rec);
      else if (hbm) old = checked_->writers[ti][f].exchange(rec);  // sequentially consistent: see check_read_against_writes
      if (ir::is_per_instance(t.memory)) written_[ti][f] = 1;
      if (!ir::is_per_instance(t.memory) && hbm) check_write_against_reads(ti, f, idx, rec, op.loc);
      if (old >= 0 && old != rec && conflict(checked_->records[old], checked_->records[rec]))
        report_conflict(t, idx, checked_->records[old], checked_->records[rec]);
    } while (next_coord(c, op.dst.shape));
  }

  /** A register_store defines its element (a register's value is never undefined); shared HBM counts it as filled. */
  void checked_register_store(const ir::RegisterOp& op, const std::vector<std::int64_t>& c) {
    const std::size_t ti = static_cast<std::size_t>(op.mem.tensor);
    const ir::TensorDecl& t = ir_.tensors[ti];
    const std::size_t f = static_cast<std::size_t>(coord_of(op.mem, c).second);
    if (ir::is_per_instance(t.memory)) {
      written_[ti][f] = 1;
      if (!mem_undef_[ti].empty()) mem_undef_[ti][f] = kDefined;
    } else if (t.view_of >= 0) {
      const StorageElements e = storage_elements(ti, static_cast<std::int64_t>(f));
      if (checked_->writers[e.tensor])
        for (std::int64_t g = e.first; g < e.first + e.count; ++g)
          checked_->writers[e.tensor][static_cast<std::size_t>(g)].store(kFilled, std::memory_order_release);
    } else if (checked_->writers[ti]) {
      checked_->writers[ti][f].store(kFilled, std::memory_order_release);
    }
  }

  void checked_alloc(const ir::AllocOp& op) {
    const std::size_t ti = static_cast<std::size_t>(op.tensor);
    fresh(ti);
    if (ir_.tensors[ti].fill) std::fill(written_[ti].begin(), written_[ti].end(), std::uint8_t{1});
  }

  /** Runs the ops directly in `loop` (-1: the kernel's top level), each nested loop for its trip count. */
  void run(int loop) {
    for (std::size_t i : nest_.level(loop)) {
      if (const auto* l = std::get_if<ir::LoopOp>(&ir_.body[i])) {
        const ir::LoopInfo& info = ir_.loops[static_cast<std::size_t>(l->loop)];
        if (info.kind == ir::LoopKind::while_loop) {
          run_while(l->loop, info);
          continue;
        }
        // A dynamic loop's trip count comes from its bounds' registers as it starts.
        const std::int64_t trip = info.kind == ir::LoopKind::dynamic ? ir::dynamic_trip(info, regs_) : info.trip;
        for (std::int64_t it = 0; it < trip; ++it) {
          loop_[static_cast<std::size_t>(l->loop)] = info.kind == ir::LoopKind::dynamic ? 0 : it;
          if (info.kind == ir::LoopKind::dynamic) set_induction(info, it);
          run(l->loop);
        }
        continue;
      }
      at_ = i;
      std::visit([this](const auto& o) { exec(o); }, ir_.body[i]);
    }
  }

  void set_induction(const ir::LoopInfo& info, std::int64_t it) {
    const std::int64_t lo = info.lower_reg >= 0 ? regs_[static_cast<std::size_t>(info.lower_reg)] : info.lower;
    regs_[static_cast<std::size_t>(info.induction)] = static_cast<std::int32_t>(lo + it * info.step);
  }

  void run_while(int loop, const ir::LoopInfo& info) {
    for (std::int64_t it = 0; regs_[static_cast<std::size_t>(info.cond)] != 0; ++it) {
      if (it == ir::kWhileLoopLimit) ir::throw_while_loop_limit(ir_, info, pid_);
      regs_[static_cast<std::size_t>(info.induction)] = regs_[static_cast<std::size_t>(info.cond)];
      run(loop);
    }
  }

  std::int64_t eval(const ir::IndexExpr& e, const std::vector<std::int64_t>& c) const {
    return ir::evaluate(e, pid_, loop_, c, rank_);
  }

  bool holds(const ir::Predicate& p, const std::vector<std::int64_t>& c) const { return p.holds(pid_, loop_, c, rank_); }

  /** Byte address of the element an access reaches at tile coordinate `c`; out of bounds is the user's error. */
  std::byte* element(const ir::Access& a, const std::vector<std::int64_t>& c) const {
    const TensorBinding& t = tensors_[static_cast<std::size_t>(a.tensor)];
    const ir::TensorDecl& decl = ir_.tensors[static_cast<std::size_t>(a.tensor)];
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < a.indices.size(); ++d) {
      const std::int64_t v = eval(a.indices[d], c);
      if (v < 0 || v >= decl.shape[d]) throw_access_out_of_bound(a, c, v, d);
      offset += ir::storage_index(decl, d, v) * t.strides[d];
    }
    return t.data + offset * dtype_bytes(t.dtype);
  }

  /** Value of an operand at `c` of a (possibly larger, broadcast) result shape. */
  double value(const ir::Operand& o, const std::vector<std::int64_t>& c) const {
    if (o.is_scalar()) return o.scalar;
    const Shape& s = ir_.tiles[static_cast<std::size_t>(o.tile)].shape;
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < s.size(); ++d) flat = flat * s[d] + (s[d] == 1 ? 0 : c[d]);
    if (checked_) note_read(o.tile, flat);
    return tiles_[static_cast<std::size_t>(o.tile)][static_cast<std::size_t>(flat)];
  }
  double tile_at(int tile, const std::vector<std::int64_t>& c) const { return value({tile, 0, true}, c); }

  /**
   * Fills tile `result` elementwise: f(c) where the mask holds; elsewhere 0, or in checked mode
   * NaN and marked undefined (so is an element computed from an undefined one).
   */
  template <class F>
  void compute(int result, const ir::Predicate& mask, F f) {
    const ir::TileInfo& ti = ir_.tiles[static_cast<std::size_t>(result)];
    std::vector<double> out(static_cast<std::size_t>(shape_elements(ti.shape)));
    std::vector<std::int64_t> c(ti.shape.size(), 0);
    std::size_t i = 0;
    if (!checked_) {
      do {
        out[i++] = holds(mask, c) ? round_to_dtype(f(c), ti.dtype) : 0.0;
      } while (next_coord(c, ti.shape));
      tiles_[static_cast<std::size_t>(result)] = std::move(out);
      return;
    }
    std::vector<std::int32_t> undef(out.size(), kDefined);
    bool any = false;
    do {
      if (holds(mask, c)) {
        read_undef_ = kDefined;
        out[i] = round_to_dtype(f(c), ti.dtype);
        undef[i] = read_undef_;
      } else {
        out[i] = std::numeric_limits<double>::quiet_NaN();
        undef[i] = kMaskedOff;
      }
      any = any || undef[i] != kDefined;
      ++i;
    } while (next_coord(c, ti.shape));
    read_undef_ = kDefined;
    tiles_[static_cast<std::size_t>(result)] = std::move(out);
    tile_undef_[static_cast<std::size_t>(result)] = any ? std::move(undef) : std::vector<std::int32_t>{};
  }

  static float f32(double v) { return static_cast<float>(v); }

  void exec(const ir::LoadOp& op) {
    if (op.index_tile >= 0) {
      exec_indirect(op);
      return;
    }
    if (checked_) checked_load(op);
    const DType src = ir_.tensors[static_cast<std::size_t>(op.src.tensor)].dtype;
    const bool on_chip = checked_ && ir::is_per_instance(ir_.tensors[static_cast<std::size_t>(op.src.tensor)].memory);
    compute(op.result, op.mask, [&](const auto& c) {
      if (on_chip) note_mem_read(op.src.tensor, coord_of(op.src, c).second);
      return load_element(element(op.src, c), src);
    });
  }

  /** An indirect load: the row on index_dim comes from the index tile of the partition. */
  void exec_indirect(const ir::LoadOp& op) {
    const ir::TensorDecl& decl = ir_.tensors[static_cast<std::size_t>(op.src.tensor)];
    const TensorBinding& t = tensors_[static_cast<std::size_t>(op.src.tensor)];
    const auto dim = static_cast<std::size_t>(op.index_dim);
    compute(op.result, op.mask, [&](const std::vector<std::int64_t>& c) {
      const double row = value({op.index_tile, 0, true}, {c[0], 0});
      std::int64_t offset = 0;
      for (std::size_t d = 0; d < op.src.indices.size(); ++d) {
        std::int64_t v = eval(op.src.indices[d], c);
        if (d == dim) {
          if (!(row >= 0 && row < static_cast<double>(decl.shape[d] - v))) {
            if (op.oob_error)
              throw UserError("err_tensor_access_out_of_bound", ir_.name, op.loc,
                              ir::indirect_out_of_bound_message(decl.name, op.index_dim, v + static_cast<std::int64_t>(row), decl.shape[d]));
            return 0.0;
          }
          v += static_cast<std::int64_t>(row);
        }
        if (v < 0 || v >= decl.shape[d]) throw_access_out_of_bound(op.src, c, v, d);
        offset += ir::storage_index(decl, d, v) * t.strides[d];
      }
      return load_element(t.data + offset * dtype_bytes(t.dtype), decl.dtype);
    });
  }

  /**
   * The row each partition of a scatter writes (-1: skipped, oob_mode::skip), all checked before
   * any is written: an out-of-bound row under oob_mode::error writes nothing.
   */
  std::vector<std::int64_t> scatter_rows(const ir::StoreOp& op) const {
    const ir::TensorDecl& decl = ir_.tensors[static_cast<std::size_t>(op.dst.tensor)];
    const std::vector<std::int64_t> zero(op.dst.shape.size(), 0);
    const std::int64_t base = eval(op.dst.indices[0], zero);
    std::vector<std::int64_t> rows(static_cast<std::size_t>(op.dst.shape[0]));
    for (std::int64_t p = 0; p < op.dst.shape[0]; ++p) {
      const double offset = value({op.index_tile, 0, true}, {p, 0});
      const double row = static_cast<double>(base) + offset;
      if (row >= 0 && row < static_cast<double>(decl.shape[0])) {
        rows[static_cast<std::size_t>(p)] = static_cast<std::int64_t>(row);
        continue;
      }
      if (op.oob_error)
        throw UserError("err_tensor_access_out_of_bound", ir_.name, op.loc,
                        ir::indirect_out_of_bound_message(decl.name, 0, static_cast<std::int64_t>(row), decl.shape[0]));
      rows[static_cast<std::size_t>(p)] = -1;
    }
    return rows;
  }

  /** A scatter, or nl.atomic_rmw: partition p writes (adds to) the row its index tile names; partitions in order. */
  void exec_scatter(const ir::StoreOp& op) {
    const std::vector<std::int64_t> rows = scatter_rows(op);
    if (checked_) checked_store(op, rows);
    const ir::TensorDecl& decl = ir_.tensors[static_cast<std::size_t>(op.dst.tensor)];
    const TensorBinding& t = tensors_[static_cast<std::size_t>(op.dst.tensor)];
    std::vector<std::int64_t> c(op.dst.shape.size(), 0);
    do {
      if (!holds(op.mask, c) || rows[static_cast<std::size_t>(c[0])] < 0) continue;
      read_undef_ = kDefined;
      const double v = tile_at(op.value, c);
      if (checked_ && read_undef_ != kDefined) report_undefined(op, read_undef_, c);
      const std::vector<std::int64_t> idx = scatter_coord(op, c, rows).first;
      std::int64_t offset = 0;
      for (std::size_t d = 0; d < idx.size(); ++d) offset += idx[d] * t.strides[d];
      std::byte* at = t.data + offset * dtype_bytes(t.dtype);
      if (op.atomic) atomic_add_element(at, decl.dtype, v);
      else store_element(at, decl.dtype, v);
    } while (next_coord(c, op.dst.shape));
  }

  void exec(const ir::StoreOp& op) {
    if (op.index_tile >= 0) {
      exec_scatter(op);
      return;
    }
    if (checked_) checked_store(op);
    const ir::TensorDecl& decl = ir_.tensors[static_cast<std::size_t>(op.dst.tensor)];
    const DType dst = decl.dtype;
    std::vector<std::int32_t>* mem_undef =
        checked_ && ir::is_per_instance(decl.memory) ? &mem_undef_[static_cast<std::size_t>(op.dst.tensor)] : nullptr;
    std::vector<std::int64_t> c(op.dst.shape.size(), 0);
    do {
      if (!holds(op.mask, c)) continue;
      std::byte* at = element(op.dst, c);
      read_undef_ = kDefined;
      const double v = tile_at(op.value, c);
      if (checked_) {
        const std::int32_t why = read_undef_;
        read_undef_ = kDefined;
        if (mem_undef != nullptr) {  // on chip: the element is as undefined as what was written (+= keeps an old reason)
          if (mem_undef->empty() && why != kDefined)
            mem_undef->assign(static_cast<std::size_t>(shape_elements(ir::storage_shape(decl))), kDefined);
          if (!mem_undef->empty()) {
            std::int32_t& e = (*mem_undef)[static_cast<std::size_t>(coord_of(op.dst, c).second)];
            if (!op.accumulate || why != kDefined) e = why;
          }
        } else if (why != kDefined) {
          report_undefined(op, why, c);
        }
      }
      if (op.accumulate) store_element(at, dst, ir::apply_binary(ir::BinaryKind::add, f32(load_element(at, dst)), f32(v)));
      else store_element(at, dst, v);
    } while (next_coord(c, op.dst.shape));
  }

  void exec(const ir::AllocOp& op) {
    if (checked_) checked_alloc(op);
    const ir::TensorDecl& t = ir_.tensors[static_cast<std::size_t>(op.tensor)];
    if (!t.fill) return;
    const TensorBinding& b = tensors_[static_cast<std::size_t>(op.tensor)];
    fill_elements(b.data, t.dtype, shape_elements(ir::storage_shape(t)), *t.fill);
  }

  static bool is_identity(const ir::ActivationOp& op) {
    return op.scale.is_scalar() && op.scale.scalar == 1.0 && op.bias.is_scalar() && op.bias.scalar == 0.0;
  }

  void exec(const ir::ActivationOp& op) {
    if (op.kind == ir::ActKind::copy && is_identity(op)) {  // data movement: exact, NaN bits kept
      compute(op.result, op.mask, [&](const auto& c) { return value(op.data, c); });
      return;
    }
    const bool affine = !is_identity(op);
    compute(op.result, op.mask, [&](const auto& c) {
      float x = f32(value(op.data, c));
      if (affine) x = x * f32(value(op.scale, c)) + f32(value(op.bias, c));
      return static_cast<double>(ir::apply_activation(op.kind, x));
    });
  }

  void exec(const ir::BinaryOp& op) {
    if (ir::is_bitwise(op.kind)) {  // integer bit patterns in the result's type, not fp32
      const DType dt = ir_.tiles[static_cast<std::size_t>(op.result)].dtype;
      compute(op.result, op.mask, [&](const auto& c) { return ir::apply_bitwise(op.kind, dt, value(op.lhs, c), value(op.rhs, c)); });
      return;
    }
    compute(op.result, op.mask, [&](const auto& c) {
      return static_cast<double>(ir::apply_binary(op.kind, f32(value(op.lhs, c)), f32(value(op.rhs, c))));
    });
  }

  void exec(const ir::SelectOp& op) {
    compute(op.result, op.mask, [&](const auto& c) {
      const bool cond = op.cond.is_scalar() ? holds(op.pred, c) : value(op.cond, c) != 0.0;
      return cond ? value(op.on_true, c) : value(op.on_false, c);
    });
  }

  void exec(const ir::IotaOp& op) {
    compute(op.result, op.mask, [&](const auto& c) { return static_cast<double>(eval(op.expr, c)); });
  }

  void exec(const ir::ReduceOp& op) {
    const Shape& in = ir_.tiles[static_cast<std::size_t>(op.data)].shape;
    Shape reduced;  // the extents walked for one output element
    for (int a : op.axes) reduced.push_back(in[static_cast<std::size_t>(a)]);
    const float count = f32(static_cast<double>(shape_elements(reduced)));
    ir::BinaryKind combine = ir::BinaryKind::add;
    if (op.kind == ir::ReduceKind::max) combine = ir::BinaryKind::maximum;
    if (op.kind == ir::ReduceKind::min) combine = ir::BinaryKind::minimum;
    if (op.kind == ir::ReduceKind::prod) combine = ir::BinaryKind::multiply;
    if (op.kind == ir::ReduceKind::all) combine = ir::BinaryKind::logical_and;
    compute(op.result, op.mask, [&](const std::vector<std::int64_t>& oc) {
      // Input coordinate: output coordinates on kept axes, the walk on reduced ones.
      std::vector<std::int64_t> ic(in.size(), 0);
      // One row-major walk folding f(x) into the accumulator, starting from f(first element).
      auto fold = [&](ir::BinaryKind kind, auto f) {
        std::vector<std::int64_t> r(reduced.size(), 0);
        float acc = 0.0f;
        bool first = true;
        do {
          std::size_t o = 0, k = 0;
          for (std::size_t d = 0; d < in.size(); ++d) {
            const bool is_reduced = k < op.axes.size() && op.axes[k] == static_cast<int>(d);
            if (is_reduced) {
              ic[d] = r[k++];
              if (op.keepdims) ++o;
            } else {
              ic[d] = oc[o++];
            }
          }
          const float x = f(f32(tile_at(op.data, ic)));
          acc = first ? x : ir::apply_binary(kind, acc, x);
          first = false;
        } while (next_coord(r, reduced));
        return acc;
      };
      auto same = [](float x) { return x; };
      if (op.kind == ir::ReduceKind::all)  // the first element counts by its truth value too
        return static_cast<double>(fold(combine, [](float x) { return x != 0.0f ? 1.0f : 0.0f; }));
      if (op.kind == ir::ReduceKind::var) {
        // numpy's two passes: the mean, then the mean of squared deviations from it.
        const float mean = ir::apply_binary(ir::BinaryKind::divide, fold(ir::BinaryKind::add, same), count);
        const float sq = fold(ir::BinaryKind::add, [&](float x) {
          const float d = ir::apply_binary(ir::BinaryKind::subtract, x, mean);
          return ir::apply_binary(ir::BinaryKind::multiply, d, d);
        });
        return static_cast<double>(ir::apply_binary(ir::BinaryKind::divide, sq, count));
      }
      float acc = fold(combine, same);
      if (op.kind == ir::ReduceKind::mean) acc = ir::apply_binary(ir::BinaryKind::divide, acc, count);
      return static_cast<double>(acc);
    });
  }

  void exec(const ir::MatmulOp& op) {
    const Shape& st = ir_.tiles[static_cast<std::size_t>(op.stationary)].shape;  // [K, M]
    const Shape& mv = ir_.tiles[static_cast<std::size_t>(op.moving)].shape;      // [K, N]
    const std::vector<double>& a = tiles_[static_cast<std::size_t>(op.stationary)];
    const std::vector<double>& b = tiles_[static_cast<std::size_t>(op.moving)];
    const std::int64_t K = st[0], M = st[1], N = mv[1];
    const bool pair = op.stationary2 >= 0;  // double_row: the second row of each pair, after the first
    const std::vector<double>& a2 = tiles_[static_cast<std::size_t>(pair ? op.stationary2 : op.stationary)];
    const std::vector<double>& b2 = tiles_[static_cast<std::size_t>(pair ? op.moving2 : op.moving)];
    compute(op.result, op.mask, [&](const std::vector<std::int64_t>& c) {
      // PSUM accumulation: one fused multiply-add per product, rounded once, k ascending from 0.
      float acc = 0.0f;
      if (checked_) {
        for (std::int64_t k = 0; k < K; ++k) note_read(op.stationary, k * M + c[0]), note_read(op.moving, k * N + c[1]);
        if (pair)
          for (std::int64_t k = 0; k < K; ++k) note_read(op.stationary2, k * M + c[0]), note_read(op.moving2, k * N + c[1]);
      }
      if (op.transpose) {  // transpose mode: only the moving operand's non-zeros pass a value, from -0.0
        acc = -0.0f;
        for (std::int64_t k = 0; k < K; ++k) {
          const auto i = static_cast<std::size_t>(k * M + c[0]), j = static_cast<std::size_t>(k * N + c[1]);
          if (f32(b[j]) != 0.0f) acc = std::fma(f32(a[i]), f32(b[j]), acc);
        }
      }
      for (std::int64_t k = 0; k < K && !op.transpose; ++k) {
        const auto i = static_cast<std::size_t>(k * M + c[0]), j = static_cast<std::size_t>(k * N + c[1]);
        acc = std::fma(f32(a[i]), f32(b[j]), acc);
        if (pair) acc = std::fma(f32(a2[i]), f32(b2[j]), acc);
      }
      return static_cast<double>(std::isnan(acc) ? std::numeric_limits<float>::quiet_NaN() : acc);
    });
  }

  void exec(const ir::TransposeOp& op) {
    compute(op.result, {}, [&](const std::vector<std::int64_t>& c) { return tile_at(op.data, {c[1], c[0]}); });
  }

  void exec(const ir::ScanOp& op) {
    const ir::TileInfo& ti = ir_.tiles[static_cast<std::size_t>(op.result)];
    const std::int64_t P = ti.shape[0], F = ti.shape[1];
    std::vector<double> out(static_cast<std::size_t>(P * F));
    // Checked mode: the carry is undefined from the row's first undefined input on (value() notes it).
    std::vector<std::int32_t> undef(checked_ ? out.size() : 0, kDefined);
    bool any = false;
    for (std::int64_t p = 0; p < P; ++p) {
      read_undef_ = kDefined;
      float carry = f32(value(op.initial, {p, 0}));  // the engine's fp32 state
      for (std::int64_t i = 0; i < F; ++i) {
        const float a = f32(tile_at(op.data0, {p, i})), b = f32(tile_at(op.data1, {p, i}));
        const float x = op.reverse0 ? ir::apply_binary(op.op0, carry, a) : ir::apply_binary(op.op0, a, carry);
        carry = op.reverse1 ? ir::apply_binary(op.op1, b, x) : ir::apply_binary(op.op1, x, b);
        const auto at = static_cast<std::size_t>(p * F + i);
        out[at] = round_to_dtype(carry, ti.dtype);
        if (checked_) {
          undef[at] = read_undef_;
          any = any || read_undef_ != kDefined;
        }
      }
    }
    read_undef_ = kDefined;
    tiles_[static_cast<std::size_t>(op.result)] = std::move(out);
    if (checked_) tile_undef_[static_cast<std::size_t>(op.result)] = any ? std::move(undef) : std::vector<std::int32_t>{};
  }

  void exec(const ir::QuantizeMxOp& op) {
    const ir::TileInfo& ti = ir_.tiles[static_cast<std::size_t>(op.result)];
    const int bits = op.format == DType::fp4_e2m1fn_x4 ? 4 : 8;
    compute(op.result, {}, [&](const std::vector<std::int64_t>& c) {
      // The group: partitions 8g..8g+7, values 4j..4j+3 of each.
      const std::int64_t g = op.scale ? c[0] : c[0] / ir::mx::kGroupPartitions, j = c[1];
      float amax = 0.0f;
      for (std::int64_t p = g * ir::mx::kGroupPartitions; p < (g + 1) * ir::mx::kGroupPartitions; ++p) {
        for (std::int64_t i = 0; i < ir::mx::kPacked; ++i) {
          const float v = f32(tile_at(op.data, {p, ir::mx::kPacked * j + i}));
          amax = std::isfinite(v) ? std::max(amax, std::fabs(v)) : std::numeric_limits<float>::infinity();
        }
      }
      const std::uint8_t code = ir::mx::scale_code(amax, op.format);
      if (op.scale) return ti.dtype == DType::uint8 ? static_cast<double>(code) : fp8_e8m0fnu_bits_to_float(code);
      std::uint32_t word = 0;
      for (int i = 0; i < ir::mx::kPacked; ++i)
        word |= ir::mx::quantize_value(f32(tile_at(op.data, {c[0], ir::mx::kPacked * j + i})), code, op.format)
                << (bits * i);
      return static_cast<double>(word);
    });
  }

  void exec(const ir::MatmulMxOp& op) {
    const std::int64_t K = ir_.tiles[static_cast<std::size_t>(op.stationary)].shape[0];
    const DType sd = ir_.tiles[static_cast<std::size_t>(op.stationary)].dtype;
    const DType md = ir_.tiles[static_cast<std::size_t>(op.moving)].dtype;
    const DType ssd = ir_.tiles[static_cast<std::size_t>(op.stationary_scale)].dtype;
    const DType msd = ir_.tiles[static_cast<std::size_t>(op.moving_scale)].dtype;
    compute(op.result, {}, [&](const std::vector<std::int64_t>& c) {
      // PSUM accumulation: one fused multiply-add per product, k ascending, then the 4 values of an element.
      float acc = 0.0f;
      for (std::int64_t k = 0; k < K; ++k) {
        const std::int64_t g = k / ir::mx::kGroupPartitions;
        const std::uint8_t s1 = ir::mx::scale_code_of(tile_at(op.stationary_scale, {g, c[0]}), ssd);
        const std::uint8_t s2 = ir::mx::scale_code_of(tile_at(op.moving_scale, {g, c[1]}), msd);
        const auto w1 = static_cast<std::uint32_t>(tile_at(op.stationary, {k, c[0]}));
        const auto w2 = static_cast<std::uint32_t>(tile_at(op.moving, {k, c[1]}));
        for (int i = 0; i < ir::mx::kPacked; ++i)
          acc = std::fma(ir::mx::dequantize(w1, i, sd, s1), ir::mx::dequantize(w2, i, md, s2), acc);
      }
      return static_cast<double>(std::isnan(acc) ? std::numeric_limits<float>::quiet_NaN() : acc);
    });
  }

  void exec(const ir::ViewOp& op) {
    compute(op.result, {}, [&](const std::vector<std::int64_t>& c) {
      std::vector<std::int64_t> at(op.indices.size());
      for (std::size_t d = 0; d < at.size(); ++d) at[d] = eval(op.indices[d], c);
      return tile_at(op.data, at);
    });
  }

  void exec(const ir::RegisterOp& op) {
    const auto reg = [&](int r) -> std::int32_t& { return regs_[static_cast<std::size_t>(r)]; };
    if (op.kind == ir::RegisterOp::Kind::move) {
      reg(op.dst) = op.src >= 0 ? reg(op.src) : op.imm;
      return;
    }
    const std::vector<std::int64_t> c(op.mem.shape.size(), 0);
    const DType dt = ir_.tensors[static_cast<std::size_t>(op.mem.tensor)].dtype;
    if (op.kind == ir::RegisterOp::Kind::load) {
      if (checked_) check_read(op.mem, c, op.loc);
      reg(op.dst) = ir::register_from_element(element(op.mem, c), dt);
      return;
    }
    ir::register_to_element(element(op.mem, c), dt, reg(op.src));
    if (checked_) checked_register_store(op, c);
  }
  /**
   * A collective: the rank link meets the group's other ranks and writes the dsts. Checked: the
   * srcs must be written (a _v kind's: the metadata rows it reads; its chunks are known only to
   * the senders), and the dsts are written after (a _v kind's: the chunks its row 2 counts).
   */
  void exec(const ir::CollectiveOp& op) {
    if (link_ == nullptr) throw InternalError("a collective ran on a core with no rank link");
    std::vector<TensorBinding> srcs, dsts;
    const std::int64_t g = op.metadata >= 0 ? ir_.tensors[static_cast<std::size_t>(op.metadata)].shape.back() : 0;
    // A _v kind reads only its chunks, and a core_barrier reads nothing (its data is what it orders).
    const bool reads_srcs = op.metadata < 0 && op.kind != ir::CollectiveOp::Kind::core_barrier;
    for (int t : op.srcs) {
      if (checked_ && reads_srcs) check_collective_read(t, op, 0, shape_elements(ir_.tensors[static_cast<std::size_t>(t)].shape));
      srcs.push_back(tensors_[static_cast<std::size_t>(t)]);
    }
    if (op.metadata >= 0) {
      if (checked_)
        for (std::int64_t row : {std::int64_t{0}, std::int64_t{1}, op.has_rdispls ? std::int64_t{3} : std::int64_t{1}})
          check_collective_read(op.metadata, op, row * g, (row + 1) * g);
      srcs.push_back(tensors_[static_cast<std::size_t>(op.metadata)]);
    }
    for (int t : op.dsts) dsts.push_back(tensors_[static_cast<std::size_t>(t)]);
    link_->collective(ir_, static_cast<int>(at_), srcs, dsts, pid_);
    if (ir::meets_cores(op)) ++core_syncs_;
    if (!checked_) return;
    for (int t : op.dsts) {
      const std::int64_t n = shape_elements(ir_.tensors[static_cast<std::size_t>(t)].shape);
      if (!ir::writes_metadata(op)) {  // every element of a dst is written (a register_store's rule, element by element)
        mark_collective_written(t, 0, n);
        continue;
      }
      const auto* meta = reinterpret_cast<const std::uint32_t*>(tensors_[static_cast<std::size_t>(op.metadata)].data);
      for (std::int64_t q = 0; q < g; ++q) {
        const std::int64_t at = op.has_rdispls ? meta[3 * g + q] : n / g * q;
        mark_collective_written(t, at, at + meta[2 * g + q]);
      }
    }
    if (ir::writes_metadata(op)) mark_collective_written(op.metadata, 2 * g, 3 * g);
  }
  /** Checked mode: elements [begin, end) of `tensor` (flat) are written by a collective. */
  void mark_collective_written(int tensor, std::int64_t begin, std::int64_t end) {
    const std::size_t ti = static_cast<std::size_t>(tensor);
    const ir::TensorDecl& d = ir_.tensors[ti];
    for (std::int64_t f = begin; f < end; ++f) {
      const auto e = static_cast<std::size_t>(f);
      if (ir::is_per_instance(d.memory)) {
        written_[ti][e] = 1;
        if (!mem_undef_[ti].empty()) mem_undef_[ti][e] = kDefined;
      } else if (checked_->writers[ti]) {
        checked_->writers[ti][e].store(kFilled, std::memory_order_release);
      }
    }
  }
  /** Checked mode: a collective sends elements [begin, end) (flat) of `tensor`, so each must have been written. */
  void check_collective_read(int tensor, const ir::CollectiveOp& op, std::int64_t begin, std::int64_t end) const {
    const std::size_t ti = static_cast<std::size_t>(tensor);
    const ir::TensorDecl& t = ir_.tensors[ti];
    if (!ir::is_per_instance(t.memory) && !checked_->writers[ti]) return;
    for (std::int64_t f = begin; f < end; ++f) {
      const auto e = static_cast<std::size_t>(f);
      const bool ok = ir::is_per_instance(t.memory) ? written_[ti][e] != 0
                                                   : checked_->writers[ti][e].load(std::memory_order_acquire) != kNeverWritten;
      if (ok) continue;
      throw UserError("err_uninitialized_read", ir_.name, op.loc,
                      fmt::format("{} ({}) reads element [{}] of tensor {} {} ({}), which nothing wrote: fresh {} holds {}",
                                  where(at_), ir::collective_name(op.kind), fmt::join(coord_of_flat(t.shape, f), ","),
                                  t.name, shape_str(t.shape), ir::memory_name(t.memory), ir::memory_name(t.memory),
                                  is_float(t.dtype) ? "NaN" : "the pattern 0xA5"));
    }
  }
  void exec(const ir::PrintOp& op) {
    const ir::TileInfo& ti = ir_.tiles[static_cast<std::size_t>(op.tile)];
    prints_.push_back({pid_, ir::device_print_line(op.prefix, pid_, ti.dtype, ti.shape, tiles_[static_cast<std::size_t>(op.tile)])});
  }
  /** ir::GatherOp: the source element from the indices tile (or the table); out of range is the fallback or the error. */
  void exec(const ir::GatherOp& op) {
    const Shape& ds = ir_.tiles[static_cast<std::size_t>(op.data)].shape;
    const std::int64_t per_partition = shape_elements(ds) / ds[0];
    const ir::Operand fallback = op.fallback;
    compute(op.result, {}, [&](const std::vector<std::int64_t>& c) {
      std::int64_t source = 0;
      if (op.indices >= 0) {
        const double g = value({op.indices, 0, true}, c);
        if (g >= 0 && g < static_cast<double>(per_partition)) {
          std::vector<std::int64_t> at = coord_of_flat(ds, c[0] * per_partition + static_cast<std::int64_t>(g));
          return tile_at(op.data, at);
        }
        source = static_cast<std::int64_t>(g);
        if (op.oob_error) throw_gather_out_of_bound(op, source, per_partition);
      } else {
        source = op.table[static_cast<std::size_t>(c[0])];
        if (source >= 0) {
          std::vector<std::int64_t> at = c;
          at[0] = source;
          return tile_at(op.data, at);
        }
      }
      return value(fallback, c);
    });
  }
  /** err_tensor_access_out_of_bound: access `a` of the op running reaches `value` on dimension `dim` at tile coordinate `c`. */
  [[noreturn]] void throw_access_out_of_bound(const ir::Access& a, std::span<const std::int64_t> c, std::int64_t value,
                                              std::size_t dim) const {
    throw_out_of_bound(ir_, a, pid_, nest_.enclosing(at_), loop_, c, value, dim, rank_);
  }
  void throw_gather_out_of_bound(const ir::GatherOp& op, std::int64_t index, std::int64_t limit) const {
    throw UserError("err_tensor_access_out_of_bound", ir_.name, op.loc,
                    ir::gather_out_of_bound_message(op, index, limit));
  }

  void exec(const ir::LoopOp&) {}
  void exec(const ir::LoopEndOp&) {}
  void exec(const std::monostate&) {}
};

class ReferenceProgram final : public Program {
 public:
  ReferenceProgram(std::shared_ptr<const ir::KernelIR> ir, bool checked) : ir_(std::move(ir)), nest_(*ir_) {
    if (checked) checked_ = std::make_unique<CheckedLaunch>();
  }
  std::unique_ptr<CoreRunner> bind(const std::vector<TensorBinding>& tensors) const override {
    return std::make_unique<ReferenceRunner>(*ir_, nest_, tensors, checked_.get());
  }

  /** Checked mode: unfilled outputs are poisoned; every shared HBM tensor a store writes gets a writer per element. */
  void begin_launch(const std::vector<TensorBinding>& tensors) const override {
    if (!checked_) return;
    const std::vector<int> stored = ir::count_stores(*ir_);
    checked_->writers.resize(ir_->tensors.size());
    for (const ir::TensorDecl& t : ir_->tensors) {
      const bool shared = t.memory == ir::Memory::hbm_input || t.memory == ir::Memory::shared_hbm;
      if (!shared || t.view_of >= 0) continue;  // a view's writes are tracked on the storage it reinterprets
      const bool output = t.memory == ir::Memory::shared_hbm;
      if (!output && stored[static_cast<std::size_t>(t.id)] == 0) continue;
      const std::int64_t n = shape_elements(t.shape);
      auto& w = checked_->writers[static_cast<std::size_t>(t.id)];
      w = std::make_unique<std::atomic<std::int64_t>[]>(static_cast<std::size_t>(n));
      const std::int64_t initial = !output || t.fill ? kFilled : kNeverWritten;
      for (std::int64_t i = 0; i < n; ++i) w[static_cast<std::size_t>(i)].store(initial, std::memory_order_relaxed);
      if (output && !t.fill) poison(tensors[static_cast<std::size_t>(t.id)].data, t.dtype, n);
    }
    // Readers are tracked on the tensors instances write and a load reads.
    for (auto* slots : {&checked_->readers, &checked_->other_readers}) {
      slots->clear();
      slots->resize(ir_->tensors.size());
    }
    for (const ir::Op& op : ir_->body) {
      const auto* l = std::get_if<ir::LoadOp>(&op);
      if (l == nullptr || l->src.tensor < 0) continue;
      const auto ti = static_cast<std::size_t>(l->src.tensor);
      if (!checked_->writers[ti] || checked_->readers[ti] || stored[ti] == 0) continue;
      const auto n = static_cast<std::size_t>(shape_elements(ir_->tensors[ti].shape));
      for (auto* slots : {&checked_->readers, &checked_->other_readers}) {
        auto& r = (*slots)[ti];
        r = std::make_unique<std::atomic<std::int64_t>[]>(n);
        for (std::size_t i = 0; i < n; ++i) r[i].store(kNeverWritten, std::memory_order_relaxed);
      }
    }
  }

  /** Checked mode: an output element no instance wrote is err_tensor_output_not_written_to. */
  void end_launch(const std::vector<TensorBinding>&) const override {
    if (!checked_) return;
    for (int output : ir_->outputs) {
      const int id = ir::storage_of(*ir_, output);  // a returned view: its storage's elements
      const ir::TensorDecl& t = ir_->tensors[static_cast<std::size_t>(id)];
      const auto& w = checked_->writers[static_cast<std::size_t>(id)];
      const std::int64_t n = shape_elements(t.shape);
      for (std::int64_t i = 0; i < n; ++i) {
        if (w[static_cast<std::size_t>(i)].load(std::memory_order_relaxed) != kNeverWritten) continue;
        const std::vector<std::int64_t> idx = coord_of_flat(t.shape, i);
        std::int64_t missing = 0;
        for (std::int64_t j = i; j < n; ++j) missing += w[static_cast<std::size_t>(j)].load() == kNeverWritten;
        throw UserError("err_tensor_output_not_written_to", ir_->name, t.loc,
                        fmt::format("no instance wrote element [{}] of output tensor {} {} ({} of {} elements unwritten)",
                                    fmt::join(idx, ","), t.name, shape_str(t.shape), missing, n));
      }
    }
  }

 private:
  std::shared_ptr<const ir::KernelIR> ir_;
  ir::LoopNest nest_;
  std::unique_ptr<CheckedLaunch> checked_;
};

}  // namespace

void poison(std::byte* data, DType dt, std::int64_t count) {
  if (!is_float(dt)) {
    std::memset(data, 0xA5, static_cast<std::size_t>(count * dtype_bytes(dt)));
    return;
  }
  const int eb = dtype_bytes(dt);
  std::byte nan[8];
  store_element(nan, dt, std::numeric_limits<double>::quiet_NaN());
  for (std::int64_t i = 0; i < count; ++i) std::memcpy(data + i * eb, nan, static_cast<std::size_t>(eb));
}

std::shared_ptr<const Program> make_reference_program(std::shared_ptr<const ir::KernelIR> ir, bool checked) {
  return std::make_shared<ReferenceProgram>(std::move(ir), checked);
}

}  // namespace nki
