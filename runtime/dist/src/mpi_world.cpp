/** \file MpiWorld: MPI initialized for the process's life, and its communicator MPI's. */
#include "nki/mpi_world.h"

#include <mpi.h>

#include <exception>

#include "mpi_communicator.h"
#include "nki/error.h"

namespace nki {

MpiWorld::MpiWorld(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) throw UserError("err_mpi_initialized", "", {}, "MPI is already initialized; make one nki::MpiWorld");
  int provided = 0;
  // Funneled: only the main thread calls MPI; core workers never do.
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  set_communicator(std::make_shared<MpiCommunicator>());
}

MpiWorld::~MpiWorld() {
  if (std::uncaught_exceptions() > 0) MPI_Abort(MPI_COMM_WORLD, 1);
  set_communicator(nullptr);  // frees the communicators before MPI goes
  MPI_Finalize();
}

int MpiWorld::rank() const { return communicator().rank(); }
int MpiWorld::ranks() const { return communicator().ranks(); }
bool MpiWorld::available() { return true; }

}  // namespace nki
