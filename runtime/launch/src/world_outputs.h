/** \file A launch spread over every rank's cores: joining what each rank's instances wrote. */
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "nki/communicator.h"
#include "nki/tensor.h"

namespace nki {

/**
 * `out` is one output of a launch whose instances ran on several ranks, each rank writing
 * into its own copy that started as `initial` (the same bytes on every rank). Every rank
 * ends with each element as the rank that changed it wrote it (`initial` where none did):
 * an element a rank wrote with its initial value needs no owner, as every copy holds it.
 * Two ranks writing different values to one element is err_instances_write_same_element.
 */
void join_rank_outputs(Communicator& world, const std::string& kernel, const std::string& tensor, Tensor& out,
                       const std::vector<std::byte>& initial);

}  // namespace nki
