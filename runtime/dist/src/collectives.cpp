/** \file The collectives of nki/collectives.h: the process's communicator runs them. */
#include "nki/collectives.h"

#include "nki/communicator.h"

namespace nki {

std::vector<Tensor> all_reduce(const std::vector<Tensor>& buffers, ReduceOp op, const GroupList& groups) {
  return communicator().all_reduce(buffers, op, groups);
}

std::vector<Tensor> all_gather(const std::vector<Tensor>& buffers, int dim, const GroupList& groups, GatherMode mode) {
  return communicator().all_gather(buffers, dim, groups, mode);
}

std::vector<Tensor> reduce_scatter(const std::vector<Tensor>& buffers, ReduceOp op, int dim, const GroupList& groups) {
  return communicator().reduce_scatter(buffers, op, dim, groups);
}

std::vector<Tensor> all_to_all(const std::vector<Tensor>& buffers, int split_dim, int concat_dim,
                               const GroupList& groups) {
  return communicator().all_to_all(buffers, split_dim, concat_dim, groups);
}

std::vector<Tensor> collective_permute(const std::vector<Tensor>& buffers,
                                       const std::vector<std::pair<int, int>>& source_target_pairs) {
  return communicator().collective_permute(buffers, source_target_pairs);
}

}  // namespace nki
