/** \file Replica groups from mesh (sub-)axes: split, transpose, group; explicit and iota forms. */
#include "nki/replica_groups.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "nki/error.h"
#include "nki/iota_tile_assignment.h"

namespace nki {

namespace {

[[noreturn]] void bad_ref(std::string_view text, const std::string& why) {
  throw UserError("err_invalid_axis_ref", "", {}, fmt::format("axis \"{}\": {}", text, why));
}

std::int64_t parse_count(std::string_view text, std::string_view digits, const char* what) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || v < 1) {
    bad_ref(text, fmt::format("{} \"{}\" is not a positive integer", what, digits));
  }
  return v;
}

}  // namespace

AxisRef AxisRef::parse(std::string_view text) {
  std::string_view s = text;
  AxisRef ref;
  if (!s.empty() && (s.front() == '"' || s.front() == '\'')) {
    const std::size_t close = s.find(s.front(), 1);
    if (close == std::string_view::npos) bad_ref(text, "the quoted name is not closed");
    ref.name = std::string(s.substr(1, close - 1));
    s.remove_prefix(close + 1);
  } else {
    const std::size_t colon = s.find(':');
    ref.name = std::string(s.substr(0, colon));
    s = colon == std::string_view::npos ? std::string_view() : s.substr(colon);
  }
  if (ref.name.empty()) bad_ref(text, "the axis name is empty");
  for (char c : ref.name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
      bad_ref(text, "expected an axis name such as y, or a sub-axis such as y:(1)2");
    }
  }
  if (s.empty()) return ref;
  // :(m)k
  if (!s.starts_with(":(")) bad_ref(text, "expected a sub-axis written name:(pre-size)size, such as y:(1)2");
  const std::size_t close = s.find(')');
  if (close == std::string_view::npos) bad_ref(text, "the pre-size is not closed with ')'");
  ref.pre_size = parse_count(text, s.substr(2, close - 2), "pre-size");
  ref.size = parse_count(text, s.substr(close + 1), "size");
  return ref;
}

std::string AxisRef::str() const {
  if (!is_sub_axis()) return fmt::format("\"{}\"", name);
  return fmt::format("\"{}\":({}){}", name, pre_size, size);
}

std::string ReplicaGroups::str() const {
  std::vector<std::string> gs;
  for (const std::vector<int>& g : groups) gs.push_back(fmt::format("[{}]", fmt::join(g, ",")));
  return fmt::format("[{}]", fmt::join(gs, ","));
}

ReplicaGroups replica_groups(const Mesh& mesh, const std::vector<AxisRef>& axes) {
  const Shape& ms = mesh.mesh_shape();
  // Resolve each reference to its axis and to a range [lo, hi) of "pre-size" cut points
  // within the axis (lo = m, hi = m*k; the whole axis is [1, n)).
  struct Ref {
    int axis;
    std::int64_t lo, hi;
  };
  std::vector<Ref> refs;
  for (const AxisRef& a : axes) {
    const std::optional<int> ax = mesh.axis_index(a.name);
    if (!ax) {
      std::vector<std::string> known;
      for (const std::string& n : mesh.axis_names()) known.push_back(fmt::format("\"{}\"", n));
      throw UserError("err_unknown_mesh_axis", "", {},
                      fmt::format("axis {} is not in the mesh {}; its axes are {}", a.str(), mesh.str(),
                                  known.empty() ? std::string("unnamed") : fmt::format("{}", fmt::join(known, ", "))));
    }
    const std::int64_t n = ms[static_cast<std::size_t>(*ax)];
    Ref r{*ax, 1, n};
    if (a.is_sub_axis()) {
      if (a.size < 2) {
        throw UserError("err_invalid_axis_ref", "", {}, fmt::format("sub-axis {}: its size must be at least 2", a.str()));
      }
      if (n % (a.pre_size * a.size) != 0 || a.pre_size * a.size > n) {
        throw UserError("err_invalid_axis_ref", "", {},
                        fmt::format("sub-axis {} does not fit axis \"{}\" of size {}: pre-size x size ({} x {}) must "
                                    "divide {}",
                                    a.str(), a.name, n, a.pre_size, a.size, n));
      }
      if (a.pre_size == 1 && a.size == n) {
        throw UserError("err_invalid_axis_ref", "", {},
                        fmt::format("sub-axis {} is the whole axis \"{}\"; write \"{}\"", a.str(), a.name, a.name));
      }
      r.lo = a.pre_size;
      r.hi = a.pre_size * a.size;
    }
    for (std::size_t i = 0; i < refs.size(); ++i) {
      const Ref& o = refs[i];
      if (o.axis != r.axis) continue;
      if (!axes[i].is_sub_axis() && !a.is_sub_axis()) {
        throw UserError("err_mesh_axis_used_twice", "", {}, fmt::format("axis {} is used twice", a.str()));
      }
      if (!axes[i].is_sub_axis() || !a.is_sub_axis() || std::max(o.lo, r.lo) < std::min(o.hi, r.hi)) {
        throw UserError("err_mesh_axis_used_twice", "", {},
                        fmt::format("axes {} and {} overlap in mesh axis \"{}\"; a collective may use each part of an "
                                    "axis once",
                                    axes[i].str(), a.str(), a.name));
      }
    }
    refs.push_back(r);
  }

  // Split every mesh axis at the cut points of its references: parts major to minor.
  struct Part {
    int axis;
    std::int64_t lo, hi;  // pre-size range
    std::int64_t size() const { return hi / lo; }
  };
  std::vector<Part> parts;
  for (int ax = 0; ax < mesh.rank(); ++ax) {
    const std::int64_t n = ms[static_cast<std::size_t>(ax)];
    std::vector<std::int64_t> cuts{1, n};
    for (const Ref& r : refs) {
      if (r.axis != ax) continue;
      cuts.push_back(r.lo);
      cuts.push_back(r.hi);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
      if (cuts[i + 1] % cuts[i] != 0) {
        std::vector<std::string> names;
        for (std::size_t k = 0; k < refs.size(); ++k)
          if (refs[k].axis == ax) names.push_back(axes[k].str());
        throw UserError("err_invalid_axis_ref", "", {},
                        fmt::format("sub-axes {} of axis \"{}\" (size {}) do not split it into whole parts",
                                    fmt::join(names, ", "), mesh.axis_names()[static_cast<std::size_t>(ax)], n));
      }
      parts.push_back({ax, cuts[i], cuts[i + 1]});
    }
    if (cuts.size() == 1) parts.push_back({ax, 1, 1});  // an axis of size 1
  }

  // Transposition: the non-reduction parts in mesh order, then each reference's parts.
  std::vector<std::size_t> order;
  std::vector<char> reduced(parts.size(), 0);
  for (const Ref& r : refs)
    for (std::size_t p = 0; p < parts.size(); ++p)
      if (parts[p].axis == r.axis && parts[p].lo >= r.lo && parts[p].hi <= r.hi) reduced[p] = 1;
  for (std::size_t p = 0; p < parts.size(); ++p)
    if (!reduced[p]) order.push_back(p);
  std::int64_t group_size = 1;
  for (const Ref& r : refs) {
    for (std::size_t p = 0; p < parts.size(); ++p) {
      if (parts[p].axis == r.axis && parts[p].lo >= r.lo && parts[p].hi <= r.hi) {
        order.push_back(p);
        group_size *= parts[p].size();
      }
    }
  }

  // iota(N).reshape(part sizes).transpose(order), mapped through the device ids.
  Shape part_shape;
  for (const Part& p : parts) part_shape.push_back(p.size());
  const std::vector<std::int64_t> strides = row_major_strides(part_shape);
  const auto n = static_cast<std::size_t>(mesh.size());
  std::vector<int> flat;
  flat.reserve(n);
  std::vector<std::int64_t> idx(order.size(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t pos = 0;
    for (std::size_t k = 0; k < order.size(); ++k) pos += idx[k] * strides[order[k]];
    flat.push_back(mesh.device_ids()[static_cast<std::size_t>(pos)]);
    for (std::size_t k = order.size(); k-- > 0;) {
      if (++idx[k] < part_shape[order[k]]) break;
      idx[k] = 0;
    }
  }
  ReplicaGroups out;
  const auto gs = static_cast<std::size_t>(group_size);
  for (std::size_t g = 0; g < n / gs; ++g) out.groups.emplace_back(flat.begin() + g * gs, flat.begin() + (g + 1) * gs);
  out.iota = iota_str({static_cast<std::int64_t>(n / gs), group_size}, flat);
  return out;
}

}  // namespace nki
