/** \file MPI messages of any size: pieces of at most mpi_message_limit() bytes. */
#include "mpi_messages.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "mpi_message_limit.h"
#include "mpi_support.h"

namespace nki {

namespace {

/**
 * The tag of the point-to-point messages of allgatherv_bytes and alltoallv_bytes. Each call's
 * messages complete before it returns, and MPI matches one sender's messages in order, so
 * every call may use the same tag.
 */
constexpr int kCollectiveTag = 32000;

/** The largest piece: the limit, never more than an int counts. */
std::size_t piece_limit() { return std::clamp<std::size_t>(mpi_message_limit(), 1, static_cast<std::size_t>(INT_MAX)); }

}  // namespace

void isend_bytes(const std::byte* data, std::size_t bytes, int dest, int tag, MPI_Comm comm,
                 std::vector<MPI_Request>& requests) {
  const std::size_t limit = piece_limit();
  for (std::size_t at = 0; at < bytes; at += limit) {
    const auto n = static_cast<int>(std::min(limit, bytes - at));
    requests.emplace_back();
    check_mpi(MPI_Isend(data + at, n, MPI_BYTE, dest, tag, comm, &requests.back()), "MPI_Isend");
  }
}

void irecv_bytes(std::byte* data, std::size_t bytes, int source, int tag, MPI_Comm comm,
                 std::vector<MPI_Request>& requests) {
  const std::size_t limit = piece_limit();
  for (std::size_t at = 0; at < bytes; at += limit) {
    const auto n = static_cast<int>(std::min(limit, bytes - at));
    requests.emplace_back();
    check_mpi(MPI_Irecv(data + at, n, MPI_BYTE, source, tag, comm, &requests.back()), "MPI_Irecv");
  }
}

void wait_all(std::vector<MPI_Request>& requests) {
  check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  requests.clear();
}

void allgatherv_bytes(const std::byte* mine, std::byte* all, const std::vector<std::size_t>& counts,
                      const std::vector<std::size_t>& displs, MPI_Comm comm) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  const auto self = static_cast<std::size_t>(me);
  const std::size_t limit = piece_limit();
  bool fits = true;
  for (std::size_t r = 0; r < counts.size(); ++r) fits = fits && counts[r] <= limit && displs[r] <= limit;
  if (fits) {
    std::vector<int> c(counts.begin(), counts.end()), d(displs.begin(), displs.end());
    check_mpi(MPI_Allgatherv(mine, c[self], MPI_BYTE, all, c.data(), d.data(), MPI_BYTE, comm), "MPI_Allgatherv");
    return;
  }
  std::vector<MPI_Request> requests;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (r == self) continue;
    isend_bytes(mine, counts[self], static_cast<int>(r), kCollectiveTag, comm, requests);
    irecv_bytes(all + displs[r], counts[r], static_cast<int>(r), kCollectiveTag, comm, requests);
  }
  if (counts[self] > 0 && all + displs[self] != mine) std::memmove(all + displs[self], mine, counts[self]);
  wait_all(requests);
}

void alltoallv_bytes(const std::byte* send, const std::vector<std::size_t>& send_counts,
                     const std::vector<std::size_t>& send_displs, std::byte* recv,
                     const std::vector<std::size_t>& recv_counts, const std::vector<std::size_t>& recv_displs,
                     MPI_Comm comm) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  const auto self = static_cast<std::size_t>(me);
  std::vector<MPI_Request> requests;
  for (std::size_t q = 0; q < send_counts.size(); ++q) {
    if (q == self) continue;
    irecv_bytes(recv + recv_displs[q], recv_counts[q], static_cast<int>(q), kCollectiveTag, comm, requests);
    isend_bytes(send + send_displs[q], send_counts[q], static_cast<int>(q), kCollectiveTag, comm, requests);
  }
  if (send_counts[self] > 0) std::memcpy(recv + recv_displs[self], send + send_displs[self], send_counts[self]);
  wait_all(requests);
}

}  // namespace nki
