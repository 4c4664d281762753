/** \file The most bytes one MPI message may carry: MPI counts are int. Apart from mpi.h, so tests can lower it. */
#pragma once

#include <cstddef>

namespace nki {

/** INT_MAX unless lowered: a message of more bytes goes as several (mpi_messages.h). */
std::size_t mpi_message_limit();
void set_mpi_message_limit(std::size_t bytes);

}  // namespace nki
