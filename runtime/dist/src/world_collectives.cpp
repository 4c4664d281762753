/** \file The local ranks of a world launch meeting at each collective: arrival, checks, the data moved, barriers. */
#include "dist/world_collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "collective_reduction.h"
#include "core/box_copy.h"
#include "kernel_collective_transport.h"
#include "nki/error.h"
#include "v_chunks.h"

namespace nki {

namespace {

using Kind = ir::CollectiveOp::Kind;

ReduceOp reduce_op_of(ir::ReduceKind k) {
  switch (k) {
    case ir::ReduceKind::max: return ReduceOp::max;
    case ir::ReduceKind::min: return ReduceOp::min;
    default: return ReduceOp::sum;
  }
}

void require_dense(const ir::KernelIR& k, const TensorBinding& b) {
  if (b.strides != row_major_strides(b.shape))
    throw InternalError(fmt::format("{}: a collective buffer is not a dense row-major tensor", k.name));
}

std::int64_t bytes_of(const TensorBinding& b) { return shape_elements(b.shape) * dtype_bytes(b.dtype); }

}  // namespace

struct WorldCollectives::State {
  std::string kernel;
  int world = 1, first = 0, locals = 1;
  std::vector<std::vector<std::vector<int>>> own_groups;  ///< [local][ordinal]
  std::unique_ptr<KernelCollectiveTransport> remote;     ///< null: every rank is in this process

  std::mutex mu;
  std::condition_variable cv;
  std::vector<StepArrival> at;
  int arrived = 0;
  std::uint64_t steps = 0;       ///< completed arrivals (a rank waits for this to move)
  bool step_ready = false;       ///< every local rank arrived; the server's turn (remote only)
  std::vector<char> done;
  int done_count = 0;
  bool stopped = false;          ///< a rank failed or the ranks disagreed: everyone leaves
  std::string failure;           ///< the first failing rank's message (for the other processes)
  int barrier_count = 0;
  std::uint64_t barrier_round = 0;
  bool logical_core = false;     ///< the members are NC0 and NC1 of a plain launch, in instances of their own

  /** How messages name local rank `local`: a world rank, or a core of the logical core. */
  std::string member_name(int local) const {
    return logical_core ? fmt::format("NC{}", local) : fmt::format("rank {}", first + local);
  }

  std::string where(const StepArrival& a, int local) const {
    const ir::CollectiveOp& op = a.collective();
    return fmt::format("{} is at {} ({}:{}) in instance [{}]", member_name(local), ir::collective_name(op.kind),
                       op.loc.file, op.loc.line, fmt::join(a.pid, ","));
  }

  /** Lock held: every rank stops; this one throws the error, which the other processes are told. */
  [[noreturn]] void mismatch(std::string detail, const SourceLoc& loc) {
    UserError e("err_collective_mismatch", kernel, loc,
                detail + (logical_core ? "; both cores of the logical core make the same core_barriers and sendrecvs in "
                                         "the same order, or they would wait forever"
                                       : "; every rank makes the same collectives in the same order, or they would wait "
                                         "forever"));
    if (failure.empty()) failure = e.what();
    stopped = true;
    cv.notify_all();
    throw e;
  }

  /** Waits, lock held, until `ready`; a stop throws RankStopped. */
  template <class F>
  void wait(std::unique_lock<std::mutex>& lock, F ready) {
    cv.wait(lock, [&] { return stopped || ready(); });
    if (stopped) throw RankStopped();
  }

  /** Every local rank of the step meets here (the phases of a collective). */
  void barrier() {
    std::unique_lock lock(mu);
    const std::uint64_t round = barrier_round;
    if (++barrier_count == locals) {
      barrier_count = 0;
      ++barrier_round;
      cv.notify_all();
      return;
    }
    wait(lock, [&] { return barrier_round != round; });
  }

  /** Checks, lock held, that every local rank arrived at the same collective in the same instance. */
  void check_same_step() {
    const StepArrival& a0 = at[0];
    for (int r = 1; r < locals; ++r) {
      const StepArrival& a = at[static_cast<std::size_t>(r)];
      if (a.op != a0.op || (!logical_core && a.pid != a0.pid))
        mismatch(fmt::format("{} but {}", where(a0, 0), where(a, r)), a.collective().loc);
    }
  }

  /** The group of local rank `local` in the step, and its position there. */
  const std::vector<int>& group_of(int local, const StepArrival& a) const {
    return own_groups.at(static_cast<std::size_t>(local)).at(static_cast<std::size_t>(a.ordinal));
  }
  const StepArrival& member(int world_rank) const { return at[static_cast<std::size_t>(world_rank - first)]; }

  /** Whether local rank `local`'s part of the step needs another process (the server does it then). */
  bool needs_remote(int local, const StepArrival& a) const {
    return part_crosses_processes(first + local, first, locals, a.collective(), group_of(local, a));
  }

  /**
   * Lock held, every local rank arrived: a _v kind's chunks checked before any moves (receivers
   * in rank order, senders in group order), so every run reports the same first bad chunk.
   */
  void check_chunks() {
    const StepArrival& a0 = at[0];
    const ir::CollectiveOp& op = a0.collective();
    if (op.kind == Kind::sendrecv) {
      check_sendrecv_pairs();
      return;
    }
    if (op.metadata < 0) return;
    try {
      for (int r = 0; r < locals; ++r) {
        const StepArrival& a = at[static_cast<std::size_t>(r)];
        if (remote && needs_remote(r, a)) continue;  // the server checks what crosses processes
        const std::vector<int>& group = group_of(r, a);
        const int g = static_cast<int>(group.size());
        const int p = static_cast<int>(std::find(group.begin(), group.end(), first + r) - group.begin());
        for (int q = 0; q < g; ++q) {
          const StepArrival& s = member(group[static_cast<std::size_t>(q)]);
          (void)v_chunk(*a.k, op, reinterpret_cast<const std::uint32_t*>(s.srcs.back().data),
                        reinterpret_cast<const std::uint32_t*>(a.srcs.back().data), q, p, g,
                        shape_elements(s.srcs[0].shape), shape_elements(a.dsts[0].shape), group[static_cast<std::size_t>(q)],
                        first + r);
        }
      }
    } catch (const UserError& e) {
      if (failure.empty()) failure = e.what();
      stopped = true;
      cv.notify_all();
      throw;
    }
  }

  /** The core a sendrecv of local rank `local` sends to (`to`) or receives from, for its instance. */
  int sendrecv_peer(int local, bool to) const {
    const StepArrival& a = at[static_cast<std::size_t>(local)];
    const ir::CollectiveOp& op = a.collective();
    return static_cast<int>(ir::evaluate(to ? op.send_to : op.recv_from, a.pid, {}, {}, 0));
  }

  /** Lock held: each core receives from the core that sends to it (else every core stops, with the error). */
  void check_sendrecv_pairs() {
    for (int r = 0; r < locals; ++r) {
      const int from = sendrecv_peer(r, false);
      if (from >= 0 && from < locals && sendrecv_peer(from, true) == r) continue;
      const ir::CollectiveOp& op = at[static_cast<std::size_t>(r)].collective();
      UserError e("err_invalid_source_target_pairs", kernel, op.loc,
                  fmt::format("isa::sendrecv: NC{} receives from NC{}, which sends to NC{}; each core receives "
                              "from the core that sends to it",
                              r, from, from >= 0 && from < locals ? sendrecv_peer(from, true) : -1));
      if (failure.empty()) failure = e.what();
      stopped = true;
      cv.notify_all();
      throw e;
    }
  }

  /** Phase `phase` (0, then 1 for all_reduce's gather) of local rank `local`'s part, all members in this process. */
  void compute(int local, int phase) const;
};

void WorldCollectives::State::compute(int local, int phase) const {
  const StepArrival& a = at[static_cast<std::size_t>(local)];
  const ir::CollectiveOp& op = a.collective();
  const int me = first + local;
  if (op.kind == Kind::permute) {
    if (phase != 0) return;
    for (const auto& [s, t] : op.pairs) {
      if (t != me) continue;
      std::memcpy(a.dsts[0].data, member(s).srcs[0].data, static_cast<std::size_t>(bytes_of(a.dsts[0])));
    }
    return;
  }
  const std::vector<int>& group = group_of(local, a);
  const auto g = static_cast<std::int64_t>(group.size());
  const auto p = static_cast<std::int64_t>(std::find(group.begin(), group.end(), me) - group.begin());
  if (op.kind == Kind::core_barrier) return;  // the arrival and the barriers are all of it
  if (op.kind == Kind::sendrecv) {            // the tile of the core that sends here
    if (phase == 0)
      std::memcpy(a.dsts[0].data, member(sendrecv_peer(local, false)).srcs[0].data, static_cast<std::size_t>(bytes_of(a.dsts[0])));
    return;
  }
  if (op.kind == Kind::permute_implicit_reduce) {  // op of the predecessor's two srcs
    if (phase != 0) return;
    const StepArrival& pred = member(group[static_cast<std::size_t>((p + g - 1) % g)]);
    const TensorBinding& dst = a.dsts[0];
    reduce_range(dst.dtype, reduce_op_of(op.op), {pred.srcs[0].data, pred.srcs[1].data}, 0, dst.data, 0,
                 shape_elements(dst.shape));
    return;
  }
  if (op.metadata >= 0) {  // all_gather_v / all_to_all_v: chunks the metadata gives
    if (phase != 0) return;
    const TensorBinding& dst = a.dsts[0];
    const int eb = dtype_bytes(dst.dtype);
    auto* mine = reinterpret_cast<std::uint32_t*>(a.srcs.back().data);
    for (std::int64_t q = 0; q < g; ++q) {
      const int sender = group[static_cast<std::size_t>(q)];
      const StepArrival& s = member(sender);
      const VChunk c = v_chunk(*a.k, op, reinterpret_cast<const std::uint32_t*>(s.srcs.back().data), mine,
                               static_cast<int>(q), static_cast<int>(p), static_cast<int>(g),
                               shape_elements(s.srcs[0].shape), shape_elements(dst.shape), sender, me);
      std::memcpy(dst.data + c.dst_offset * eb, s.srcs[0].data + c.src_offset * eb, static_cast<std::size_t>(c.count * eb));
      if (!op.recv_counts_known) mine[2 * g + q] = static_cast<std::uint32_t>(c.count);  // row 2: received counts
    }
    return;
  }
  for (std::size_t i = 0; i < a.srcs.size(); ++i) {
    const TensorBinding& dst = a.dsts[i];
    const DType dt = dst.dtype;
    const int eb = dtype_bytes(dt);
    std::vector<const std::byte*> srcs;
    for (int m : group) srcs.push_back(member(m).srcs[i].data);
    switch (op.kind) {
      case Kind::all_reduce: {  // reduce-scatter of group-size chunks, then each gathers the others'
        const std::int64_t n = shape_elements(dst.shape), c = (n + g - 1) / g;
        auto begin = [&](std::int64_t q) { return std::min(q * c, n); };
        if (phase == 0) {
          reduce_range(dt, reduce_op_of(op.op), srcs, begin(p), dst.data, begin(p), begin(p + 1) - begin(p));
        } else {
          for (std::int64_t q = 0; q < g; ++q) {
            if (q == p) continue;
            std::memcpy(dst.data + begin(q) * eb, member(group[static_cast<std::size_t>(q)]).dsts[i].data + begin(q) * eb,
                        static_cast<std::size_t>((begin(q + 1) - begin(q)) * eb));
          }
        }
        break;
      }
      case Kind::all_gather: {
        if (phase != 0) break;
        const Shape& s = a.srcs[i].shape;
        for (std::int64_t q = 0; q < g; ++q) {
          std::vector<std::int64_t> at_dst(s.size(), 0);
          at_dst[static_cast<std::size_t>(op.dim)] = q * s[static_cast<std::size_t>(op.dim)];
          copy_box({srcs[static_cast<std::size_t>(q)], s}, std::vector<std::int64_t>(s.size(), 0), {dst.data, dst.shape},
                   at_dst, s, eb);
        }
        break;
      }
      case Kind::reduce_scatter: {  // dim 0: part p is a contiguous run of the src
        if (phase != 0) break;
        const std::int64_t part = shape_elements(dst.shape);
        reduce_range(dt, reduce_op_of(op.op), srcs, p * part, dst.data, 0, part);
        break;
      }
      case Kind::all_to_all: {  // dim 0: part q of the dst is part p of member q's src
        if (phase != 0) break;
        const std::int64_t part = shape_elements(dst.shape) / g * eb;
        for (std::int64_t q = 0; q < g; ++q)
          std::memcpy(dst.data + q * part, srcs[static_cast<std::size_t>(q)] + p * part, static_cast<std::size_t>(part));
        break;
      }
      case Kind::permute_implicit: {  // the ring of the group: from the predecessor
        if (phase != 0) break;
        std::memcpy(dst.data, srcs[static_cast<std::size_t>((p + g - 1) % g)], static_cast<std::size_t>(bytes_of(dst)));
        break;
      }
      case Kind::permute:
      case Kind::permute_implicit_reduce:
      case Kind::all_gather_v:
      case Kind::all_to_all_v:
      case Kind::core_barrier:
      case Kind::sendrecv: break;  // above
    }
  }
}

namespace {

class Link final : public RankLink {
 public:
  Link(WorldCollectives::State& s, int local) : s_(s), local_(local) {}
  int rank() const override { return s_.first + local_; }

  void collective(const ir::KernelIR& k, int op, std::span<const TensorBinding> srcs, std::span<const TensorBinding> dsts,
                  std::span<const std::int64_t> pid) override {
    StepArrival mine;
    mine.k = &k;
    mine.op = op;
    mine.ordinal = 0;
    for (int i = 0; i < op; ++i) mine.ordinal += std::holds_alternative<ir::CollectiveOp>(k.body[static_cast<std::size_t>(i)]);
    mine.srcs.assign(srcs.begin(), srcs.end());
    mine.dsts.assign(dsts.begin(), dsts.end());
    for (const TensorBinding& b : mine.srcs) require_dense(k, b);
    for (const TensorBinding& b : mine.dsts) require_dense(k, b);
    mine.pid.assign(pid.begin(), pid.end());
    arrive(std::move(mine));
    const StepArrival& a = s_.at[static_cast<std::size_t>(local_)];
    const bool here = !s_.remote || !s_.needs_remote(local_, a);  // else the server did this rank's part
    const int phases = a.collective().kind == Kind::all_reduce ? 2 : 1;
    for (int phase = 0; phase < phases; ++phase) {
      if (here) s_.compute(local_, phase);
      s_.barrier();  // no rank reads a peer's buffer of the next phase before it is written
    }
    // The last barrier also keeps every rank from writing its srcs again while a peer reads them.
  }

 private:
  void arrive(StepArrival mine) {
    std::unique_lock lock(s_.mu);
    if (s_.stopped) throw RankStopped();
    if (s_.done_count > 0) {
      const int gone = static_cast<int>(std::find(s_.done.begin(), s_.done.end(), 1) - s_.done.begin());
      s_.mismatch(fmt::format("{} but {} has finished its instances", s_.where(mine, local_), s_.member_name(gone)),
                  mine.collective().loc);
    }
    s_.at[static_cast<std::size_t>(local_)] = std::move(mine);
    const std::uint64_t step = s_.steps;
    if (++s_.arrived == s_.locals) {
      s_.check_same_step();
      s_.check_chunks();
      s_.arrived = 0;
      if (s_.remote) {
        s_.step_ready = true;  // the server checks with the other processes and moves what crosses them
        s_.cv.notify_all();
      } else {
        ++s_.steps;
        s_.cv.notify_all();
        return;
      }
    }
    s_.wait(lock, [&] { return s_.steps != step; });
  }

  WorldCollectives::State& s_;
  int local_;
};

}  // namespace

WorldCollectives::WorldCollectives(std::string kernel, int world_size, int first_local,
                                   std::vector<std::vector<std::vector<int>>> own_groups, Communicator* processes,
                                   bool logical_core)
    : s_(std::make_unique<State>()) {
  s_->logical_core = logical_core;
  s_->kernel = std::move(kernel);
  s_->world = world_size;
  s_->first = first_local;
  s_->locals = static_cast<int>(own_groups.size());
  s_->own_groups = std::move(own_groups);
  s_->at.resize(static_cast<std::size_t>(s_->locals));
  s_->done.assign(static_cast<std::size_t>(s_->locals), 0);
  if (processes != nullptr) s_->remote = make_kernel_collective_transport(*processes);
  for (int r = 0; r < s_->locals; ++r) links_.push_back(std::make_unique<Link>(*s_, r));
}

WorldCollectives::~WorldCollectives() = default;

RankLink& WorldCollectives::link(int local) { return *links_.at(static_cast<std::size_t>(local)); }

void WorldCollectives::finished(int local) {
  std::unique_lock lock(s_->mu);
  s_->done[static_cast<std::size_t>(local)] = 1;
  ++s_->done_count;
  s_->cv.notify_all();
  if (s_->stopped || s_->arrived == 0) return;
  for (int r = 0; r < s_->locals; ++r) {
    if (s_->done[static_cast<std::size_t>(r)] || r == local) continue;
    const StepArrival& a = s_->at[static_cast<std::size_t>(r)];
    if (a.k == nullptr) continue;
    // Worded as the arrival that finds it finished is: the message does not depend on which came first.
    s_->mismatch(fmt::format("{} but {} has finished its instances", s_->where(a, r), s_->member_name(local)),
                 a.collective().loc);
  }
}

void WorldCollectives::failed(int local, const std::string& message) {
  std::lock_guard lock(s_->mu);
  if (s_->failure.empty()) s_->failure = fmt::format("{} failed: {}", s_->member_name(local), message);
  // (a mismatch this process found is already recorded, as it was raised)
  s_->stopped = true;
  s_->cv.notify_all();
}

void WorldCollectives::serve() {
  if (!s_->remote) return;
  State& s = *s_;
  auto stop_all = [&] {
    std::lock_guard lock(s.mu);
    s.stopped = true;
    s.cv.notify_all();
  };
  for (;;) {
    StepStatus status;
    {
      std::unique_lock lock(s.mu);
      s.cv.wait(lock, [&] { return s.stopped || s.step_ready || s.done_count == s.locals; });
      if (s.stopped) status = {StepStatus::Kind::failed, s.failure.empty() ? "a rank stopped" : s.failure, nullptr};
      else if (s.step_ready) status = {StepStatus::Kind::at_step, {}, &s.at.front()};
      else status = {StepStatus::Kind::done, {}, nullptr};
    }
    try {
      // Every process says where its ranks are: all at the same step, or all done.
      if (!s.remote->agree(s.kernel, s.first, status)) return;  // all done, or this process failed
      // The parts whose groups cross processes, while every local rank waits at the step.
      s.remote->run_step(s.first, s.at, s.own_groups);
    } catch (...) {
      stop_all();
      throw;
    }
    std::lock_guard lock(s.mu);
    s.step_ready = false;
    ++s.steps;
    s.cv.notify_all();
  }
}

}  // namespace nki
