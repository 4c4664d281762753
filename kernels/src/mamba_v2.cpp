/**
 * \file mamba_v2: mamba_v1 with the loops swapped, channel tiles outside states, so delta and u
 * load once per channel tile and the sum over states is one [128, seq_len] SBUF tile.
 */
#include "nki/mamba.h"
#include "nki/nki.h"

namespace nl = nki::language;
namespace isa = nki::isa;

namespace nki::kernels {

const Kernel& mamba_v2() {
  static const Kernel kernel = nki::jit(
      "mamba_v2",
      [](nl::tensor delta, nl::tensor u, nl::tensor A, nl::tensor B, nl::tensor C) {
        const MambaDims d = mamba_dims("mamba_v2", {delta.shape(), u.shape(), A.shape(), B.shape(), C.shape()}, 1);
        const std::int64_t seq_len = d.seq_len;
        auto output = nl::ndarray({d.batch, d.channels, seq_len}, delta.dtype(), nl::shared_hbm, "output");
        const std::int64_t channel_psize = nl::tile_size::pmax;
        const std::int64_t n_channel_tile = d.channels / channel_psize;

        for (auto i_batch : nl::affine_range(d.batch)) {
          for (auto i_channel_tile : nl::affine_range(n_channel_tile)) {
            const nl::index channel_start = i_channel_tile * channel_psize;
            const nl::ds channels(channel_start, channel_psize);
            auto scanC_accum = nl::zeros({nl::par_dim(channel_psize), seq_len}, delta.dtype(), nl::sbuf, "scanC_accum");

            // Loaded once, reused by every state.
            auto delta_i = nl::load(delta[i_batch, channels, nl::ds(0, seq_len)]);  // (128, seq_len)
            auto u_i = nl::load(u[i_batch, channels, nl::ds(0, seq_len)]);

            for (auto i_state : nl::affine_range(d.state_size)) {
              auto A_i = nl::load(A[channels, i_state]);  // (128)
              auto deltaA = isa::activation(nl::exp, delta_i, 0.0, A_i);

              auto B_i = nl::load(B[i_batch, nl::ds(i_state, 1), nl::ds(0, seq_len)]);  // (1, seq_len)
              auto deltaU = isa::tensor_tensor(delta_i, u_i, nl::multiply);
              auto B_i_bcast = B_i.broadcast_to({channel_psize, seq_len});
              auto deltaBu = isa::tensor_tensor(deltaU, B_i_bcast, nl::multiply);

              auto scan_res = isa::tensor_tensor_scan(deltaA, deltaBu, 0.0, nl::multiply, nl::add);

              auto C_i = nl::load(C[i_batch, nl::ds(i_state, 1), nl::ds(0, seq_len)]);
              auto C_i_bcast = C_i.broadcast_to({channel_psize, seq_len});
              auto scanC = isa::tensor_tensor(scan_res, C_i_bcast, nl::multiply);
              scanC_accum[nl::ds(0, channel_psize), nl::ds(0, seq_len)] += scanC;
            }
            nl::store(output[i_batch, channels, nl::ds(0, seq_len)],
                      scanC_accum[nl::ds(0, channel_psize), nl::ds(0, seq_len)]);
          }
        }
        return output;
      },
      {"delta", "u", "A", "B", "C"});
  return kernel;
}

}  // namespace nki::kernels
