/** \file Collectives on simulated cores: one task per local device, with rendezvous between phases. */
#include "core_collectives.h"

#include <algorithm>
#include <barrier>
#include <cstring>

#include "core/box_copy.h"
#include "collective_reduction.h"
#include "core/core_workers.h"

namespace nki {

namespace {

std::vector<const std::byte*> group_inputs(const CollectivePlan& p, std::size_t device) {
  std::vector<const std::byte*> srcs;
  for (int member : p.group(device)) srcs.push_back(p.in[static_cast<std::size_t>(member)]);
  return srcs;
}

std::int64_t product(const Shape& s, std::size_t from, std::size_t to) {
  std::int64_t n = 1;
  for (std::size_t k = from; k < to; ++k) n *= s[k];
  return n;
}

}  // namespace

void run_cores(std::size_t n, const std::function<void(std::size_t, const std::function<void()>&)>& body) {
  // A core that fails leaves the rendezvous, so the others never wait for it.
  std::barrier<> rendezvous(static_cast<std::ptrdiff_t>(n));
  run_on_own_threads(n, [&](std::size_t device) {
    try {
      body(device, [&] { rendezvous.arrive_and_wait(); });
    } catch (...) {
      (void)rendezvous.arrive_and_drop();
      throw;
    }
  });
}

std::vector<Tensor> allocate_outputs(const CollectivePlan& p, const Shape& shape) {
  std::vector<Tensor> out;
  out.reserve(p.locals);
  for (std::size_t i = 0; i < p.locals; ++i) out.emplace_back(shape, p.dtype, *p.device);
  return out;
}

Shape all_gather_shape(const CollectivePlan& p, int dim, GatherMode mode) {
  const Shape& s = p.shape;
  check_dim(p, mode == GatherMode::concat ? "dim" : "stack dim", dim, s.size() + (mode == GatherMode::stack ? 1 : 0));
  Shape out = s;
  const auto g = static_cast<std::int64_t>(p.group_size());
  if (mode == GatherMode::concat) out[static_cast<std::size_t>(dim)] *= g;
  else out.insert(out.begin() + dim, g);
  return out;
}

Shape reduce_scatter_shape(const CollectivePlan& p, int dim) {
  check_dim(p, "dim", dim, p.shape.size());
  check_divisible(p, "dim", dim);
  Shape out = p.shape;
  out[static_cast<std::size_t>(dim)] /= static_cast<std::int64_t>(p.group_size());
  return out;
}

Shape all_to_all_shape(const CollectivePlan& p, int split_dim, int concat_dim) {
  check_dim(p, "split_dim", split_dim, p.shape.size());
  check_dim(p, "concat_dim", concat_dim, p.shape.size());
  check_divisible(p, "split_dim", split_dim);
  const auto g = static_cast<std::int64_t>(p.group_size());
  Shape out = p.shape;
  out[static_cast<std::size_t>(split_dim)] /= g;
  out[static_cast<std::size_t>(concat_dim)] *= g;
  return out;
}

std::vector<Tensor> all_reduce_on_cores(const CollectivePlan& p, ReduceOp op) {
  std::vector<Tensor> out = allocate_outputs(p, p.shape);
  const std::int64_t n = shape_elements(p.shape);
  const auto g = static_cast<std::int64_t>(p.group_size());
  const std::int64_t chunk = (n + g - 1) / g;
  const int eb = dtype_bytes(p.dtype);
  // Reduce-scatter then all-gather: the member at position q reduces chunk q of the group
  // into its own output; after the rendezvous every member copies the other chunks from
  // their owners' outputs.
  run_cores(p.locals, [&](std::size_t device, const std::function<void()>& sync) {
    const std::vector<int>& grp = p.group(device);
    const auto q = static_cast<std::int64_t>(p.position[device]);
    const std::int64_t begin = std::min(q * chunk, n), end = std::min(begin + chunk, n);
    sync();  // every core has its inputs ready
    reduce_range(p.dtype, op, group_inputs(p, device), begin, out[device].data(), begin, end - begin);
    sync();  // every chunk is reduced
    for (std::int64_t k = 0; k < g; ++k) {
      if (k == q) continue;
      const std::int64_t b = std::min(k * chunk, n), e = std::min(b + chunk, n);
      std::memcpy(out[device].data() + b * eb,
                  out[static_cast<std::size_t>(grp[static_cast<std::size_t>(k)])].data() + b * eb,
                  static_cast<std::size_t>((e - b) * eb));
    }
  });
  return out;
}

std::vector<Tensor> all_gather_on_cores(const CollectivePlan& p, int dim, GatherMode mode) {
  const Shape& s = p.shape;
  std::vector<Tensor> out = allocate_outputs(p, all_gather_shape(p, dim, mode));
  const auto d = static_cast<std::size_t>(dim);
  const auto g = static_cast<std::int64_t>(p.group_size());
  // Both modes lay each member's block of prod(shape[dim:]) elements side by side.
  const std::int64_t outer = product(s, 0, d);
  const auto inner_bytes = static_cast<std::size_t>(product(s, d, s.size()) * dtype_bytes(p.dtype));
  run_cores(p.locals, [&](std::size_t local, const std::function<void()>& sync) {
    sync();
    const std::vector<int>& grp = p.group(p.first_local + local);
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::int64_t k = 0; k < g; ++k) {
        std::memcpy(out[local].data() + static_cast<std::size_t>(o * g + k) * inner_bytes,
                    p.in[static_cast<std::size_t>(grp[static_cast<std::size_t>(k)])] +
                        static_cast<std::size_t>(o) * inner_bytes,
                    inner_bytes);
      }
    }
  });
  return out;
}

std::vector<Tensor> reduce_scatter_on_cores(const CollectivePlan& p, ReduceOp op, int dim) {
  const Shape out_shape = reduce_scatter_shape(p, dim);
  std::vector<Tensor> out = allocate_outputs(p, out_shape);
  const auto d = static_cast<std::size_t>(dim);
  const auto g = static_cast<std::int64_t>(p.group_size());
  const std::int64_t outer = product(p.shape, 0, d);
  const std::int64_t part = product(out_shape, d, p.shape.size());  // elements of one part per outer index
  run_cores(p.locals, [&](std::size_t local, const std::function<void()>& sync) {
    sync();
    const std::size_t device = p.first_local + local;
    const auto q = static_cast<std::int64_t>(p.position[device]);
    const std::vector<const std::byte*> srcs = group_inputs(p, device);
    for (std::int64_t o = 0; o < outer; ++o)
      reduce_range(p.dtype, op, srcs, (o * g + q) * part, out[local].data(), o * part, part);
  });
  return out;
}

std::vector<Tensor> all_to_all_on_cores(const CollectivePlan& p, int split_dim, int concat_dim) {
  const Shape& s = p.shape;
  const Shape out_shape = all_to_all_shape(p, split_dim, concat_dim);
  std::vector<Tensor> out = allocate_outputs(p, out_shape);
  const auto g = static_cast<std::int64_t>(p.group_size());
  Shape part = s;
  part[static_cast<std::size_t>(split_dim)] /= g;
  const int eb = dtype_bytes(p.dtype);
  run_cores(p.locals, [&](std::size_t local, const std::function<void()>& sync) {
    sync();
    const std::size_t device = p.first_local + local;
    const std::vector<int>& grp = p.group(device);
    const auto q = static_cast<std::int64_t>(p.position[device]);
    std::vector<std::int64_t> src_start(s.size(), 0), dst_start(s.size(), 0);
    src_start[static_cast<std::size_t>(split_dim)] = q * part[static_cast<std::size_t>(split_dim)];
    for (std::int64_t k = 0; k < g; ++k) {
      dst_start[static_cast<std::size_t>(concat_dim)] = k * part[static_cast<std::size_t>(concat_dim)];
      copy_box({p.in[static_cast<std::size_t>(grp[static_cast<std::size_t>(k)])], s}, src_start,
               {out[local].data(), out_shape}, dst_start, part, eb);
    }
  });
  return out;
}

std::vector<Tensor> collective_permute_on_cores(const CollectivePlan& p, const std::vector<int>& source_of) {
  std::vector<Tensor> out = allocate_outputs(p, p.shape);
  const auto bytes = static_cast<std::size_t>(shape_elements(p.shape) * dtype_bytes(p.dtype));
  run_cores(p.locals, [&](std::size_t local, const std::function<void()>& sync) {
    sync();
    const int source = source_of[p.first_local + local];
    if (source < 0) std::memset(out[local].data(), 0, bytes);
    else std::memcpy(out[local].data(), p.in[static_cast<std::size_t>(source)], bytes);
  });
  return out;
}

}  // namespace nki
