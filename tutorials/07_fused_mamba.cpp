/**
 * \file Tutorial 7: NKI's fused-mamba tutorial, the selective scan of a Mamba layer in one kernel.
 *
 * For every batch, channel c and state s the layer runs a recurrence along the sequence:
 *   scan[t] = exp(delta[c, t] * A[c, s]) * scan[t - 1] + delta[c, t] * B[s, t] * u[c, t]
 * and the output is the sum over states of C[s, t] * scan[t]. Channels sit on the partitions
 * (tiles of 128); the sequence is the free axis, walked in order by isa::tensor_tensor_scan on
 * the Vector engine. B and C rows are shared by every channel: tile.broadcast_to spreads a
 * [1, L] row over the 128 partitions. The sum over states is `+=` into an SBUF accumulator.
 *
 * - mamba_v1 loops states outside channel tiles, so it reloads delta and u for every state and
 *   keeps one accumulator tile per channel tile (a 3-D SBUF array, par_dim in the middle).
 * - mamba_v2 swaps the loops: delta and u load once per channel tile, one accumulator.
 * - mamba_v3 cuts the sequence into 512-wide tiles; each tile's scan starts from the last
 *   column of the previous one (scan_res[0:128, 511], a tile subscript), which keeps the
 *   intermediate tiles small.
 *
 * Each version is checked against a float64 host reference (the tutorial's PyTorch math) and
 * the simulated trn2 latency of each is printed. All three compute the same fp32 operations per
 * element in the same order, so their outputs are also bit-identical, as the tutorial asserts.
 *
 * What the simulator says: the Vector engine bounds all three (86-90% busy: per state and
 * channel tile it multiplies twice, scans, multiplies by C, adds into the accumulator and copies
 * two broadcast rows). v2's saved loads were already hidden behind that work in v1, and v3's
 * smaller tiles pay the per-instruction access bubble more often, so here v1 is slightly ahead;
 * `nki bench mamba_v3 --sweep F=128..2048` shows the sequence tile's effect.
 */
#include <fmt/format.h>

#include "nki/mamba.h"
#include "nki/mamba_reference.h"
#include "nki/nki.h"
#include "nki/profile.h"
#include "tutorial_check.h"

namespace nl = nki::language;
namespace nk = nki::kernels;

int main() {
  // The tutorial's sizes but a shorter sequence (the host reference interpreter is slow): two
  // channel tiles, two sequence tiles of v3, 16 states.
  const nk::MambaDims d{1, 256, 1024, 16};
  const nki::Shape sd{d.batch, d.channels, d.seq_len}, sa{d.channels, d.state_size}, sb{d.batch, d.state_size, d.seq_len};
  const nki::Tensor delta = tutorial::random_tensor(sd, nl::float32, 0.0f, 0.2f, 1);  // a softplus output: > 0
  const nki::Tensor u = tutorial::random_tensor(sd, nl::float32, -1.0f, 1.0f, 2);
  const nki::Tensor A = tutorial::random_tensor(sa, nl::float32, -2.0f, -0.1f, 3);  // negative: the state decays
  const nki::Tensor B = tutorial::random_tensor(sb, nl::float32, -1.0f, 1.0f, 4);
  const nki::Tensor C = tutorial::random_tensor(sb, nl::float32, -1.0f, 1.0f, 5);
  const std::vector<nki::Tensor> args{delta, u, A, B, C};
  const std::vector<double> want =
      nk::reference::mamba(delta.to_values(), u.to_values(), A.to_values(), B.to_values(), C.to_values(), d);
  std::vector<float> expected(want.begin(), want.end());

  struct Version {
    const char* name;
    const nki::Kernel& kernel;
    nki::GridSpec (*grid)(const std::vector<nki::Shape>&);
  };
  const Version versions[] = {{"mamba_v1", nk::mamba_v1(), nk::mamba_v1_grid},
                              {"mamba_v2", nk::mamba_v2(), nk::mamba_v2_grid},
                              {"mamba_v3", nk::mamba_v3(), nk::mamba_v3_grid}};
  int failed = 0;
  std::vector<nki::Tensor> outs;
  for (const Version& v : versions) {
    const nki::GridSpec grid = v.grid({sd, sd, sa, sb, sb});
    outs.push_back(v.kernel.launch(grid).run(args).outputs.at(0));
    std::vector<nki::TensorSpec> specs;
    for (const nki::Tensor& t : args) specs.push_back({t.shape(), t.dtype()});
    const nki::ProfileReport p = nki::profile(v.kernel.launch(grid), specs, "trn2", false);
    fmt::print("{}: [{}x{}x{}], {} states: simulated {:.1f} us; ", v.name, d.batch, d.channels, d.seq_len, d.state_size,
               p.latency_us);
    failed += tutorial::check_allclose(outs.back().to_floats(), expected, 1e-5, 1e-3);
  }
  for (std::size_t i = 1; i < outs.size(); ++i) {
    const bool same = outs[i].to_floats() == outs[0].to_floats();
    fmt::print("{} and mamba_v1 outputs {}\n", versions[i].name, same ? "are identical" : "differ");
    failed += same ? 0 : 1;
  }
  if (failed != 0) {
    fmt::print("{} checks failed\n", failed);
    return 1;
  }
  fmt::print("all versions: NKI and reference match\n");
  return 0;
}
