/** \file nki::PartitionSpec: how each tensor dimension maps to mesh axes, and its Python-tuple parser. */
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "nki/mesh.h"

namespace nki {

/** One mesh axis in a spec: by name ('x') or by index (0). */
using MeshAxis = std::variant<std::string, int>;

/**
 * A partition spec, one entry per tensor dimension, as torch_xla and JAX write it:
 * an entry with no axes is replicated (`None`), one axis shards the dimension over that
 * mesh axis, several axes (a tuple, major to minor) shard it over their product.
 */
class PartitionSpec {
 public:
  using Entry = std::vector<MeshAxis>;  ///< empty: None

  PartitionSpec() = default;
  explicit PartitionSpec(std::vector<Entry> entries) : entries_(std::move(entries)) {}

  /**
   * Parses Python tuple syntax: `(('r','b'), None)`, `('x', None)`, `(0, 1)`, `("x",)`.
   * Entries are None, a quoted name, an integer index, or a tuple of names and indices
   * (an empty inner tuple is None). The whole spec must be a tuple, so `('x')` (a
   * parenthesised string) is refused, as in Python. Throws nki::UserError
   * `err_invalid_partition_spec` naming the text and what was expected.
   */
  static PartitionSpec parse(std::string_view text);

  const std::vector<Entry>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }
  /** Python's repr: `(('r', 'b'), None)`, `('x',)`. */
  std::string str() const;

  /**
   * Checks the spec against a mesh and a tensor rank and resolves every axis to its mesh
   * index: one entry per dimension (`err_partition_spec_rank_mismatch`), every axis known
   * (`err_unknown_mesh_axis`), none used twice (`err_mesh_axis_used_twice`).
   */
  std::vector<std::vector<int>> resolve(const Mesh& mesh, std::size_t rank) const;

  friend bool operator==(const PartitionSpec&, const PartitionSpec&) = default;

 private:
  std::vector<Entry> entries_;
};

}  // namespace nki
