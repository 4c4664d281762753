/** \file MpiWorld in a build without MPI: refuses, naming how to get it. */
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

}  // namespace nki
