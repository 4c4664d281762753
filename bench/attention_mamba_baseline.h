/**
 * \file Plain C++ fp32 baselines of the attention-forward and fused-mamba tutorial kernels (no nki
 * code): the same math as nki/kernel_references.h and nki/mamba_reference.h, in fp32 on one host
 * thread, written to be fast (register-blocked matmuls, contiguous inner loops the compiler
 * vectorizes). Compiled in its own translation unit with the host's ISA (NKI_BENCH_NATIVE).
 */
#pragma once

#include <cstdint>
#include <vector>

namespace nki_bench {

/** Scratch an attention baseline reuses between calls (allocated once, by the first call). */
struct AttentionScratch {
  std::vector<float> kp, vp;  ///< k and v^T packed in panels of 64 columns
  std::vector<float> scores;   ///< one block of query rows, [rows, seqlen]
};

/**
 * out [seqlen, d_head] = softmax(q^T k) v^T for q, k, v [d_head, seqlen] (row-major), the softmax
 * over each row with its max subtracted and the division after the P @ V^T product (as attn_fwd_v5
 * on). d_head <= 128 and seqlen must be multiples of 64. One thread.
 */
void attention_forward_f32(const float* q, const float* k, const float* v, float* out, std::int64_t d_head,
                           std::int64_t seqlen, AttentionScratch& scratch);

/** Scratch a mamba baseline reuses between calls. */
struct MambaScratch {
  std::vector<float> work;  ///< delta, u, the output and exp(delta A) of one block of channels, transposed
};

/**
 * The selective scan: out [batch, channels, seq_len] = sum over states s of C[b, s, t] * scan[t],
 * scan[t] = exp(delta[b, c, t] A[c, s]) scan[t-1] + delta[b, c, t] B[b, s, t] u[b, c, t] from 0,
 * for delta, u [batch, channels, seq_len], A [channels, state_size], B, C [batch, state_size,
 * seq_len]. channels must be a multiple of 64. One thread; the vector axis is the channels (each
 * scan is sequential in t).
 */
void mamba_f32(const float* delta, const float* u, const float* A, const float* B, const float* C, float* out,
               std::int64_t batch, std::int64_t channels, std::int64_t seq_len, std::int64_t state_size,
               MambaScratch& scratch);

}  // namespace nki_bench
