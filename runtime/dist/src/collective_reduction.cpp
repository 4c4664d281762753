/** \file The one definition of a reduction: fp32 (integers: double) accumulation in group order, one rounding. */
#include "collective_reduction.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace nki {

namespace {

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

}  // namespace


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

}  // namespace nki
