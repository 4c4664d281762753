/** \file In-process collectives: every buffer is in this process; checked, then run on the cores. */
#include "in_process_communicator.h"

#include "collective_plan.h"
#include "core_collectives.h"

namespace nki {

namespace {

/** Checks the buffers and groups (nothing has run yet) and points the plan at every input. */
CollectivePlan plan_for(const char* name, const std::vector<Tensor>& buffers, const GroupList& groups) {
  const std::vector<BufferInfo> infos = buffer_infos(buffers);
  check_same_buffers(name, infos);
  check_local_devices(name, buffers, 0);
  CollectivePlan p = make_plan(name, infos, groups);
  for (const Tensor& t : buffers) p.in.push_back(t.data());
  p.locals = buffers.size();
  p.device = &buffers.front().device();
  return p;
}

}  // namespace

std::vector<Tensor> InProcessCommunicator::all_reduce(const std::vector<Tensor>& buffers, ReduceOp op,
                                                      const GroupList& groups) {
  return all_reduce_on_cores(plan_for("all_reduce", buffers, groups), op);
}

std::vector<Tensor> InProcessCommunicator::all_gather(const std::vector<Tensor>& buffers, int dim,
                                                      const GroupList& groups, GatherMode mode) {
  return all_gather_on_cores(plan_for("all_gather", buffers, groups), dim, mode);
}

std::vector<Tensor> InProcessCommunicator::reduce_scatter(const std::vector<Tensor>& buffers, ReduceOp op, int dim,
                                                          const GroupList& groups) {
  return reduce_scatter_on_cores(plan_for("reduce_scatter", buffers, groups), op, dim);
}

std::vector<Tensor> InProcessCommunicator::all_to_all(const std::vector<Tensor>& buffers, int split_dim,
                                                      int concat_dim, const GroupList& groups) {
  return all_to_all_on_cores(plan_for("all_to_all", buffers, groups), split_dim, concat_dim);
}

std::vector<Tensor> InProcessCommunicator::collective_permute(
    const std::vector<Tensor>& buffers, const std::vector<std::pair<int, int>>& source_target_pairs) {
  const CollectivePlan p = plan_for("collective_permute", buffers, {});
  return collective_permute_on_cores(p, permute_sources(buffers.size(), source_target_pairs));
}

}  // namespace nki
