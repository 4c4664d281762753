/** \file What every MPI file of the backend checks: return codes, and message sizes that fit an int. */
#pragma once

#include <cstddef>

namespace nki {

/** An MPI call that did not return MPI_SUCCESS is an nki::InternalError naming the call. */
void check_mpi(int rc, const char* call);
/** MPI counts are ints: a message of more bytes is err_collective_too_large (of collective `name`), not truncated. */
int count_of(std::size_t bytes, const char* name);

}  // namespace nki
