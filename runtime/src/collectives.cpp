/** \file Collectives: checked up front, then one task per simulated core with rendezvous between phases. */
#include "nki/collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <barrier>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>

#include "box_copy.h"
#include "core_workers.h"
#include "nki/error.h"

namespace nki {

namespace {

// ---------------------------------------------------------------------------------------
// Checks, all made before any core starts
// ---------------------------------------------------------------------------------------

/** The checked inputs of a collective: the buffers and, per device, its group and position. */
struct Plan {
  const char* name;
  std::vector<Tensor> in;
  GroupList groups;
  std::vector<std::size_t> group_of, position;  ///< per device

  std::size_t devices() const { return in.size(); }
  const std::vector<int>& group(std::size_t device) const { return groups[group_of[device]]; }
  std::size_t group_size() const { return groups.front().size(); }
  const Shape& shape() const { return in.front().shape(); }
  DType dtype() const { return in.front().dtype(); }
  const sim::Device& device() const { return in.front().device(); }
};

[[noreturn]] void fail(const char* collective, const char* name, std::string detail) {
  throw UserError(name, collective, {}, std::move(detail));
}

std::string groups_str(const GroupList& groups) { return ReplicaGroups{groups, std::nullopt}.str(); }

void check_buffers(const char* name, const std::vector<Tensor>& buffers) {
  if (buffers.empty()) fail(name, "err_collective_shape_mismatch", "no buffers given; pass one per device");
  const Tensor& first = buffers.front();
  for (std::size_t i = 1; i < buffers.size(); ++i) {
    const Tensor& b = buffers[i];
    if (b.shape() != first.shape() || b.dtype() != first.dtype()) {
      fail(name, "err_collective_shape_mismatch",
           fmt::format("device {}'s buffer is {}{} but device 0's is {}{}; every device must pass the same shape "
                       "and dtype",
                       i, dtype_name(b.dtype()), shape_str(b.shape()), dtype_name(first.dtype()),
                       shape_str(first.shape())));
    }
    if (!b.device().same_as(first.device())) {
      fail(name, "err_collective_device",
           fmt::format("device {}'s buffer lives on another sim::Device than device 0's", i));
    }
  }
  if (static_cast<int>(buffers.size()) > first.device().cores()) {
    fail(name, "err_collective_device",
         fmt::format("{} devices take part but their sim::Device has {} NeuronCores; one core runs each device",
                     buffers.size(), first.device().cores()));
  }
}

Plan make_plan(const char* name, const std::vector<Tensor>& buffers, const GroupList& groups) {
  check_buffers(name, buffers);
  Plan p{name, buffers, groups, {}, {}};
  const std::size_t n = buffers.size();
  if (p.groups.empty()) {
    p.groups.emplace_back(n);
    std::iota(p.groups.front().begin(), p.groups.front().end(), 0);
  }
  constexpr auto none = static_cast<std::size_t>(-1);
  p.group_of.assign(n, none);
  p.position.assign(n, none);
  for (std::size_t g = 0; g < p.groups.size(); ++g) {
    const std::vector<int>& grp = p.groups[g];
    if (grp.empty()) fail(name, "err_invalid_replica_groups", fmt::format("group {} of {} is empty", g, groups_str(groups)));
    if (grp.size() != p.groups.front().size()) {
      fail(name, "err_invalid_replica_groups",
           fmt::format("groups {} differ in size: group 0 has {} devices, group {} has {}", groups_str(groups),
                       p.groups.front().size(), g, grp.size()));
    }
    for (std::size_t k = 0; k < grp.size(); ++k) {
      const int d = grp[k];
      if (d < 0 || static_cast<std::size_t>(d) >= n) {
        fail(name, "err_invalid_replica_groups",
             fmt::format("device {} in group {} of {} is out of range: {} buffers were given (devices 0 to {})", d, g,
                         groups_str(groups), n, n - 1));
      }
      if (p.group_of[static_cast<std::size_t>(d)] != none) {
        fail(name, "err_invalid_replica_groups",
             fmt::format("device {} appears twice in {} (groups {} and {})", d, groups_str(groups),
                         p.group_of[static_cast<std::size_t>(d)], g));
      }
      p.group_of[static_cast<std::size_t>(d)] = g;
      p.position[static_cast<std::size_t>(d)] = k;
    }
  }
  for (std::size_t d = 0; d < n; ++d) {
    if (p.group_of[d] == none) {
      fail(name, "err_invalid_replica_groups",
           fmt::format("device {} is in no group of {}; with {} buffers every device 0 to {} must be in one", d,
                       groups_str(groups), n, n - 1));
    }
  }
  return p;
}

void check_dim(const Plan& p, const char* what, int dim, std::size_t limit) {
  if (dim < 0 || static_cast<std::size_t>(dim) >= limit) {
    fail(p.name, "err_collective_invalid_dim",
         limit == 0 ? fmt::format("{} {} is out of range: the buffers are scalars", what, dim)
                    : fmt::format("{} {} is out of range for buffers of shape {} (0 to {})", what, dim,
                                  shape_str(p.shape()), limit - 1));
  }
}

void check_divisible(const Plan& p, const char* what, int dim) {
  const std::int64_t size = p.shape()[static_cast<std::size_t>(dim)];
  if (size % static_cast<std::int64_t>(p.group_size()) != 0) {
    fail(p.name, "err_collective_invalid_dim",
         fmt::format("{} {} has size {}, which does not split into {} equal parts (the group size); buffers are {}",
                     what, dim, size, p.group_size(), shape_str(p.shape())));
  }
}

// ---------------------------------------------------------------------------------------
// Running: one task per core, with a rendezvous
// ---------------------------------------------------------------------------------------

/**
 * Runs `body(device, sync)` for every device, each on a core (TBB worker) of its own;
 * `sync()` is a rendezvous of all cores. A core that fails leaves the rendezvous, so the
 * others never wait for it.
 */
template <class Body>
void run_cores(std::size_t n, Body body) {
  std::barrier<> rendezvous(static_cast<std::ptrdiff_t>(n));
  run_on_own_workers(n, [&](std::size_t device) {
    try {
      body(device, [&] { rendezvous.arrive_and_wait(); });
    } catch (...) {
      (void)rendezvous.arrive_and_drop();
      throw;
    }
  });
}

std::vector<Tensor> allocate_outputs(const Plan& p, const Shape& shape) {
  std::vector<Tensor> out;
  out.reserve(p.devices());
  for (std::size_t i = 0; i < p.devices(); ++i) out.emplace_back(shape, p.dtype(), p.device());
  return out;
}

// ---------------------------------------------------------------------------------------
// Element arithmetic: the one definition of a reduction
// ---------------------------------------------------------------------------------------

constexpr float kCanonicalNan = std::bit_cast<float>(0x7fc00000u);

template <class T>
inline T combine(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::sum: return a + b;
    case ReduceOp::max: return std::isnan(a) ? a : std::isnan(b) ? b : (a >= b ? a : b);
    case ReduceOp::min: return std::isnan(a) ? a : std::isnan(b) ? b : (a <= b ? a : b);
  }
  return a;
}

/** Loads `count` elements at `src` (+ `offset` elements) as fp32. */
inline void load_floats(DType t, const std::byte* src, std::int64_t offset, std::int64_t count, float* out) {
  switch (t) {
    case DType::fp32: std::memcpy(out, src + offset * 4, static_cast<std::size_t>(count) * 4); return;
    case DType::bf16: {
      const auto* s = reinterpret_cast<const std::uint16_t*>(src) + offset;
      for (std::int64_t i = 0; i < count; ++i) out[i] = std::bit_cast<float>(static_cast<std::uint32_t>(s[i]) << 16);
      return;
    }
    case DType::fp16: {
      const auto* s = reinterpret_cast<const std::uint16_t*>(src) + offset;
      for (std::int64_t i = 0; i < count; ++i) out[i] = fp16_bits_to_float(s[i]);
      return;
    }
    default: break;
  }
  const int eb = dtype_bytes(t);
  for (std::int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(load_element(src + (offset + i) * eb, t));
}

/** Stores fp32 values rounded to `t`, every NaN as the canonical quiet NaN. */
inline void store_floats(DType t, const float* v, std::byte* dst, std::int64_t offset, std::int64_t count) {
  auto canon = [](float f) { return std::isnan(f) ? kCanonicalNan : f; };
  switch (t) {
    case DType::fp32: {
      auto* d = reinterpret_cast<float*>(dst) + offset;
      for (std::int64_t i = 0; i < count; ++i) d[i] = canon(v[i]);
      return;
    }
    case DType::bf16: {
      auto* d = reinterpret_cast<std::uint16_t*>(dst) + offset;
      for (std::int64_t i = 0; i < count; ++i) d[i] = float_to_bf16_bits(canon(v[i]));
      return;
    }
    case DType::fp16: {
      auto* d = reinterpret_cast<std::uint16_t*>(dst) + offset;
      for (std::int64_t i = 0; i < count; ++i) d[i] = float_to_fp16_bits(canon(v[i]));
      return;
    }
    default: break;
  }
  const int eb = dtype_bytes(t);
  for (std::int64_t i = 0; i < count; ++i) store_element(dst + (offset + i) * eb, t, canon(v[i]));
}

/** Whether `t` is a float dtype (reduced in fp32); 0.5 is exact in every float dtype and in no integer one. */
bool reduces_in_fp32(DType t) {
  std::byte buf[8] = {};
  store_element(buf, t, 0.5f);
  return load_element(buf, t) == 0.5f;
}

/**
 * dst[offset + i] = srcs[0][offset + i] op srcs[1][offset + i] op ... (left to right, the
 * group's order), accumulated in fp32 and rounded to the dtype once.
 */
void reduce_range(DType t, ReduceOp op, const std::vector<const std::byte*>& srcs, std::int64_t src_offset,
                  std::byte* dst, std::int64_t dst_offset, std::int64_t count) {
  constexpr std::int64_t kBlock = 2048;
  if (!reduces_in_fp32(t)) {
    const int eb = dtype_bytes(t);
    for (std::int64_t i = 0; i < count; ++i) {
      double acc = load_element(srcs[0] + (src_offset + i) * eb, t);
      for (std::size_t k = 1; k < srcs.size(); ++k)
        acc = combine<double>(op, acc, load_element(srcs[k] + (src_offset + i) * eb, t));
      store_element(dst + (dst_offset + i) * eb, t, acc);
    }
    return;
  }
  alignas(64) float acc[kBlock];
  alignas(64) float next[kBlock];
  for (std::int64_t b = 0; b < count; b += kBlock) {
    const std::int64_t m = std::min(kBlock, count - b);
    load_floats(t, srcs[0], src_offset + b, m, acc);
    for (std::size_t k = 1; k < srcs.size(); ++k) {
      const float* x = next;
      if (t == DType::fp32) x = reinterpret_cast<const float*>(srcs[k]) + src_offset + b;  // read in place
      else load_floats(t, srcs[k], src_offset + b, m, next);
      switch (op) {
        case ReduceOp::sum:
          for (std::int64_t i = 0; i < m; ++i) acc[i] = acc[i] + x[i];
          break;
        case ReduceOp::max:
          for (std::int64_t i = 0; i < m; ++i) acc[i] = combine(ReduceOp::max, acc[i], x[i]);
          break;
        case ReduceOp::min:
          for (std::int64_t i = 0; i < m; ++i) acc[i] = combine(ReduceOp::min, acc[i], x[i]);
          break;
      }
    }
    store_floats(t, acc, dst, dst_offset + b, m);
  }
}

std::vector<const std::byte*> group_inputs(const Plan& p, std::size_t device) {
  std::vector<const std::byte*> srcs;
  for (int member : p.group(device)) srcs.push_back(p.in[static_cast<std::size_t>(member)].data());
  return srcs;
}

std::int64_t product(const Shape& s, std::size_t from, std::size_t to) {
  std::int64_t n = 1;
  for (std::size_t k = from; k < to; ++k) n *= s[k];
  return n;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// The collectives
// ---------------------------------------------------------------------------------------

std::vector<Tensor> all_reduce(const std::vector<Tensor>& buffers, ReduceOp op, const GroupList& groups) {
  const Plan p = make_plan("all_reduce", buffers, groups);
  std::vector<Tensor> out = allocate_outputs(p, p.shape());
  const std::int64_t n = p.in.front().elements();
  const auto g = static_cast<std::int64_t>(p.group_size());
  const std::int64_t chunk = (n + g - 1) / g;
  const int eb = dtype_bytes(p.dtype());
  // Reduce-scatter then all-gather: the member at position q reduces chunk q of the group
  // into its own output; after the rendezvous every member copies the other chunks from
  // their owners' outputs.
  run_cores(p.devices(), [&](std::size_t device, auto sync) {
    const std::vector<int>& grp = p.group(device);
    const auto q = static_cast<std::int64_t>(p.position[device]);
    const std::int64_t begin = std::min(q * chunk, n), end = std::min(begin + chunk, n);
    sync();  // every core has its inputs ready
    reduce_range(p.dtype(), op, group_inputs(p, device), begin, out[device].data(), begin, end - begin);
    sync();  // every chunk is reduced
    for (std::int64_t k = 0; k < g; ++k) {
      if (k == q) continue;
      const std::int64_t b = std::min(k * chunk, n), e = std::min(b + chunk, n);
      std::memcpy(out[device].data() + b * eb, out[static_cast<std::size_t>(grp[static_cast<std::size_t>(k)])].data() + b * eb,
                  static_cast<std::size_t>((e - b) * eb));
    }
  });
  return out;
}

std::vector<Tensor> all_gather(const std::vector<Tensor>& buffers, int dim, const GroupList& groups, GatherMode mode) {
  const Plan p = make_plan("all_gather", buffers, groups);
  const Shape& s = p.shape();
  check_dim(p, mode == GatherMode::concat ? "dim" : "stack dim", dim,
            s.size() + (mode == GatherMode::stack ? 1 : 0));
  const auto d = static_cast<std::size_t>(dim);
  const auto g = static_cast<std::int64_t>(p.group_size());
  Shape out_shape = s;
  if (mode == GatherMode::concat) out_shape[d] *= g;
  else out_shape.insert(out_shape.begin() + dim, g);
  std::vector<Tensor> out = allocate_outputs(p, out_shape);
  // Both modes lay each member's block of prod(shape[dim:]) elements side by side.
  const std::int64_t outer = product(s, 0, d);
  const auto inner_bytes = static_cast<std::size_t>(product(s, d, s.size()) * dtype_bytes(p.dtype()));
  run_cores(p.devices(), [&](std::size_t device, auto sync) {
    sync();
    const std::vector<int>& grp = p.group(device);
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::int64_t k = 0; k < g; ++k) {
        std::memcpy(out[device].data() + static_cast<std::size_t>(o * g + k) * inner_bytes,
                    p.in[static_cast<std::size_t>(grp[static_cast<std::size_t>(k)])].data() + static_cast<std::size_t>(o) * inner_bytes,
                    inner_bytes);
      }
    }
  });
  return out;
}

std::vector<Tensor> reduce_scatter(const std::vector<Tensor>& buffers, ReduceOp op, int dim, const GroupList& groups) {
  const Plan p = make_plan("reduce_scatter", buffers, groups);
  const Shape& s = p.shape();
  check_dim(p, "dim", dim, s.size());
  check_divisible(p, "dim", dim);
  const auto d = static_cast<std::size_t>(dim);
  const auto g = static_cast<std::int64_t>(p.group_size());
  Shape out_shape = s;
  out_shape[d] /= g;
  std::vector<Tensor> out = allocate_outputs(p, out_shape);
  const std::int64_t outer = product(s, 0, d);
  const std::int64_t part = product(out_shape, d, s.size());  // elements of one part per outer index
  run_cores(p.devices(), [&](std::size_t device, auto sync) {
    sync();
    const auto q = static_cast<std::int64_t>(p.position[device]);
    const std::vector<const std::byte*> srcs = group_inputs(p, device);
    for (std::int64_t o = 0; o < outer; ++o)
      reduce_range(p.dtype(), op, srcs, (o * g + q) * part, out[device].data(), o * part, part);
  });
  return out;
}

std::vector<Tensor> all_to_all(const std::vector<Tensor>& buffers, int split_dim, int concat_dim,
                               const GroupList& groups) {
  const Plan p = make_plan("all_to_all", buffers, groups);
  const Shape& s = p.shape();
  check_dim(p, "split_dim", split_dim, s.size());
  check_dim(p, "concat_dim", concat_dim, s.size());
  check_divisible(p, "split_dim", split_dim);
  const auto g = static_cast<std::int64_t>(p.group_size());
  Shape part = s;
  part[static_cast<std::size_t>(split_dim)] /= g;
  Shape out_shape = part;
  out_shape[static_cast<std::size_t>(concat_dim)] *= g;
  std::vector<Tensor> out = allocate_outputs(p, out_shape);
  const int eb = dtype_bytes(p.dtype());
  run_cores(p.devices(), [&](std::size_t device, auto sync) {
    sync();
    const std::vector<int>& grp = p.group(device);
    const auto q = static_cast<std::int64_t>(p.position[device]);
    std::vector<std::int64_t> src_start(s.size(), 0), dst_start(s.size(), 0);
    src_start[static_cast<std::size_t>(split_dim)] = q * part[static_cast<std::size_t>(split_dim)];
    for (std::int64_t k = 0; k < g; ++k) {
      dst_start[static_cast<std::size_t>(concat_dim)] = k * part[static_cast<std::size_t>(concat_dim)];
      copy_box({p.in[static_cast<std::size_t>(grp[static_cast<std::size_t>(k)])].data(), s}, src_start,
               {out[device].data(), out_shape}, dst_start, part, eb);
    }
  });
  return out;
}

std::vector<Tensor> collective_permute(const std::vector<Tensor>& buffers,
                                       const std::vector<std::pair<int, int>>& source_target_pairs) {
  const char* name = "collective_permute";
  check_buffers(name, buffers);
  const std::size_t n = buffers.size();
  std::vector<int> source_of(n, -1), used_as_source(n, 0);
  for (const auto& [src, dst] : source_target_pairs) {
    for (const int d : {src, dst}) {
      if (d < 0 || static_cast<std::size_t>(d) >= n) {
        fail(name, "err_invalid_source_target_pairs",
             fmt::format("pair ({},{}) names device {}, out of range: {} buffers were given (devices 0 to {})", src, dst,
                         d, n, n - 1));
      }
    }
    if (source_of[static_cast<std::size_t>(dst)] >= 0) {
      fail(name, "err_invalid_source_target_pairs",
           fmt::format("device {} is the target of pairs ({},{}) and ({},{}); a device receives at most once", dst,
                       source_of[static_cast<std::size_t>(dst)], dst, src, dst));
    }
    if (used_as_source[static_cast<std::size_t>(src)]++) {
      fail(name, "err_invalid_source_target_pairs",
           fmt::format("device {} is the source of two pairs; a device sends at most once", src));
    }
    source_of[static_cast<std::size_t>(dst)] = src;
  }
  Plan p{name, buffers, {}, {}, {}};
  std::vector<Tensor> out = allocate_outputs(p, p.shape());
  const auto bytes = static_cast<std::size_t>(p.in.front().bytes());
  run_cores(n, [&](std::size_t device, auto sync) {
    sync();
    if (source_of[device] < 0) std::memset(out[device].data(), 0, bytes);
    else std::memcpy(out[device].data(), p.in[static_cast<std::size_t>(source_of[device])].data(), bytes);
  });
  return out;
}

}  // namespace nki
