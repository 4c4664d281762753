/** \file Helpers of the world-launch tests: launching on a mesh, both executors, exact comparison. */
#pragma once

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "language/lang_support.h"
#include "nki/world_launch.h"

namespace wt {

inline constexpr nki::Executor executors[] = {nki::Executor::halide, nki::Executor::reference};

/** kernel[grid] on every rank of `mesh` with executor `ex`. */
inline nki::WorldResult run_world(const nki::Kernel& k, const nki::Mesh& mesh, nki::Executor ex,
                                  const std::vector<nki::WorldArg>& args, std::vector<nki::PartitionSpec> out_specs,
                                  nki::GridSpec grid = {}, nki::LaunchOptions o = {}) {
  o.executor = ex;
  return nki::WorldLaunch(k.launch(std::move(grid)).with(o), mesh, {std::move(out_specs)}).run(args);
}

/** The world's ranks in consecutive groups of `g`: [[0..g-1], [g..2g-1], ...]. */
inline std::vector<std::vector<int>> groups_of_size(int world, int g) {
  std::vector<std::vector<int>> out;
  for (int base = 0; base < world; base += g) {
    auto& grp = out.emplace_back();
    for (int r = base; r < base + g; ++r) grp.push_back(r);
  }
  return out;
}

/**
 * Runs the world launch on both executors: each output, gathered, must hold `want` exactly and
 * the executors the same bytes. Returns the halide run's result.
 */
inline nki::WorldResult check_world_both(const nki::Kernel& k, const nki::Mesh& mesh, const std::vector<nki::WorldArg>& args,
                                         const std::vector<nki::PartitionSpec>& specs,
                                         const std::vector<std::vector<double>>& want, const std::string& what,
                                         nki::GridSpec grid = {}) {
  const nki::WorldResult h = run_world(k, mesh, nki::Executor::halide, args, specs, grid);
  const nki::WorldResult r = run_world(k, mesh, nki::Executor::reference, args, specs, grid);
  REQUIRE(h.outputs.size() == want.size());
  REQUIRE(r.outputs.size() == want.size());
  for (std::size_t o = 0; o < want.size(); ++o) {
    const nki::Tensor hg = h.outputs[o].gather(), rg = r.outputs[o].gather();
    const std::string w = fmt::format("{} output {}", what, o);
    lt::check_exact(rg, want[o], w + " [reference]");
    lt::check_exact(hg, want[o], w + " [halide]");
    CHECK_MESSAGE(test::first_difference(hg, rg) < 0, w << ": the executors differ");
  }
  return h;
}

}  // namespace wt
