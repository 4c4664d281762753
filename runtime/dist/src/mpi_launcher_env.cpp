/** \file Whether an MPI launcher started this process: what its environment says, with or without MPI built in. */
#include <cstdlib>
#include <initializer_list>

#include "nki/mpi_world.h"

namespace nki {

bool MpiWorld::launched_by_mpirun() {
  // Open MPI's mpirun, PMIx launchers (Open MPI 5, Slurm) and MPICH's Hydra set these.
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (const char* s = std::getenv(v); s != nullptr && *s != '\0') return true;
  return false;
}

}  // namespace nki
