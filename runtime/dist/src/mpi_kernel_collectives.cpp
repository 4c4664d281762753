/**
 * \file A world launch's collectives between processes over MPI: each step's status agreed by
 * every process, then the groups that cross processes moved with the matching MPI collective
 * (all_gather: an all-gather; all_to_all and reduce_scatter: an all-to-all of exactly the parts
 * each process needs; all_reduce: that reduce-scatter, then an all-gather of the reduced parts;
 * permutes: point to point; every message of any size, mpi_messages.h). Reductions run here in group order, so the bits are the in-process ones.
 */
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "collective_reduction.h"
#include "core/box_copy.h"
#include "kernel_collective_transport.h"
#include "mpi_communicator.h"
#include "mpi_messages.h"
#include "mpi_support.h"
#include "nki/error.h"
#include "v_chunks.h"

namespace nki {

namespace {

using Kind = ir::CollectiveOp::Kind;

ReduceOp reduce_op_of(ir::ReduceKind k) {
  return k == ir::ReduceKind::max ? ReduceOp::max : k == ir::ReduceKind::min ? ReduceOp::min : ReduceOp::sum;
}

std::int64_t bytes_of(const TensorBinding& b) { return shape_elements(b.shape) * dtype_bytes(b.dtype); }

/** A piece of bytes one process sends another in an MPI_Alltoallv (both sides list the same pieces in the same order). */
struct Piece {
  const std::byte* from = nullptr;  ///< sender: where the bytes are
  std::byte* to = nullptr;          ///< receiver: where they go
  std::int64_t bytes = 0;
};

/**
 * Received pieces to reduce or place: one uninitialized block carved in the order the pieces
 * are listed, so an exchange can receive straight into it (no zero-fill, no unpacking copy).
 */
class Staging {
 public:
  explicit Staging(std::size_t bytes) : block_(std::make_unique_for_overwrite<std::byte[]>(bytes)), size_(bytes) {}
  std::byte* carve(std::int64_t bytes) {
    std::byte* p = block_.get() + used_;
    used_ += static_cast<std::size_t>(bytes);
    if (used_ > size_) throw InternalError("a collective's staging block is too small");
    return p;
  }

 private:
  std::unique_ptr<std::byte[]> block_;
  std::size_t size_, used_ = 0;
};

/** Whether the pieces, in order, are one run of memory (`to` or `from`): then MPI can use it in place. */
template <class Ptr>
bool one_run(const std::vector<std::vector<Piece>>& lists, Ptr Piece::*ptr) {
  const std::byte* next = nullptr;
  for (const auto& pieces : lists)
    for (const Piece& p : pieces) {
      if (next != nullptr && p.*ptr != next) return false;
      next = p.*ptr + p.bytes;
    }
  return true;
}

class MpiKernelCollectives final : public KernelCollectiveTransport {
 public:
  explicit MpiKernelCollectives(MpiCommunicator& c) : c_(c) {}

  bool agree(const std::string& kernel, int first_local, const StepStatus& mine) override {
    std::string text = "D";
    if (mine.kind == StepStatus::Kind::failed) text = "F" + mine.failure;
    if (mine.kind == StepStatus::Kind::at_step) {
      const StepArrival& a = *mine.step;
      const ir::CollectiveOp& op = a.collective();
      text = fmt::format("S{} [{}]\x1frank {} is at {} ({}:{}) in instance [{}]", a.op, fmt::join(a.pid, ","),
                         first_local, ir::collective_name(op.kind), op.loc.file, op.loc.line, fmt::join(a.pid, ","));
    }
    const std::vector<std::string> all = c_.all_gather_text(text);
    if (mine.kind == StepStatus::Kind::failed) return false;
    for (std::size_t p = 0; p < all.size(); ++p) {
      if (all[p][0] != 'F') continue;
      throw UserError("err_rank_failed", kernel, {},
                      fmt::format("{} (process {} of {}); every rank stops", all[p].substr(1), p, all.size()));
    }
    auto key = [](const std::string& s) { return s.substr(0, s.find('\x1f')); };
    auto where = [](const std::string& s) {
      const auto at = s.find('\x1f');
      return at == std::string::npos ? std::string("its ranks have finished their instances") : s.substr(at + 1);
    };
    for (std::size_t p = 1; p < all.size(); ++p) {
      if (key(all[p]) == key(all[0])) continue;
      throw UserError("err_collective_mismatch", kernel, {},
                      fmt::format("in process 0 {} but in process {} {}; every rank makes the same collectives in the "
                                  "same order, or they would wait forever",
                                  where(all[0]), p, where(all[p])));
    }
    return all[0][0] == 'S';
  }

  void run_step(int first_local, const std::vector<StepArrival>& at,
                const std::vector<std::vector<std::vector<int>>>& own_groups) override {
    first_ = first_local;
    locals_ = static_cast<int>(at.size());
    at_ = &at;
    const ir::CollectiveOp& op = at.front().collective();
    const int ordinal = at.front().ordinal;
    if (op.kind == Kind::permute) {
      permute(op);
      return;
    }
    // Each group that crosses processes once, in ascending order of its first rank on every process.
    std::set<std::vector<int>> crossing;
    for (int r = 0; r < locals_; ++r) {
      const std::vector<int>& g = own_groups[static_cast<std::size_t>(r)][static_cast<std::size_t>(ordinal)];
      if (part_crosses_processes(first_ + r, first_, locals_, op, g)) crossing.insert(g);
    }
    std::vector<std::vector<int>> groups(crossing.begin(), crossing.end());
    std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
      return *std::min_element(a.begin(), a.end()) < *std::min_element(b.begin(), b.end());
    });
    for (const std::vector<int>& g : groups) {
      if (op.kind == Kind::permute_implicit_reduce) ring_reduce(op, g);
      else if (op.metadata >= 0) run_v(op, g);
      else
        for (std::size_t i = 0; i < at.front().srcs.size(); ++i) run_group(op, g, i);
    }
  }

 private:
  MpiCommunicator& c_;
  int first_ = 0, locals_ = 1;
  const std::vector<StepArrival>* at_ = nullptr;

  int owner(int rank) const { return rank / locals_; }
  bool local(int rank) const { return owner(rank) == c_.rank(); }
  const StepArrival& arrival(int rank) const { return (*at_)[static_cast<std::size_t>(rank - first_)]; }

  /** The group's processes (ascending) and, per process, the positions of its members in group order. */
  struct Layout {
    std::vector<int> procs;
    std::vector<std::vector<std::size_t>> positions;  ///< per process in `procs`
    std::size_t me = 0;                               ///< this process's index in `procs`
  };
  Layout layout(const std::vector<int>& g) const {
    Layout l;
    for (int m : g) l.procs.push_back(owner(m));
    std::sort(l.procs.begin(), l.procs.end());
    l.procs.erase(std::unique(l.procs.begin(), l.procs.end()), l.procs.end());
    l.positions.resize(l.procs.size());
    for (std::size_t k = 0; k < g.size(); ++k) {
      const auto at = std::lower_bound(l.procs.begin(), l.procs.end(), owner(g[k])) - l.procs.begin();
      l.positions[static_cast<std::size_t>(at)].push_back(k);
    }
    l.me = static_cast<std::size_t>(std::lower_bound(l.procs.begin(), l.procs.end(), c_.rank()) - l.procs.begin());
    return l;
  }

  /**
   * An all-to-all over `comm` (alltoallv_bytes): send[q] to process q, recv[q] from it. Pieces that are one run of
   * memory (a src's chunks in order; a Staging block) go to MPI in place; others through a copy.
   */
  static void alltoallv(MPI_Comm comm, const std::vector<std::vector<Piece>>& send,
                        const std::vector<std::vector<Piece>>& recv) {
    auto layout = [&](const std::vector<std::vector<Piece>>& lists, std::vector<std::size_t>& counts,
                      std::vector<std::size_t>& displs) {
      std::size_t total = 0;
      for (const auto& pieces : lists) {
        displs.push_back(total);
        for (const Piece& p : pieces) total += static_cast<std::size_t>(p.bytes);
        counts.push_back(total - displs.back());
      }
      return total;
    };
    std::vector<std::size_t> sc, sd, rc, rd;
    const std::size_t out_bytes = layout(send, sc, sd), in_bytes = layout(recv, rc, rd);
    auto first = [](const std::vector<std::vector<Piece>>& lists) -> const Piece* {
      for (const auto& pieces : lists)
        if (!pieces.empty()) return &pieces.front();
      return nullptr;
    };
    std::unique_ptr<std::byte[]> packed, scratch;
    const std::byte* out = nullptr;
    if (const Piece* f = first(send); f != nullptr && one_run(send, &Piece::from)) {
      out = f->from;
    } else {
      packed = std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(1, out_bytes));
      std::size_t at = 0;
      for (const auto& pieces : send)
        for (const Piece& p : pieces) {
          std::memcpy(packed.get() + at, p.from, static_cast<std::size_t>(p.bytes));
          at += static_cast<std::size_t>(p.bytes);
        }
      out = packed.get();
    }
    const Piece* in_first = first(recv);
    const bool in_place = in_first != nullptr && one_run(recv, &Piece::to);
    if (!in_place) scratch = std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(1, in_bytes));
    std::byte* in = in_place ? in_first->to : scratch.get();
    alltoallv_bytes(out, sc, sd, in, rc, rd, comm);
    if (in_place) return;
    std::size_t at = 0;
    for (const auto& pieces : recv)
      for (const Piece& p : pieces) {
        std::memcpy(p.to, in + at, static_cast<std::size_t>(p.bytes));
        at += static_cast<std::size_t>(p.bytes);
      }
  }

  void run_group(const ir::CollectiveOp& op, const std::vector<int>& g, std::size_t buf) {
    const Layout l = layout(g);
    const MPI_Comm comm = c_.process_set_comm(l.procs);
    const auto G = static_cast<std::int64_t>(g.size());
    const std::vector<std::size_t>& mine = l.positions[l.me];
    const TensorBinding& src0 = arrival(g[mine.front()]).srcs[buf];
    const TensorBinding& dst0 = arrival(g[mine.front()]).dsts[buf];
    const DType dt = dst0.dtype;
    const int eb = dtype_bytes(dt);
    auto src_of = [&](std::size_t k) { return arrival(g[k]).srcs[buf].data; };
    auto dst_of = [&](std::size_t k) { return arrival(g[k]).dsts[buf].data; };
    const std::size_t P = l.procs.size();
    std::vector<std::vector<Piece>> send(P), recv(P);
    switch (op.kind) {
      case Kind::all_gather: {
        // Every member's src reaches every process; each local member then joins them in group order.
        const std::int64_t bytes = bytes_of(src0);
        std::vector<const std::byte*> from(g.size(), nullptr);
        std::vector<std::size_t> counts, displs;
        std::vector<std::byte> out, in;
        for (std::size_t k : mine) out.insert(out.end(), src_of(k), src_of(k) + bytes);
        std::size_t total = 0;
        for (std::size_t q = 0; q < P; ++q) {
          displs.push_back(total);
          total += l.positions[q].size() * static_cast<std::size_t>(bytes);
          counts.push_back(total - displs.back());
        }
        in.resize(total);
        allgatherv_bytes(out.data(), in.data(), counts, displs, comm);
        for (std::size_t q = 0; q < P; ++q)
          for (std::size_t i = 0; i < l.positions[q].size(); ++i)
            from[l.positions[q][i]] = in.data() + displs[q] + i * static_cast<std::size_t>(bytes);
        const Shape& s = src0.shape;
        for (std::size_t p : mine) {
          const TensorBinding& dst = arrival(g[p]).dsts[buf];
          for (std::size_t k = 0; k < g.size(); ++k) {
            std::vector<std::int64_t> at(s.size(), 0);
            at[static_cast<std::size_t>(op.dim)] = static_cast<std::int64_t>(k) * s[static_cast<std::size_t>(op.dim)];
            copy_box({from[k], s}, std::vector<std::int64_t>(s.size(), 0), {dst.data, dst.shape}, at, s, eb);
          }
        }
        return;
      }
      case Kind::reduce_scatter:
      case Kind::all_to_all: {
        // Member p receives part p of every member's src (all_to_all places it, reduce_scatter reduces it).
        const std::int64_t part = (op.kind == Kind::reduce_scatter ? shape_elements(dst0.shape) : shape_elements(src0.shape) / G) * eb;
        std::map<std::pair<std::size_t, std::size_t>, const std::byte*> got;  // (p, k) -> part p of member k's src
        Staging in(mine.size() * g.size() * static_cast<std::size_t>(part));
        for (std::size_t q = 0; q < P; ++q) {
          for (std::size_t p : l.positions[q])
            for (std::size_t k : mine) send[q].push_back({src_of(k) + static_cast<std::int64_t>(p) * part, nullptr, part});
          for (std::size_t p : mine)
            for (std::size_t k : l.positions[q]) {
              std::byte* b = in.carve(part);
              recv[q].push_back({nullptr, b, part});
              got[{p, k}] = b;
            }
        }
        alltoallv(comm, send, recv);
        for (std::size_t p : mine) {
          if (op.kind == Kind::all_to_all) {
            for (std::size_t k = 0; k < g.size(); ++k)
              std::memcpy(dst_of(p) + static_cast<std::int64_t>(k) * part, got[{p, k}], static_cast<std::size_t>(part));
            continue;
          }
          std::vector<const std::byte*> parts;
          for (std::size_t k = 0; k < g.size(); ++k) parts.push_back(got[{p, k}]);
          reduce_range(dt, reduce_op_of(op.op), parts, 0, dst_of(p), 0, part / eb);
        }
        return;
      }
      case Kind::all_reduce: {
        // Process j reduces chunk j of every member (their reduce-scatter), then the chunks are all-gathered.
        const std::int64_t n = shape_elements(dst0.shape);
        const auto R = static_cast<std::int64_t>(P);
        const std::int64_t c = (n + R - 1) / R;
        auto begin = [&](std::int64_t j) { return std::min(j * c, n); };
        const auto me = static_cast<std::int64_t>(l.me);
        const std::int64_t len = begin(me + 1) - begin(me);
        std::vector<const std::byte*> parts(g.size(), nullptr);
        Staging in(g.size() * static_cast<std::size_t>(len * eb));
        for (std::size_t q = 0; q < P; ++q) {
          const auto j = static_cast<std::int64_t>(q);
          for (std::size_t k : mine) send[q].push_back({src_of(k) + begin(j) * eb, nullptr, (begin(j + 1) - begin(j)) * eb});
          for (std::size_t k : l.positions[q]) {
            std::byte* b = in.carve(len * eb);
            recv[q].push_back({nullptr, b, len * eb});
            parts[k] = b;
          }
        }
        alltoallv(comm, send, recv);
        const auto reduced = std::make_unique_for_overwrite<std::byte[]>(static_cast<std::size_t>(std::max<std::int64_t>(1, len * eb)));
        reduce_range(dt, reduce_op_of(op.op), parts, 0, reduced.get(), 0, len);
        std::vector<std::size_t> counts, displs;
        for (std::int64_t j = 0; j < R; ++j) {
          counts.push_back(static_cast<std::size_t>((begin(j + 1) - begin(j)) * eb));
          displs.push_back(static_cast<std::size_t>(begin(j) * eb));
        }
        std::byte* first = dst_of(mine.front());
        allgatherv_bytes(reduced.get(), first, counts, displs, comm);
        for (std::size_t i = 1; i < mine.size(); ++i)
          std::memcpy(dst_of(mine[i]), first, static_cast<std::size_t>(n * eb));
        return;
      }
      case Kind::permute_implicit: {
        // The ring of the group: member p's dst is member p-1's src, point to point where they are apart.
        std::vector<MPI_Request> requests;
        const std::int64_t bytes = bytes_of(dst0);
        for (std::size_t p = 0; p < g.size(); ++p) {
          const std::size_t from = (p + g.size() - 1) % g.size();
          const int src_rank = g[from], dst_rank = g[p];
          if (local(dst_rank) && local(src_rank)) {
            std::memcpy(dst_of(p), src_of(from), static_cast<std::size_t>(bytes));
          } else if (local(src_rank)) {
            isend_bytes(src_of(from), static_cast<std::size_t>(bytes), owner(dst_rank), src_rank, c_.world_comm(),
                        requests);
          } else if (local(dst_rank)) {
            irecv_bytes(dst_of(p), static_cast<std::size_t>(bytes), owner(src_rank), src_rank, c_.world_comm(),
                        requests);
          }
        }
        wait_all(requests);
        return;
      }
      case Kind::permute:
      case Kind::permute_implicit_reduce:
      case Kind::all_gather_v:
      case Kind::all_to_all_v: return;  // their own paths
      case Kind::core_barrier:
      case Kind::sendrecv: return;  // a plain launch's cores, never a world's (refused by plan_world)
    }
  }

  /** collective_permute_implicit_reduce: each sender reduces its two srcs and sends the result to its successor. */
  void ring_reduce(const ir::CollectiveOp& op, const std::vector<int>& g) {
    const TensorBinding& any = arrival(g[static_cast<std::size_t>(layout(g).positions[layout(g).me].front())]).dsts[0];
    const std::int64_t n = shape_elements(any.shape);
    const std::size_t bytes = static_cast<std::size_t>(n * dtype_bytes(any.dtype));
    std::vector<std::vector<std::byte>> sent;
    sent.reserve(g.size());
    std::vector<MPI_Request> requests;
    for (std::size_t p = 0; p < g.size(); ++p) {
      const int from = g[(p + g.size() - 1) % g.size()], to = g[p];
      if (!local(from) && !local(to)) continue;
      auto reduced_into = [&](std::byte* out) {
        const StepArrival& s = arrival(from);
        reduce_range(any.dtype, reduce_op_of(op.op), {s.srcs[0].data, s.srcs[1].data}, 0, out, 0, n);
      };
      if (local(from) && local(to)) {
        reduced_into(arrival(to).dsts[0].data);
      } else if (local(from)) {
        std::vector<std::byte>& out = sent.emplace_back(bytes);
        reduced_into(out.data());
        isend_bytes(out.data(), bytes, owner(to), from, c_.world_comm(), requests);
      } else {
        irecv_bytes(arrival(to).dsts[0].data, bytes, owner(from), from, c_.world_comm(), requests);
      }
    }
    wait_all(requests);
  }

  /**
   * all_gather_v / all_to_all_v across processes: first every member's metadata (MPI_Allgatherv),
   * so both ends know every chunk; then the chunks, MPI_Allgatherv (one chunk to all) or
   * MPI_Alltoallv (a chunk per receiver); each receiver places them and writes its counts.
   */
  void run_v(const ir::CollectiveOp& op, const std::vector<int>& g) {
    const Layout l = layout(g);
    const MPI_Comm comm = c_.process_set_comm(l.procs);
    const int G = static_cast<int>(g.size());
    const std::vector<std::size_t>& mine = l.positions[l.me];
    const std::size_t P = l.procs.size();
    const StepArrival& first = arrival(g[mine.front()]);
    const std::size_t meta_words = static_cast<std::size_t>(shape_elements(first.srcs.back().shape));
    // Every member's metadata and src size, in group order.
    std::vector<std::uint32_t> out;
    for (std::size_t k : mine) {
      const auto* m = reinterpret_cast<const std::uint32_t*>(arrival(g[k]).srcs.back().data);
      out.insert(out.end(), m, m + meta_words);
      out.push_back(static_cast<std::uint32_t>(shape_elements(arrival(g[k]).srcs[0].shape)));
    }
    std::vector<std::size_t> counts, displs;
    std::size_t total = 0;
    for (std::size_t q = 0; q < P; ++q) {
      displs.push_back(total * 4);
      total += l.positions[q].size() * (meta_words + 1);
      counts.push_back(total * 4 - displs.back());
    }
    std::vector<std::uint32_t> all(total);
    allgatherv_bytes(reinterpret_cast<const std::byte*>(out.data()), reinterpret_cast<std::byte*>(all.data()), counts,
                     displs, comm);
    std::vector<const std::uint32_t*> meta(g.size());
    std::vector<std::int64_t> src_elements(g.size());
    for (std::size_t q = 0; q < P; ++q)
      for (std::size_t i = 0; i < l.positions[q].size(); ++i) {
        const std::uint32_t* at = all.data() + displs[q] / 4 + i * (meta_words + 1);
        meta[l.positions[q][i]] = at;
        src_elements[l.positions[q][i]] = at[meta_words];
      }
    const TensorBinding& dst0 = first.dsts[0];
    const std::int64_t dst_elements = shape_elements(dst0.shape);
    const int eb = dtype_bytes(dst0.dtype);
    auto chunk = [&](std::size_t k, std::size_t p) {  // sender position k to receiver position p
      return v_chunk(*first.k, op, meta[k], meta[p], static_cast<int>(k), static_cast<int>(p), G, src_elements[k],
                     dst_elements, g[k], g[p]);
    };
    // Every process of the group holds every member's metadata now, so each checks every chunk, in
    // the same order: all raise the same error before any data moves, and none waits in an exchange.
    for (std::size_t p = 0; p < g.size(); ++p)
      for (std::size_t k = 0; k < g.size(); ++k) (void)chunk(k, p);
    std::vector<std::vector<Piece>> send(P), recv(P);
    std::size_t in_bytes = 0;  // what this process receives: its receivers' chunks (all_gather_v: one receiver's)
    for (std::size_t p : mine) {
      if (op.kind == Kind::all_gather_v && p != mine.front()) continue;
      for (std::size_t k = 0; k < g.size(); ++k) in_bytes += static_cast<std::size_t>(chunk(k, p).count * eb);
    }
    Staging in(in_bytes);
    std::vector<std::tuple<std::size_t, std::size_t, const std::byte*>> landed;  // (k, p, bytes received)
    for (std::size_t q = 0; q < P; ++q) {
      for (std::size_t p : l.positions[q])
        for (std::size_t k : mine) {
          if (op.kind == Kind::all_gather_v && p != l.positions[q].front()) continue;  // one chunk per process, for all
          const VChunk c = chunk(k, p);
          send[q].push_back({arrival(g[k]).srcs[0].data + c.src_offset * eb, nullptr, c.count * eb});
        }
      for (std::size_t p : mine) {
        if (op.kind == Kind::all_gather_v && p != mine.front()) continue;
        for (std::size_t k : l.positions[q]) {
          const VChunk c = chunk(k, p);
          std::byte* b = in.carve(c.count * eb);
          recv[q].push_back({nullptr, b, c.count * eb});
          landed.emplace_back(k, p, b);
        }
      }
    }
    alltoallv(comm, send, recv);  // all_gather_v too: each process's chunks to every process, once
    for (auto [k, p0, bytes] : landed) {
      for (std::size_t p : mine) {
        if (op.kind == Kind::all_to_all_v && p != p0) continue;  // all_gather_v: every local receiver takes it
        const VChunk c = chunk(k, p);
        std::memcpy(arrival(g[p]).dsts[0].data + c.dst_offset * eb, bytes, static_cast<std::size_t>(c.count * eb));
        if (!op.recv_counts_known)
          reinterpret_cast<std::uint32_t*>(arrival(g[p]).srcs.back().data)[2 * G + static_cast<int>(k)] = static_cast<std::uint32_t>(c.count);
      }
    }
  }

  /** collective_permute's pairs that touch this process, point to point (a local pair is a copy). */
  void permute(const ir::CollectiveOp& op) {
    std::vector<MPI_Request> requests;
    for (const auto& [s, t] : op.pairs) {
      if (!local(s) && !local(t)) continue;
      const bool crosses = !local(s) || !local(t);
      if (!crosses) {
        // A pair inside this process belongs to its ranks unless one of them crosses too.
        const bool t_crosses = part_crosses_processes(t, first_, locals_, op, {});
        if (t_crosses) std::memcpy(arrival(t).dsts[0].data, arrival(s).srcs[0].data, static_cast<std::size_t>(bytes_of(arrival(t).dsts[0])));
        continue;
      }
      if (local(s)) {
        const TensorBinding& b = arrival(s).srcs[0];
        isend_bytes(b.data, static_cast<std::size_t>(bytes_of(b)), owner(t), s, c_.world_comm(), requests);
      } else {
        const TensorBinding& b = arrival(t).dsts[0];
        irecv_bytes(b.data, static_cast<std::size_t>(bytes_of(b)), owner(s), s, c_.world_comm(), requests);
      }
    }
    wait_all(requests);
  }
};

}  // namespace

std::unique_ptr<KernelCollectiveTransport> make_mpi_kernel_collective_transport(Communicator& processes) {
  auto* mpi = dynamic_cast<MpiCommunicator*>(&processes);
  if (mpi == nullptr) return nullptr;
  return std::make_unique<MpiKernelCollectives>(*mpi);
}

}  // namespace nki
