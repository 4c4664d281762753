/** \file The default communicator: one process, every device a core of one sim::Device. */
#pragma once

#include "nki/communicator.h"

namespace nki {

class InProcessCommunicator final : public Communicator {
 public:
  const char* backend() const override { return "in-process"; }
  int rank() const override { return 0; }
  int ranks() const override { return 1; }
  std::vector<Tensor> all_reduce(const std::vector<Tensor>& buffers, ReduceOp op, const GroupList& groups) override;
  std::vector<Tensor> all_gather(const std::vector<Tensor>& buffers, int dim, const GroupList& groups,
                                 GatherMode mode) override;
  std::vector<Tensor> reduce_scatter(const std::vector<Tensor>& buffers, ReduceOp op, int dim,
                                     const GroupList& groups) override;
  std::vector<Tensor> all_to_all(const std::vector<Tensor>& buffers, int split_dim, int concat_dim,
                                 const GroupList& groups) override;
  std::vector<Tensor> collective_permute(const std::vector<Tensor>& buffers,
                                         const std::vector<std::pair<int, int>>& source_target_pairs) override;
  std::vector<std::string> all_gather_text(const std::string& mine) override { return {mine}; }
  void compile_in_turns(const std::filesystem::path&, const std::function<void()>& compile) override { compile(); }
};

}  // namespace nki
