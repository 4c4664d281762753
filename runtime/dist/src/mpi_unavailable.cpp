/** \file MpiWorld in a build without MPI: refuses, naming how to get it. */
#include "kernel_collective_transport.h"
#include "nki/error.h"
#include "nki/mpi_world.h"

namespace nki {

namespace {
[[noreturn]] void unavailable() {
  throw UserError("err_mpi_unavailable", "", {},
                  "this build has no MPI backend; install Open MPI (libopenmpi-dev, scripts/setup.sh does) and "
                  "configure with -DNKI_ENABLE_MPI=ON");
}
}  // namespace

MpiWorld::MpiWorld(int*, char***) { unavailable(); }
MpiWorld::~MpiWorld() = default;
int MpiWorld::rank() const { return 0; }
int MpiWorld::ranks() const { return 1; }
bool MpiWorld::available() { return false; }

// Without MPI the process's communicator is in-process: one process, nothing crosses.
std::unique_ptr<KernelCollectiveTransport> make_mpi_kernel_collective_transport(Communicator&) { return nullptr; }

}  // namespace nki
