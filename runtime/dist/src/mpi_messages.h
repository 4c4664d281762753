/**
 * \file Moving bytes over MPI with 64-bit sizes: a message larger than mpi_message_limit()
 * (INT_MAX, MPI's int counts) goes as several, so no count or displacement wraps.
 */
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace nki {

/** Posts the send of `bytes` bytes to `dest`: one MPI_Isend per piece of at most the limit. */
void isend_bytes(const std::byte* data, std::size_t bytes, int dest, int tag, MPI_Comm comm,
                 std::vector<MPI_Request>& requests);
/** Posts the matching receive: the same pieces (both ends know the size), so they match in order. */
void irecv_bytes(std::byte* data, std::size_t bytes, int source, int tag, MPI_Comm comm,
                 std::vector<MPI_Request>& requests);
/** Waits for every request posted, then forgets them. */
void wait_all(std::vector<MPI_Request>& requests);

/**
 * MPI_Allgatherv of bytes: this rank's `counts[me]` bytes from `mine` land at `displs[me]` of
 * `all` on every rank. `counts` and `displs` are the same on every rank (as MPI requires), so
 * every rank takes the same path: one MPI_Allgatherv when they fit an int, else point to point.
 */
void allgatherv_bytes(const std::byte* mine, std::byte* all, const std::vector<std::size_t>& counts,
                      const std::vector<std::size_t>& displs, MPI_Comm comm);

/**
 * MPI_Alltoallv of bytes, point to point: `send_counts[q]` bytes from `send + send_displs[q]`
 * to rank q, `recv_counts[q]` bytes from rank q into `recv + recv_displs[q]`. Each pair's
 * sizes agree at both ends, which is all the pieces need: no rank's choice depends on
 * counts only another rank knows.
 */
void alltoallv_bytes(const std::byte* send, const std::vector<std::size_t>& send_counts,
                     const std::vector<std::size_t>& send_displs, std::byte* recv,
                     const std::vector<std::size_t>& recv_counts, const std::vector<std::size_t>& recv_displs,
                     MPI_Comm comm);

}  // namespace nki
