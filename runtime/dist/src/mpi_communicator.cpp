/** \file Collectives over MPI: shapes exchanged and checked everywhere, data moved per replica group. */
#include "mpi_communicator.h"

#include "mpi_messages.h"
#include "mpi_support.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "collective_reduction.h"
#include "core_collectives.h"
#include "nki/error.h"

namespace nki {

void check_mpi(int rc, const char* call) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw InternalError(fmt::format("{} failed: {}", call, std::string(text, static_cast<std::size_t>(len))));
  }
}

namespace {
std::atomic<std::size_t> message_limit{static_cast<std::size_t>(INT_MAX)};
}  // namespace

std::size_t mpi_message_limit() { return message_limit.load(); }
void set_mpi_message_limit(std::size_t bytes) { message_limit.store(bytes); }

namespace {

constexpr char kSep = '\x1f';

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

/** A UserError as text another rank can raise again, identical. */
std::string encode_error(const UserError& e) {
  return fmt::format("U{}{}{}{}{}{}{}{}{}", e.name(), kSep, e.kernel(), kSep, e.location().file, kSep,
                     e.location().line, kSep, e.detail());
}

[[noreturn]] void raise_encoded(const std::string& text) {
  if (!text.empty() && text[0] == 'U') {
    const std::vector<std::string> f = split(text.substr(1), kSep);
    if (f.size() == 5) throw UserError(f[0], f[1], {f[2], std::stoi(f[3])}, f[4]);
  }
  throw InternalError(text.substr(1));
}

/** The message of an encoded failure, as its own rank printed it. */
std::string message_of(const std::string& text) {
  try {
    raise_encoded(text);
  } catch (const std::exception& e) {
    return e.what();
  }
}

/** Runs `f`, returning "" or its failure as encoded text (for raise_encoded on any rank). */
std::string outcome_of(const std::function<void()>& f) {
  try {
    f();
    return {};
  } catch (const UserError& e) {
    return encode_error(e);
  } catch (const std::exception& e) {
    return std::string("I") + e.what();
  }
}

/** This rank's buffers as text: count, a local device error, and each shape and dtype. */
std::string describe(const char* name, const std::vector<Tensor>& buffers, std::size_t first_id) {
  std::string device_error;
  if (!buffers.empty()) device_error = outcome_of([&] { check_local_devices(name, buffers, first_id); });
  std::string s = fmt::format("{}{}{}", buffers.size(), kSep, device_error);
  for (const Tensor& t : buffers) s += fmt::format("{}{} {}", kSep, static_cast<int>(t.dtype()), fmt::join(t.shape(), " "));
  return s;
}

void require_main_thread(const char* name) {
  int main = 0;
  MPI_Is_thread_main(&main);
  if (!main) {
    collective_error(name, "err_mpi_thread",
                     "under MPI, collectives, launches and compiles run on the thread that created the nki::MpiWorld");
  }
}

}  // namespace

MpiCommunicator::MpiCommunicator() {
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &world_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_rank(world_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(world_, &ranks_), "MPI_Comm_size");
  check_mpi(MPI_Comm_split_type(world_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_), "MPI_Comm_split_type");
}

MpiCommunicator::~MpiCommunicator() {
  for (auto& [key, comms] : group_comms_)
    for (MPI_Comm& c : comms)
      if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  for (auto& [key, c] : set_comms_) MPI_Comm_free(&c);
  MPI_Comm_free(&node_);
  MPI_Comm_free(&world_);
}

std::vector<std::string> MpiCommunicator::all_gather_text(const std::string& mine) { return all_gather_text(world_, mine); }

MPI_Comm MpiCommunicator::process_set_comm(const std::vector<int>& ranks) {
  auto it = set_comms_.find(ranks);
  if (it != set_comms_.end()) return it->second;
  MPI_Group world_group = MPI_GROUP_NULL, set = MPI_GROUP_NULL;
  check_mpi(MPI_Comm_group(world_, &world_group), "MPI_Comm_group");
  check_mpi(MPI_Group_incl(world_group, static_cast<int>(ranks.size()), ranks.data(), &set), "MPI_Group_incl");
  MPI_Comm comm = MPI_COMM_NULL;
  const int rc = MPI_Comm_create_group(world_, set, 0, &comm);
  MPI_Group_free(&set);
  MPI_Group_free(&world_group);
  check_mpi(rc, "MPI_Comm_create_group");
  return set_comms_.emplace(ranks, comm).first->second;
}

std::vector<std::string> MpiCommunicator::all_gather_text(MPI_Comm comm, const std::string& mine) {
  require_main_thread("mpi");
  int size = 0;
  MPI_Comm_size(comm, &size);
  const std::uint64_t len = mine.size();
  std::vector<std::uint64_t> lens(static_cast<std::size_t>(size));
  check_mpi(MPI_Allgather(&len, 1, MPI_UINT64_T, lens.data(), 1, MPI_UINT64_T, comm), "MPI_Allgather");
  std::vector<std::size_t> counts(lens.begin(), lens.end()), displs;
  std::size_t total = 0;
  for (std::size_t c : counts) {
    displs.push_back(total);
    total += c;
  }
  std::string all(total, '\0');
  allgatherv_bytes(reinterpret_cast<const std::byte*>(mine.data()), reinterpret_cast<std::byte*>(all.data()), counts,
                   displs, comm);
  std::vector<std::string> out;
  for (std::size_t r = 0; r < counts.size(); ++r) out.push_back(all.substr(displs[r], counts[r]));
  return out;
}

CollectivePlan MpiCommunicator::world_plan(const char* name, const std::vector<Tensor>& buffers,
                                           const GroupList& groups) {
  require_main_thread(name);
  const std::size_t n = buffers.size();
  const std::vector<std::string> all = all_gather_text(describe(name, buffers, static_cast<std::size_t>(rank_) * n));
  std::vector<BufferInfo> world;
  for (int r = 0; r < ranks_; ++r) {
    const std::vector<std::string> f = split(all[static_cast<std::size_t>(r)], kSep);
    const std::size_t count = std::stoul(f[0]);
    if (count != n) {
      // Every rank sees the same first mismatch, so every rank says the same.
      const std::size_t first = std::stoul(split(all[0], kSep)[0]);
      for (int q = 1; q < ranks_; ++q) {
        const std::size_t c = std::stoul(split(all[static_cast<std::size_t>(q)], kSep)[0]);
        if (c != first) {
          collective_error(name, "err_collective_shape_mismatch",
                           fmt::format("rank {} passes {} buffers but rank 0 passes {}; every rank passes one per "
                                       "device it runs",
                                       q, c, first));
        }
      }
    }
    if (!f[1].empty()) raise_encoded(f[1]);
    for (std::size_t i = 2; i < f.size(); ++i) {
      std::istringstream in(f[i]);
      int dtype = 0;
      in >> dtype;
      BufferInfo b{{}, static_cast<DType>(dtype)};
      for (std::int64_t d; in >> d;) b.shape.push_back(d);
      world.push_back(std::move(b));
    }
  }
  check_same_buffers(name, world);
  CollectivePlan p = make_plan(name, world, groups);
  p.first_local = static_cast<std::size_t>(rank_) * n;
  p.locals = n;
  p.in.assign(world.size(), nullptr);
  for (std::size_t i = 0; i < n; ++i) p.in[p.first_local + i] = buffers[i].data();
  p.device = &buffers.front().device();
  return p;
}

const std::vector<MPI_Comm>& MpiCommunicator::group_comms(const CollectivePlan& p) {
  const auto key = std::make_pair(p.groups, p.locals);
  auto it = group_comms_.find(key);
  if (it != group_comms_.end()) return it->second;
  // MPI_Comm_split is collective over the world: every rank makes every group's, in order.
  std::vector<MPI_Comm> comms(p.groups.size(), MPI_COMM_NULL);
  for (std::size_t g = 0; g < p.groups.size(); ++g) {
    bool member = false;
    for (int d : p.groups[g]) member = member || static_cast<std::size_t>(d) / p.locals == static_cast<std::size_t>(rank_);
    check_mpi(MPI_Comm_split(world_, member ? 0 : MPI_UNDEFINED, rank_, &comms[g]), "MPI_Comm_split");
  }
  return group_comms_.emplace(key, std::move(comms)).first->second;
}

namespace {

/** The members of a group each rank of its communicator owns, ranks ascending, members in group order. */
std::vector<std::vector<std::size_t>> members_by_rank(const CollectivePlan& p, const std::vector<int>& group,
                                                      std::vector<int>* comm_ranks) {
  std::vector<int> owners;
  for (int d : group) owners.push_back(static_cast<int>(static_cast<std::size_t>(d) / p.locals));
  std::vector<int> ranks = owners;
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::vector<std::vector<std::size_t>> by(ranks.size());
  for (std::size_t k = 0; k < group.size(); ++k) {
    const auto at = std::lower_bound(ranks.begin(), ranks.end(), owners[k]) - ranks.begin();
    by[static_cast<std::size_t>(at)].push_back(k);  // positions in the group
  }
  *comm_ranks = std::move(ranks);
  return by;
}

}  // namespace

void MpiCommunicator::fetch_group_inputs(CollectivePlan& p, std::vector<std::vector<std::byte>>& storage) {
  const std::vector<MPI_Comm>& comms = group_comms(p);
  const auto bytes = static_cast<std::size_t>(shape_elements(p.shape) * dtype_bytes(p.dtype));
  for (std::size_t g = 0; g < p.groups.size(); ++g) {
    if (comms[g] == MPI_COMM_NULL) continue;
    const std::vector<int>& group = p.groups[g];
    std::vector<int> comm_ranks;
    const std::vector<std::vector<std::size_t>> by = members_by_rank(p, group, &comm_ranks);
    std::vector<std::size_t> counts, displs;
    std::size_t total = 0;
    std::vector<std::byte> mine;
    for (std::size_t r = 0; r < by.size(); ++r) {
      counts.push_back(by[r].size() * bytes);
      displs.push_back(total);
      total += by[r].size() * bytes;
      if (comm_ranks[r] != rank_) continue;
      for (std::size_t k : by[r]) {
        const std::byte* src = p.in[static_cast<std::size_t>(group[k])];
        mine.insert(mine.end(), src, src + bytes);
      }
    }
    std::vector<std::byte>& all = storage.emplace_back(total);
    allgatherv_bytes(mine.data(), all.data(), counts, displs, comms[g]);
    for (std::size_t r = 0; r < by.size(); ++r) {
      for (std::size_t i = 0; i < by[r].size(); ++i) {
        const auto d = static_cast<std::size_t>(group[by[r][i]]);
        if (p.in[d] == nullptr) p.in[d] = all.data() + displs[r] + i * bytes;
      }
    }
  }
}

std::vector<Tensor> MpiCommunicator::all_reduce(const std::vector<Tensor>& buffers, ReduceOp op,
                                                const GroupList& groups) {
  const CollectivePlan p = world_plan("all_reduce", buffers, groups);
  const std::vector<MPI_Comm>& comms = group_comms(p);
  std::vector<Tensor> out = allocate_outputs(p, p.shape);
  const std::int64_t n = shape_elements(p.shape);
  const int eb = dtype_bytes(p.dtype);
  for (std::size_t g = 0; g < p.groups.size(); ++g) {
    if (comms[g] == MPI_COMM_NULL) continue;
    const std::vector<int>& group = p.groups[g];
    std::vector<int> comm_ranks;
    const std::vector<std::vector<std::size_t>> by = members_by_rank(p, group, &comm_ranks);
    const auto R = static_cast<std::int64_t>(by.size());
    const auto me = static_cast<std::size_t>(std::find(comm_ranks.begin(), comm_ranks.end(), rank_) - comm_ranks.begin());
    // Reduce-scatter across ranks: rank j of the group's communicator reduces chunk j of
    // every member, in group order; then the reduced chunks are all-gathered.
    const std::int64_t chunk = (n + R - 1) / R;
    auto begin_of = [&](std::int64_t j) { return std::min(j * chunk, n); };
    auto len_of = [&](std::int64_t j) { return begin_of(j + 1) - begin_of(j); };
    std::vector<std::size_t> send_counts, send_displs, recv_counts, recv_displs;
    std::vector<std::byte> send, recv;
    const std::byte* send_from = p.in[static_cast<std::size_t>(group[by[me].front()])];
    if (by[me].size() == 1) {  // one local member: its chunks go straight from its input
      for (std::int64_t j = 0; j < R; ++j) {
        send_displs.push_back(static_cast<std::size_t>(begin_of(j) * eb));
        send_counts.push_back(static_cast<std::size_t>(len_of(j) * eb));
      }
    } else {  // several: packed chunk by chunk, members in group order
      for (std::int64_t j = 0; j < R; ++j) {
        send_displs.push_back(send.size());
        for (std::size_t k : by[me]) {
          const std::byte* src = p.in[static_cast<std::size_t>(group[k])] + begin_of(j) * eb;
          send.insert(send.end(), src, src + len_of(j) * eb);
        }
        send_counts.push_back(send.size() - send_displs.back());
      }
      send_from = send.data();
    }
    const auto my_chunk = static_cast<std::int64_t>(me);
    std::size_t recv_total = 0;
    for (std::int64_t i = 0; i < R; ++i) {
      recv_displs.push_back(recv_total);
      recv_total += by[static_cast<std::size_t>(i)].size() * static_cast<std::size_t>(len_of(my_chunk) * eb);
      recv_counts.push_back(recv_total - recv_displs.back());
    }
    recv.resize(recv_total);
    alltoallv_bytes(send_from, send_counts, send_displs, recv.data(), recv_counts, recv_displs, comms[g]);
    std::vector<const std::byte*> srcs(group.size());
    for (std::size_t i = 0; i < by.size(); ++i)
      for (std::size_t m = 0; m < by[i].size(); ++m)
        srcs[by[i][m]] = recv.data() + recv_displs[i] + m * static_cast<std::size_t>(len_of(my_chunk) * eb);
    std::vector<std::byte> reduced(static_cast<std::size_t>(len_of(my_chunk) * eb));
    reduce_range(p.dtype, op, srcs, 0, reduced.data(), 0, len_of(my_chunk));
    std::vector<std::size_t> counts, displs;
    for (std::int64_t j = 0; j < R; ++j) {
      counts.push_back(static_cast<std::size_t>(len_of(j) * eb));
      displs.push_back(static_cast<std::size_t>(begin_of(j) * eb));
    }
    // Gathered straight into the first local member's output, then copied to the others.
    const std::size_t first = static_cast<std::size_t>(group[by[me].front()]) - p.first_local;
    allgatherv_bytes(reduced.data(), out[first].data(), counts, displs, comms[g]);
    for (std::size_t m = 1; m < by[me].size(); ++m) {
      const std::size_t local = static_cast<std::size_t>(group[by[me][m]]) - p.first_local;
      std::memcpy(out[local].data(), out[first].data(), static_cast<std::size_t>(n * eb));
    }
  }
  return out;
}

std::vector<Tensor> MpiCommunicator::on_group_inputs(const char* name, const std::vector<Tensor>& buffers,
                                                     const GroupList& groups,
                                                     const std::function<void(const CollectivePlan&)>& check,
                                                     const std::function<std::vector<Tensor>(const CollectivePlan&)>& run) {
  CollectivePlan p = world_plan(name, buffers, groups);
  check(p);  // refused on every rank alike, before any data moves
  std::vector<std::vector<std::byte>> storage;
  fetch_group_inputs(p, storage);
  return run(p);
}

std::vector<Tensor> MpiCommunicator::all_gather(const std::vector<Tensor>& buffers, int dim, const GroupList& groups,
                                                GatherMode mode) {
  return on_group_inputs(
      "all_gather", buffers, groups, [&](const CollectivePlan& p) { (void)all_gather_shape(p, dim, mode); },
      [&](const CollectivePlan& p) { return all_gather_on_cores(p, dim, mode); });
}

std::vector<Tensor> MpiCommunicator::reduce_scatter(const std::vector<Tensor>& buffers, ReduceOp op, int dim,
                                                    const GroupList& groups) {
  return on_group_inputs(
      "reduce_scatter", buffers, groups, [&](const CollectivePlan& p) { (void)reduce_scatter_shape(p, dim); },
      [&](const CollectivePlan& p) { return reduce_scatter_on_cores(p, op, dim); });
}

std::vector<Tensor> MpiCommunicator::all_to_all(const std::vector<Tensor>& buffers, int split_dim, int concat_dim,
                                                const GroupList& groups) {
  return on_group_inputs(
      "all_to_all", buffers, groups,
      [&](const CollectivePlan& p) { (void)all_to_all_shape(p, split_dim, concat_dim); },
      [&](const CollectivePlan& p) { return all_to_all_on_cores(p, split_dim, concat_dim); });
}

std::vector<Tensor> MpiCommunicator::collective_permute(const std::vector<Tensor>& buffers,
                                                        const std::vector<std::pair<int, int>>& source_target_pairs) {
  CollectivePlan p = world_plan("collective_permute", buffers, {});
  const std::vector<int> source_of = permute_sources(p.devices, source_target_pairs);
  const auto bytes = static_cast<std::size_t>(shape_elements(p.shape) * dtype_bytes(p.dtype));
  auto owner = [&](std::size_t d) { return static_cast<int>(d / p.locals); };
  std::vector<std::vector<std::byte>> storage;
  std::vector<MPI_Request> requests;
  storage.reserve(p.devices);
  for (std::size_t t = 0; t < p.devices; ++t) {
    const int s = source_of[t];
    if (s < 0 || owner(static_cast<std::size_t>(s)) == owner(t)) continue;
    const auto src = static_cast<std::size_t>(s);
    if (owner(src) == rank_) {
      isend_bytes(p.in[src], bytes, owner(t), s, world_, requests);
    } else if (owner(t) == rank_) {
      std::vector<std::byte>& buf = storage.emplace_back(bytes);
      irecv_bytes(buf.data(), bytes, owner(src), s, world_, requests);
      p.in[src] = buf.data();
    }
  }
  wait_all(requests);
  return collective_permute_on_cores(p, source_of);
}

void MpiCommunicator::compile_in_turns(const std::filesystem::path& cache_directory,
                                       const std::function<void()>& compile) {
  // The ranks of this host that share a cache directory: the lowest compiles first.
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::weakly_canonical(cache_directory, ec);
  if (ec) dir = cache_directory;
  const std::vector<std::string> dirs = all_gather_text(node_, dir.string());
  int node_rank = 0;
  MPI_Comm_rank(node_, &node_rank);
  const auto leader = static_cast<std::size_t>(std::find(dirs.begin(), dirs.end(), dir.string()) - dirs.begin());
  const bool leads = leader == static_cast<std::size_t>(node_rank);
  const std::string first = leads ? outcome_of(compile) : std::string();
  const std::vector<std::string> firsts = all_gather_text(node_, leads ? first : std::string("-"));
  std::string mine = first;
  if (!leads) mine = firsts[leader].empty() ? outcome_of(compile) : firsts[leader];
  // Every rank learns whether any failed, so none waits in a later collective for one that threw.
  const std::vector<std::string> outcomes = all_gather_text(mine);
  if (!mine.empty()) raise_encoded(mine);
  for (std::size_t r = 0; r < outcomes.size(); ++r) {
    if (outcomes[r].empty()) continue;
    throw UserError("err_rank_failed", "", {},
                    fmt::format("rank {} of {} failed to compile: {}", r, outcomes.size(), message_of(outcomes[r])));
  }
}

}  // namespace nki
