/** \file nl.softmax and nl.rms_norm: traced as the reductions and elementwise ops they are made of. */
#include <fmt/format.h>

#include "nki/language.h"
#include "nki/trace.h"

namespace nki::language {

namespace {

/** The tile an operand names; a scalar is err_scalar_only_operation. */
tile tile_operand(Trace& t, const operand& x, const char* op, const char* role, const SourceLoc& loc) {
  if (x.is_scalar()) t.fail("err_scalar_only_operation", loc, fmt::format("nl::{}: {} must be a tile, got a scalar", op, role));
  return tile(x.tile_id);
}

/** Negative axes count from the end, as in NKI (softmax's default axis is -1). */
axes normalized(const axes& a, std::size_t rank) {
  axes out = a;
  for (int& ax : out.list)
    if (ax < 0) ax += static_cast<int>(rank);
  return out;
}

}  // namespace

tile softmax(const operand& x, const axes& a, const softmax_options& o, source_location loc) {
  Trace& t = Trace::current("softmax", loc);
  const tile xt = tile_operand(t, x, "softmax", "x", SourceLoc::from(loc));
  const axes ax = normalized(a, xt.shape().size());
  // Subtracting the row max keeps exp in range; the steps stay fp32 and only the result is rounded.
  const tile m = max(xt, ax, {.dtype = DType::fp32, .keepdims = true}, loc);
  const tile e = exp(subtract(xt, m, {.dtype = DType::fp32}, loc), {.dtype = DType::fp32}, loc);
  const tile s = sum(e, ax, {.dtype = DType::fp32, .keepdims = true}, loc);
  return divide(e, s, {.dtype = o.dtype.value_or(xt.dtype())}, loc);
}

tile rms_norm(const operand& x, const operand& w, const axes& a, std::int64_t n, const rms_norm_options& o,
              source_location loc) {
  Trace& t = Trace::current("rms_norm", loc);
  const SourceLoc where = SourceLoc::from(loc);
  const tile xt = tile_operand(t, x, "rms_norm", "x", where);
  if (n <= 0) {
    t.fail("err_invalid_rms_norm_size", where,
           fmt::format("nl::rms_norm: n = {}; the number of values the mean square divides by must be positive", n));
  }
  const DType cd = o.compute_dtype.value_or(DType::fp32);
  const axes ax = normalized(a, xt.shape().size());
  // RMS = sqrt(sum(x^2) / n + epsilon); the result x / RMS * w.
  const tile ss = sum(square(xt, {.dtype = cd}, loc), ax, {.dtype = cd, .keepdims = true}, loc);
  const tile ms = add(divide(ss, static_cast<double>(n), {.dtype = cd}, loc), o.epsilon, {.dtype = cd}, loc);
  const tile normed = divide(xt, sqrt(ms, {.dtype = cd}, loc), {.dtype = cd}, loc);
  return multiply(normed, w, {.dtype = o.dtype.value_or(xt.dtype())}, loc);
}

}  // namespace nki::language
