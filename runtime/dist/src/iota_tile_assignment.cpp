/** \file Recognising a device array as a transposed iota, and printing it as XLA does. */
#include "nki/iota_tile_assignment.h"

#include <fmt/format.h>

#include <algorithm>

namespace nki {

std::string IotaForm::str() const {
  std::string s = fmt::format("<=[{}]", fmt::join(reshape_dims, ","));
  if (!perm.empty()) s += fmt::format("T({})", fmt::join(perm, ","));
  return s;
}

std::optional<IotaForm> iota_form(std::span<const int> ids) {
  const auto n = static_cast<std::int64_t>(ids.size());
  if (n == 0) return std::nullopt;
  // A permutation of 0..n-1 starting at 0, or nothing.
  std::vector<char> seen(static_cast<std::size_t>(n), 0);
  for (int id : ids) {
    if (id < 0 || id >= n || seen[static_cast<std::size_t>(id)]) return std::nullopt;
    seen[static_cast<std::size_t>(id)] = 1;
  }
  if (ids[0] != 0) return std::nullopt;

  // Walk outwards from the innermost position: each dimension is the longest run of
  // positions `step` apart whose ids grow by a constant stride. Runs are maximal, so
  // dimensions that could merge are merged: the result is canonical.
  struct Dim {
    std::int64_t size, stride;
  };
  std::vector<Dim> inner_first;
  std::int64_t step = 1;
  while (step < n) {
    const std::int64_t stride = ids[static_cast<std::size_t>(step)];
    std::int64_t d = 1;
    while (d * step < n && ids[static_cast<std::size_t>(d * step)] == d * stride) ++d;
    inner_first.push_back({d, stride});
    step *= d;
  }
  if (step != n) return std::nullopt;

  // Every id must be the strided sum of its coordinates...
  for (std::int64_t flat = 0; flat < n; ++flat) {
    std::int64_t rest = flat, want = 0;
    for (const Dim& dim : inner_first) {
      want += (rest % dim.size) * dim.stride;
      rest /= dim.size;
    }
    if (ids[static_cast<std::size_t>(flat)] != want) return std::nullopt;
  }
  // ...and the strides must be the row-major strides of the dims sorted by stride.
  std::vector<std::size_t> by_stride(inner_first.size());
  for (std::size_t i = 0; i < by_stride.size(); ++i) by_stride[i] = i;
  std::sort(by_stride.begin(), by_stride.end(),
            [&](std::size_t a, std::size_t b) { return inner_first[a].stride > inner_first[b].stride; });
  std::int64_t expect = 1;
  for (std::size_t k = by_stride.size(); k-- > 0;) {
    const Dim& dim = inner_first[by_stride[k]];
    if (dim.stride != expect) return std::nullopt;
    expect *= dim.size;
  }

  IotaForm form;
  for (std::size_t i : by_stride) form.reshape_dims.push_back(inner_first[i].size);
  if (form.reshape_dims.empty()) form.reshape_dims.push_back(n);
  // Output dim j (outermost first) is reshape dim perm[j].
  bool identity = true;
  for (std::size_t j = 0; j < inner_first.size(); ++j) {
    const std::size_t dim = inner_first.size() - 1 - j;
    const int p = static_cast<int>(std::find(by_stride.begin(), by_stride.end(), dim) - by_stride.begin());
    form.perm.push_back(p);
    identity = identity && p == static_cast<int>(j);
  }
  if (identity) form.perm.clear();
  return form;
}

std::optional<std::string> iota_str(const Shape& dims, std::span<const int> ids) {
  const std::optional<IotaForm> form = iota_form(ids);
  if (!form) return std::nullopt;
  return fmt::format("[{}]{}", fmt::join(dims, ","), form->str());
}

}  // namespace nki
