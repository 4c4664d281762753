/**
 * \file tensor_add_tiled: c = a + b with the tile size as a parameter, for tile sweeps.
 *
 * NKI's loop structure: the launch grid spreads the partition tiles over the two cores of an
 * LNC=2 logical core, and each instance walks its row of free tiles with affine_range.
 */
#include <fmt/format.h>

#include "kernel_inputs.h"
#include "kernel_memo.h"
#include "nki/kernels.h"
#include "nki/nki.h"

namespace nl = nki::language;

namespace nki::kernels {

namespace {

constexpr const char* kName = "tensor_add_tiled";

/** 1, 2, 4, ..., max. */
std::vector<std::int64_t> powers_of_two(std::int64_t max) {
  std::vector<std::int64_t> v;
  for (std::int64_t x = 1; x <= max; x *= 2) v.push_back(x);
  return v;
}

TensorAddTiles tiles_of(const TuningConfig& c) { return {c.at("P"), c.at("F")}; }

}  // namespace

Kernel tensor_add_tiled(TensorAddTiles tiles) {
  return memo_kernel(std::pair(tiles.p, tiles.f), [&](const auto&) {
    return nki::jit(
        kName,
        [t = tiles](nl::tensor a, nl::tensor b) {
          auto c = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
          auto ip = nl::program_id(0) * t.p + nl::arange(t.p)[nl::_, nl::newaxis];  // (P, 1): this instance's rows
          for (auto j : nl::affine_range(a.shape()[1] / t.f)) {
            auto jf = j * t.f + nl::arange(t.f)[nl::newaxis, nl::_];  // (1, F): the j-th free tile
            nl::store(c[ip, jf], nl::load(a[ip, jf]) + nl::load(b[ip, jf]));
          }
          return c;
        },
        {"a", "b"});
  });
}

GridSpec tensor_add_tiled_grid(TensorAddTiles t, const std::vector<Shape>& shapes) {
  check_argument_count(kName, shapes, 2);
  if (shapes[0] != shapes[1]) {
    throw UserError("err_input_shape_mismatch", kName, {},
                    fmt::format("inputs have different shapes {} and {}", shape_str(shapes[0]), shape_str(shapes[1])));
  }
  const Shape& s = shapes[0];
  if (t.p < 1 || t.f < 1 || s.size() != 2 || s[0] % (2 * t.p) != 0 || s[1] % t.f != 0) {
    throw UserError("err_input_shape_not_tiled", kName, {},
                    fmt::format("input shape {} is not a 2-D multiple of [{},{}] (P={} rows on each of 2 cores, F={})",
                                shape_str(s), 2 * t.p, t.f, t.p, t.f));
  }
  return GridSpec{{nl::spmd_dim(s[0] / (2 * t.p), nl::nc(2))}};
}

TunableKernel tensor_add_tiled_tunable() {
  TunableKernel k;
  k.name = kName;
  k.description = "c = a + b, [P,F] tiles, grid [spmd_dim(R/2P, nc(2))], affine_range over C/F free tiles";
  k.params = {{"P", "partition rows of a tile", powers_of_two(512), 128},
              {"F", "free elements of a tile", powers_of_two(65536), 512}};
  k.make = [](const TuningConfig& c) { return tensor_add_tiled(tiles_of(c)); };
  k.grid = [](const TuningConfig& c, const std::vector<Shape>& shapes) {
    return tensor_add_tiled_grid(tiles_of(c), shapes);
  };
  // The partition limit is the one a tile size can break before any shape is known; the SBUF
  // capacity of a configuration is measured by the simulator's check (nki::config_rejection).
  k.forbidden = [](const TuningConfig& c, const std::vector<TensorSpec>&,
                   const sim::TargetSpec& target) -> std::optional<std::string> {
    if (c.at("P") > target.partitions) {
      return fmt::format("err_num_partition_exceed_arch_limit: P={} rows exceed the {} partitions of {}'s SBUF",
                         c.at("P"), target.partitions, target.name);
    }
    return std::nullopt;
  };
  return k;
}

}  // namespace nki::kernels
