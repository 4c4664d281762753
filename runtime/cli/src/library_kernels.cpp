/** \file The kernel library's kernels, registered by name for the `nki` command. */
#include <fmt/format.h>

#include "nki/attention_kernels.h"
#include "nki/cli.h"
#include "nki/kernels.h"
#include "nki/mamba.h"

namespace nki::cli {

using namespace nki::kernels;

namespace {

/** The row-wise kernels (row_tiles.h) share their row tiles over a grid's first axis, whatever its size. */
OtherGrids one_axis_of_any_size() {
  return {[](const GridSpec& g) { return g.axes.size() == 1; }, "one axis of any size (e.g. \"spmd_dim(1,nc(2))\")"};
}

}  // namespace

void register_library_kernels(KernelRegistry& registry) {
  registry.add({"tensor_add", "c = a + b, [128,512] tiles, grid [P/128, F/512] on one core", tensor_add(),
                tensor_add_grid});
  registry.add({"tensor_add_nc2", "c = a + b, [128,512] tiles, grid [spmd_dim(P/256, nc(2)), F/512] on two cores",
                tensor_add(), tensor_add_nc2_grid});
  registry.add({"matmul_basic", "result = lhsT^T @ rhs in one tile: lhsT [K<=128, M<=128], rhs [K, N<=512]",
                matmul_basic(), matmul_basic_grid});
  registry.add({"matmul_tiled", "result = lhsT^T @ rhs, [128x512] result tiles, PSUM accumulation over K tiles",
                matmul_tiled(), matmul_tiled_grid});
  registry.add({"matmul_hoist_load", "matmul_tiled with the lhsT and rhs loads hoisted out of the K loop",
                matmul_hoist_load(), matmul_hoist_load_grid});
  registry.add({"matmul_block_free_dimension", "matmul in blocks of 2x2 result tiles (M % 256, N % 1024)",
                matmul_block_free_dimension(), matmul_block_free_dimension_grid});
  registry.add({"matmul_fully_optimized",
                "matmul blocked over M, N, K (16x2x8 tiles), K blocks sequential, fp32 result tiles in SBUF",
                matmul_fully_optimized(), [](const std::vector<Shape>& s) { return matmul_fully_optimized_grid(s); }});
  registry.add({"softmax", "softmax over each row of x [R, C], row tiles of 128 (masked last tile)", softmax(),
                softmax_grid, one_axis_of_any_size()});
  registry.add({"rmsnorm", "a / sqrt(mean(a^2)) * g per row, a [R, D], g [D], row tiles of 128", rmsnorm(),
                rmsnorm_grid, one_axis_of_any_size()});
  registry.add({"layernorm", "(x - mean) / sqrt(var + 1e-5) * gamma + beta per row, gamma and beta [1, D]",
                layernorm(), layernorm_grid, one_axis_of_any_size()});
  registry.add({"transpose2d", "in [P, Y, X] -> out [P, X, Y]: each row's matrix transposed in SBUF", transpose2d(),
                transpose2d_grid});
  registry.add({"average_pool2d", "[C, H, W] -> [C, H/2, W/2]: the mean of each 2x2 window", average_pool2d(),
                [](const std::vector<Shape>& s) { return average_pool2d_grid(s, kAveragePoolSize); }});
  registry.add({"mamba_v1", "fused mamba SSM scan: delta, u [B, C, L], A [C, S], B, C [B, S, L]; states outer",
                mamba_v1(), mamba_v1_grid});
  registry.add({"mamba_v2", "mamba_v1 with channel tiles outer: delta and u loaded once per channel tile", mamba_v2(),
                mamba_v2_grid});
  registry.add({"mamba_v3", "mamba_v2 with the sequence in 512-wide tiles, each scan seeded by the one before",
                mamba_v3(), [](const std::vector<Shape>& s) { return mamba_v3_grid(s); }});
  for (const AttentionVersion& a : attention_versions()) {
    const char* name = a.name;
    registry.add({name, fmt::format("NKI attention tutorial, q k v [128, seqlen]: {}", a.summary), a.kernel(),
                  [name](const std::vector<Shape>& s) { return attention_grid(name, s); }});
  }
  registry.add({"mlp", "y = gelu(x @ w1) @ w2 in fp32 on one core, x [B, H], w1 [H, F], w2 [F, H]", mlp(), mlp_grid});
  registry.add({"tensor_parallel_mlp",
                "one rank's shard of gelu(x @ w1) @ w2 (w1 by columns, w2 by rows), all-reduced over the mesh's tensor axis",
                tensor_parallel_mlp(), mlp_grid});
  registry.add_tunable(tensor_add_tiled_tunable());
  registry.add_tunable(matmul_fully_optimized_tunable());  // the plain matmul_fully_optimized above stays
  registry.add_tunable(mamba_v3_tunable());               // so does the plain mamba_v3
}

}  // namespace nki::cli
