/** \file The checked inputs of a collective, shared by the in-process and the MPI backend. */
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "nki/dtype.h"
#include "nki/replica_groups.h"
#include "nki/shape.h"
#include "nki/simulator/device.h"
#include "nki/tensor.h"

namespace nki {

/** The shape and dtype of one device's buffer: what every process knows of every device. */
struct BufferInfo {
  Shape shape;
  DType dtype = DType::fp32;
};

/**
 * A checked collective: the world's devices, their groups, and the inputs this process
 * can read. Devices [first_local, first_local + locals) are this process's; their outputs
 * live on `device`, local device i on NeuronCore i.
 */
struct CollectivePlan {
  const char* name = "";
  Shape shape;
  DType dtype = DType::fp32;
  std::size_t devices = 0;                       ///< in the world
  GroupList groups;                              ///< never empty after make_plan
  std::vector<std::size_t> group_of, position;  ///< per world device
  std::vector<const std::byte*> in;              ///< per world device; null where this process holds no copy
  std::size_t first_local = 0, locals = 0;
  const sim::Device* device = nullptr;

  const std::vector<int>& group(std::size_t d) const { return groups[group_of[d]]; }
  std::size_t group_size() const { return groups.front().size(); }
};

/** Throws nki::UserError `error` for collective `collective`. */
[[noreturn]] void collective_error(const char* collective, const char* error, std::string detail);

/** err_collective_shape_mismatch unless every device's buffer has device 0's shape and dtype. */
void check_same_buffers(const char* name, const std::vector<BufferInfo>& world);

/**
 * err_collective_device unless the buffers (this process's, devices first_id ...) live on
 * one sim::Device with a NeuronCore for each.
 */
void check_local_devices(const char* name, const std::vector<Tensor>& buffers, std::size_t first_id);

/** Checks `groups` over `world.size()` devices (empty: one group of all) and fills the plan but its inputs. */
CollectivePlan make_plan(const char* name, const std::vector<BufferInfo>& world, const GroupList& groups);

/** err_collective_invalid_dim unless 0 <= dim < limit. */
void check_dim(const CollectivePlan& p, const char* what, int dim, std::size_t limit);
/** err_collective_invalid_dim unless `dim`'s size splits into group-size parts. */
void check_divisible(const CollectivePlan& p, const char* what, int dim);

/** Each device's source of a collective_permute (-1: none), after checking the pairs over `devices`. */
std::vector<int> permute_sources(std::size_t devices, const std::vector<std::pair<int, int>>& source_target_pairs);

/** The shape and dtype of each buffer. */
std::vector<BufferInfo> buffer_infos(const std::vector<Tensor>& buffers);

}  // namespace nki
