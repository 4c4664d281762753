/** \file Running as one rank of an MPI world (Open MPI's mpirun): each rank a chip, collectives over MPI. */
#pragma once

namespace nki {

/**
 * While alive, MPI is initialized and the process's communicator (nki/communicator.h) is
 * MPI's: collectives, compiles and `nki` commands span every rank. Make one at the start
 * of main(), on the thread that will make every collective; MPI is finalized when it is
 * destroyed. Destroyed while an exception unwinds, it aborts the whole world, so no rank
 * waits forever for one that failed alone. Without MPI support in the build, constructing
 * one throws nki::UserError err_mpi_unavailable.
 */
class MpiWorld {
 public:
  MpiWorld(int* argc, char*** argv);
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const;
  int ranks() const;

  /** Whether this build has the MPI backend (CMake found MPI and NKI_ENABLE_MPI is ON). */
  static bool available();
  /** Whether mpirun (or another MPI launcher) started this process. */
  static bool launched_by_mpirun();
};

}  // namespace nki
