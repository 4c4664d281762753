/** \file Host layout of a kernel's tensors: row-major, on-chip partitions padded off cache-set strides. */
#include "on_chip_layout.h"

#include <variant>

#include "nki/dtype.h"
#include "nki/shape.h"

namespace nki {

namespace {

constexpr std::int64_t kCacheLine = 64;       // bytes added to a padded partition
constexpr std::int64_t kAliasingBytes = 512;  // partitions a multiple of this long are padded

/** Row-major strides of `t`'s storage with its partition dimension's stride padded where that pays. */
std::vector<std::int64_t> strides_of(const ir::TensorDecl& t, bool dense) {
  const Shape& s = ir::storage_shape(t);
  std::vector<std::int64_t> strides = row_major_strides(s);
  const bool on_chip = t.memory == ir::Memory::sbuf || t.memory == ir::Memory::psum;
  const auto p = static_cast<std::size_t>(t.par_dim);
  const std::int64_t bytes = dtype_bytes(t.dtype);
  if (dense || !on_chip || p >= s.size() || (strides[p] * bytes) % kAliasingBytes != 0 || kCacheLine % bytes != 0)
    return strides;
  std::int64_t stride = strides[p] + kCacheLine / bytes;
  for (std::size_t d = p + 1; d-- > 0;) {
    strides[d] = stride;
    stride *= s[d];
  }
  return strides;
}

}  // namespace

OnChipLayout::OnChipLayout(const ir::KernelIR& k) {
  std::vector<bool> dense(k.tensors.size(), false);
  for (const ir::Op& op : k.body) {
    const auto* c = std::get_if<ir::CollectiveOp>(&op);
    if (c == nullptr) continue;
    for (int t : c->srcs) dense[static_cast<std::size_t>(t)] = true;
    for (int t : c->dsts) dense[static_cast<std::size_t>(t)] = true;
    if (c->metadata >= 0) dense[static_cast<std::size_t>(c->metadata)] = true;
  }
  for (std::size_t i = 0; i < k.tensors.size(); ++i) {
    const ir::TensorDecl& t = k.tensors[i];
    strides_.push_back(strides_of(t, dense[i]));
    const Shape& s = ir::storage_shape(t);
    elements_.push_back(s.empty() ? 1 : strides_.back()[0] * s[0]);
  }
}

}  // namespace nki
