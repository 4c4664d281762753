/** \file Which parts of a world launch's collectives cross processes, and the transport that moves them. */
#include "kernel_collective_transport.h"

#include "nki/communicator.h"

namespace nki {

bool part_crosses_processes(int me, int first_local, int locals, const ir::CollectiveOp& op, const std::vector<int>& group) {
  auto local = [&](int r) { return r >= first_local && r < first_local + locals; };
  if (op.kind == ir::CollectiveOp::Kind::permute) {
    for (const auto& [s, t] : op.pairs)
      if ((t == me && !local(s)) || (s == me && !local(t))) return true;
    return false;
  }
  for (int m : group)
    if (!local(m)) return true;
  return false;
}

std::unique_ptr<KernelCollectiveTransport> make_kernel_collective_transport(Communicator& processes) {
  if (processes.ranks() <= 1) return nullptr;
  return make_mpi_kernel_collective_transport(processes);
}

}  // namespace nki
