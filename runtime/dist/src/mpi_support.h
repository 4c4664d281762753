/** \file What every MPI file of the backend checks: return codes. */
#pragma once

#include <cstddef>

namespace nki {

/** An MPI call that did not return MPI_SUCCESS is an nki::InternalError naming the call. */
void check_mpi(int rc, const char* call);

}  // namespace nki
