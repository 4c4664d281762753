/** \file Validation pass: hardware limits and provable misuse, with NKI's error names. */
#include <fmt/format.h>

#include "nki/ir/passes.h"
#include "nki/tile_limits.h"

namespace nki::ir {

namespace {

struct Validator {
  const KernelIR& k;
  const std::vector<std::int64_t>& grid;

  [[noreturn]] void fail(const char* name, const SourceLoc& loc, std::string detail) const {
    throw UserError(name, k.name, loc, std::move(detail));
  }

  void check_partitions(const Shape& shape, const SourceLoc& loc) const {
    if (!shape.empty() && shape[0] > tile_limits::pmax) {
      fail("err_num_partition_exceed_arch_limit", loc,
           fmt::format("number of partitions {} exceeds architecture limitation of {}", shape[0],
                       tile_limits::pmax));
    }
  }

  void check_access(const Access& a) const {
    const TensorDecl& t = k.tensors.at(a.tensor);
    for (const IndexExpr& e : a.indices) {
      if (e.unexpanded_arange) {
        fail("err_1d_arange_not_supported", a.loc,
             fmt::format("tensor {} is indexed with a 1-D arange({}); expand it with [_, newaxis] or "
                         "[newaxis, _]",
                         t.name, *e.unexpanded_arange));
      }
    }
    check_partitions(a.shape, a.loc);
    for (std::size_t d = 0; d < a.indices.size(); ++d) {
      const IndexExpr& e = a.indices[d];
      const IndexRange r = range_of(e, [&](Sym s) -> std::int64_t {
        if (s.kind == Sym::Kind::program_id) return grid.at(s.index);
        return e.shape.at(s.index);
      });
      if (r.lo < 0 || r.hi >= t.shape[d]) {
        fail("err_tensor_access_out_of_bound", a.loc,
             fmt::format("out-of-bound access to tensor {} {} on dimension {}: index {} ranges over [{}, {}], "
                         "valid is [0, {}]",
                         t.name, shape_str(t.shape), d, to_string(e), r.lo, r.hi, t.shape[d] - 1));
      }
    }
  }

  void operator()(const LoadOp& op) const { check_access(op.src); }
  void operator()(const BinaryOp& op) const { check_partitions(k.tiles.at(op.result).shape, op.loc); }
  void operator()(const StoreOp& op) const { check_access(op.dst); }
  void operator()(const std::monostate&) const {}
};

}  // namespace

void validate(const KernelIR& k, const std::vector<std::int64_t>& grid) {
  if (static_cast<int>(grid.size()) < k.grid_rank) {
    throw InternalError(fmt::format("validate: grid of rank {} for a kernel traced at rank {}", grid.size(),
                                    k.grid_rank));
  }
  Validator v{k, grid};
  for (const Op& op : k.body) std::visit(v, op);
}

}  // namespace nki::ir
