/**
 * \file mamba_v3: mamba_v2 with the sequence in tiles of F = 512 (unrolled at trace time, as the
 * tutorial's static_range): each tile's scan starts from the last column of the tile before
 * (scan_init), so the intermediate tiles stay small. F is tunable (`nki bench mamba_v3`).
 */
#include <fmt/format.h>

#include "kernel_memo.h"
#include "nki/mamba.h"
#include "nki/nki.h"

namespace nl = nki::language;
namespace isa = nki::isa;

namespace nki::kernels {

Kernel mamba_v3(std::int64_t seq_tile) {
  return memo_kernel(seq_tile, [](std::int64_t seq_len_fsize) {
    return nki::jit(
      "mamba_v3",
      [seq_len_fsize](nl::tensor delta, nl::tensor u, nl::tensor A, nl::tensor B, nl::tensor C) {
        const MambaDims d =
            mamba_dims("mamba_v3", {delta.shape(), u.shape(), A.shape(), B.shape(), C.shape()}, seq_len_fsize);
        const std::int64_t seq_len = d.seq_len;
        auto output = nl::ndarray({d.batch, d.channels, seq_len}, delta.dtype(), nl::shared_hbm, "output");
        const std::int64_t channel_psize = nl::tile_size::pmax;
        const std::int64_t n_channel_tile = d.channels / channel_psize;
        const std::int64_t n_seq_len_tile = seq_len / seq_len_fsize;

        for (auto i_batch : nl::affine_range(d.batch)) {
          for (auto i_channel_tile : nl::affine_range(n_channel_tile)) {
            const nl::index channel_start = i_channel_tile * channel_psize;
            const nl::ds channels(channel_start, channel_psize);
            auto scanC_accum = nl::zeros({nl::par_dim(channel_psize), seq_len}, delta.dtype(), nl::sbuf, "scanC_accum");

            auto delta_i = nl::load(delta[i_batch, channels, nl::ds(0, seq_len)]);  // (128, seq_len)
            auto u_i = nl::load(u[i_batch, channels, nl::ds(0, seq_len)]);

            for (auto i_state : nl::affine_range(d.state_size)) {
              auto A_i = nl::load(A[channels, i_state]);  // (128)
              // The scan's state carried from one sequence tile to the next.
              auto scan_init = nl::zeros({channel_psize, 1}, delta_i.dtype(), nl::sbuf, "scan_init");
              for (std::int64_t i_seq_len_tile : nl::static_range(n_seq_len_tile)) {
                const nl::ds seq(i_seq_len_tile * seq_len_fsize, seq_len_fsize);
                const nl::ds all_channels(0, channel_psize);

                auto deltaA = isa::activation(nl::exp, delta_i[all_channels, seq], 0.0, A_i);  // (128, 512)

                auto B_i = nl::load(B[i_batch, nl::ds(i_state, 1), seq]);  // (1, 512)
                auto deltaU = isa::tensor_tensor(delta_i[all_channels, seq], u_i[all_channels, seq], nl::multiply);
                auto B_i_bcast = B_i.broadcast_to({channel_psize, seq_len_fsize});
                auto deltaBu = isa::tensor_tensor(deltaU, B_i_bcast, nl::multiply);

                auto scan_res = isa::tensor_tensor_scan(deltaA, deltaBu, scan_init, nl::multiply, nl::add);
                scan_init.all() = scan_res[all_channels, seq_len_fsize - 1];  // (128): the last column

                auto C_i = nl::load(C[i_batch, nl::ds(i_state, 1), seq]);
                auto C_i_bcast = C_i.broadcast_to({channel_psize, seq_len_fsize});
                auto scanC = isa::tensor_tensor(scan_res, C_i_bcast, nl::multiply);
                scanC_accum[all_channels, seq] += scanC;
              }
            }
            nl::store(output[i_batch, channels, nl::ds(0, seq_len)],
                      scanC_accum[nl::ds(0, channel_psize), nl::ds(0, seq_len)]);
          }
        }
        return output;
      },
      {"delta", "u", "A", "B", "C"});
  });
}

const Kernel& mamba_v3() {
  static const Kernel kernel = mamba_v3(kMambaSeqTile);
  return kernel;
}

GridSpec mamba_v3_grid(std::int64_t seq_tile, const std::vector<Shape>& shapes) {
  mamba_dims("mamba_v3", shapes, seq_tile);
  return GridSpec{};
}

TunableKernel mamba_v3_tunable() {
  TunableKernel k;
  k.name = "mamba_v3";
  k.description = "fused mamba with the sequence in F-wide tiles, each scan seeded by the one before";
  std::vector<std::int64_t> sizes;
  for (std::int64_t f = 64; f <= 8192; f *= 2) sizes.push_back(f);
  k.params = {{"F", "sequence elements per tile (seq_len a multiple of F)", sizes, kMambaSeqTile}};
  k.make = [](const TuningConfig& c) { return mamba_v3(c.at("F")); };
  k.grid = [](const TuningConfig& c, const std::vector<Shape>& shapes) { return mamba_v3_grid(c.at("F"), shapes); };
  // No F breaks a hardware limit before the shapes are known: an F that does not divide seq_len
  // is refused by the grid, one whose tiles overflow SBUF by the simulator's capacity check.
  k.forbidden = [](const TuningConfig&, const std::vector<TensorSpec>&, const sim::TargetSpec&) -> std::optional<std::string> {
    return std::nullopt;
  };
  return k;
}

}  // namespace nki::kernels
