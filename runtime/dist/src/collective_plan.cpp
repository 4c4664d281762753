/** \file Checks of a collective's inputs, all made before any core starts or any rank communicates. */
#include "collective_plan.h"

#include <fmt/format.h>

#include <numeric>

#include "nki/error.h"

namespace nki {

namespace {
std::string groups_str(const GroupList& groups) { return ReplicaGroups{groups, std::nullopt}.str(); }
}  // namespace

void collective_error(const char* collective, const char* error, std::string detail) {
  throw UserError(error, collective, {}, std::move(detail));
}

std::vector<BufferInfo> buffer_infos(const std::vector<Tensor>& buffers) {
  std::vector<BufferInfo> infos;
  for (const Tensor& t : buffers) infos.push_back({t.shape(), t.dtype()});
  return infos;
}

void check_same_buffers(const char* name, const std::vector<BufferInfo>& world) {
  if (world.empty()) collective_error(name, "err_collective_shape_mismatch", "no buffers given; pass one per device");
  const BufferInfo& first = world.front();
  for (std::size_t i = 1; i < world.size(); ++i) {
    const BufferInfo& b = world[i];
    if (b.shape != first.shape || b.dtype != first.dtype) {
      collective_error(name, "err_collective_shape_mismatch",
                       fmt::format("device {}'s buffer is {}{} but device 0's is {}{}; every device must pass the same "
                                   "shape and dtype",
                                   i, dtype_name(b.dtype), shape_str(b.shape), dtype_name(first.dtype),
                                   shape_str(first.shape)));
    }
  }
}

void check_local_devices(const char* name, const std::vector<Tensor>& buffers, std::size_t first_id) {
  const Tensor& first = buffers.front();
  for (std::size_t i = 1; i < buffers.size(); ++i) {
    if (!buffers[i].device().same_as(first.device())) {
      collective_error(name, "err_collective_device",
                       fmt::format("device {}'s buffer lives on another sim::Device than device {}'s", first_id + i,
                                   first_id));
    }
  }
  if (static_cast<int>(buffers.size()) > first.device().cores()) {
    collective_error(name, "err_collective_device",
                     fmt::format("{} devices take part but their sim::Device has {} NeuronCores; one core runs each "
                                 "device",
                                 buffers.size(), first.device().cores()));
  }
}

CollectivePlan make_plan(const char* name, const std::vector<BufferInfo>& world, const GroupList& groups) {
  CollectivePlan p;
  p.name = name;
  p.shape = world.front().shape;
  p.dtype = world.front().dtype;
  p.devices = world.size();
  p.groups = groups;
  const std::size_t n = world.size();
  if (p.groups.empty()) {
    p.groups.emplace_back(n);
    std::iota(p.groups.front().begin(), p.groups.front().end(), 0);
  }
  constexpr auto none = static_cast<std::size_t>(-1);
  p.group_of.assign(n, none);
  p.position.assign(n, none);
  for (std::size_t g = 0; g < p.groups.size(); ++g) {
    const std::vector<int>& grp = p.groups[g];
    if (grp.empty()) {
      collective_error(name, "err_invalid_replica_groups", fmt::format("group {} of {} is empty", g, groups_str(groups)));
    }
    if (grp.size() != p.groups.front().size()) {
      collective_error(name, "err_invalid_replica_groups",
                       fmt::format("groups {} differ in size: group 0 has {} devices, group {} has {}",
                                   groups_str(groups), p.groups.front().size(), g, grp.size()));
    }
    for (std::size_t k = 0; k < grp.size(); ++k) {
      const int d = grp[k];
      if (d < 0 || static_cast<std::size_t>(d) >= n) {
        collective_error(name, "err_invalid_replica_groups",
                         fmt::format("device {} in group {} of {} is out of range: {} buffers were given (devices 0 "
                                     "to {})",
                                     d, g, groups_str(groups), n, n - 1));
      }
      if (p.group_of[static_cast<std::size_t>(d)] != none) {
        collective_error(name, "err_invalid_replica_groups",
                         fmt::format("device {} appears twice in {} (groups {} and {})", d, groups_str(groups),
                                     p.group_of[static_cast<std::size_t>(d)], g));
      }
      p.group_of[static_cast<std::size_t>(d)] = g;
      p.position[static_cast<std::size_t>(d)] = k;
    }
  }
  for (std::size_t d = 0; d < n; ++d) {
    if (p.group_of[d] == none) {
      collective_error(name, "err_invalid_replica_groups",
                       fmt::format("device {} is in no group of {}; with {} buffers every device 0 to {} must be in "
                                   "one",
                                   d, groups_str(groups), n, n - 1));
    }
  }
  return p;
}

void check_dim(const CollectivePlan& p, const char* what, int dim, std::size_t limit) {
  if (dim < 0 || static_cast<std::size_t>(dim) >= limit) {
    collective_error(p.name, "err_collective_invalid_dim",
                     limit == 0 ? fmt::format("{} {} is out of range: the buffers are scalars", what, dim)
                                : fmt::format("{} {} is out of range for buffers of shape {} (0 to {})", what, dim,
                                              shape_str(p.shape), limit - 1));
  }
}

void check_divisible(const CollectivePlan& p, const char* what, int dim) {
  const std::int64_t size = p.shape[static_cast<std::size_t>(dim)];
  if (size % static_cast<std::int64_t>(p.group_size()) != 0) {
    collective_error(p.name, "err_collective_invalid_dim",
                     fmt::format("{} {} has size {}, which does not split into {} equal parts (the group size); "
                                 "buffers are {}",
                                 what, dim, size, p.group_size(), shape_str(p.shape)));
  }
}

std::vector<int> permute_sources(std::size_t n, const std::vector<std::pair<int, int>>& source_target_pairs) {
  const char* name = "collective_permute";
  std::vector<int> source_of(n, -1), used_as_source(n, 0);
  for (const auto& [src, dst] : source_target_pairs) {
    for (const int d : {src, dst}) {
      if (d < 0 || static_cast<std::size_t>(d) >= n) {
        collective_error(name, "err_invalid_source_target_pairs",
                         fmt::format("pair ({},{}) names device {}, out of range: {} buffers were given (devices 0 to "
                                     "{})",
                                     src, dst, d, n, n - 1));
      }
    }
    if (source_of[static_cast<std::size_t>(dst)] >= 0) {
      collective_error(name, "err_invalid_source_target_pairs",
                       fmt::format("device {} is the target of pairs ({},{}) and ({},{}); a device receives at most "
                                   "once",
                                   dst, source_of[static_cast<std::size_t>(dst)], dst, src, dst));
    }
    if (used_as_source[static_cast<std::size_t>(src)]++) {
      collective_error(name, "err_invalid_source_target_pairs",
                       fmt::format("device {} is the source of two pairs; a device sends at most once", src));
    }
    source_of[static_cast<std::size_t>(dst)] = src;
  }
  return source_of;
}

}  // namespace nki
