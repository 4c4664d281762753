/**
 * \file The plain C++ attention and mamba baselines (attention_mamba_baseline.h). A leaf
 * translation unit with no nki code, so it can be built with -march=native alone.
 */
#include "attention_mamba_baseline.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace nki_bench {

namespace {

using std::ptrdiff_t;

constexpr int kMR = 4;   ///< rows of the register block
constexpr int kNR = 64;  ///< columns of the register block: 4 AVX-512 vectors, 16 accumulators in all

/** 16 floats, GCC's vector extension (one AVX-512 register; four SSE registers without -march=native). */
typedef float v16 __attribute__((vector_size(64), aligned(4)));

/**
 * c[i, j] (+)= sum over kk < depth of a[i * a_row + kk * a_k] * b[kk * b_k + j] for i < kMR, j < kNR.
 * The kMR x kNR accumulators stay in registers over the whole depth, each step one broadcast of a
 * per row and kNR / 16 vector loads of b shared by the rows. Written with vector types because g++
 * 12 does not keep a plain float acc[4][64] in registers (it spills and shuffles).
 */
template <bool Accumulate>
inline void micro_kernel(const float* a, ptrdiff_t a_row, ptrdiff_t a_k, const float* b, ptrdiff_t b_k, float* c,
                         ptrdiff_t c_row, std::int64_t depth) {
  constexpr int kV = kNR / 16;
  v16 acc[kMR][kV] = {};
  for (std::int64_t kk = 0; kk < depth; ++kk) {
    const v16* brow = reinterpret_cast<const v16*>(b + kk * b_k);
    v16 bv[kV];
    for (int j = 0; j < kV; ++j) bv[j] = brow[j];
    for (int i = 0; i < kMR; ++i) {
      const float ai = a[i * a_row + kk * a_k];
      for (int j = 0; j < kV; ++j) acc[i][j] += ai * bv[j];
    }
  }
  for (int i = 0; i < kMR; ++i) {
    v16* crow = reinterpret_cast<v16*>(c + i * c_row);
    for (int j = 0; j < kV; ++j) crow[j] = Accumulate ? crow[j] + acc[i][j] : acc[i][j];
  }
}

}  // namespace

void attention_forward_f32(const float* q, const float* k, const float* v, float* out, std::int64_t d_head,
                           std::int64_t seqlen, AttentionScratch& scratch) {
  const std::int64_t D = d_head, S = seqlen;
  constexpr std::int64_t kRows = 32;  // query rows per block: scores [32, S] stay in L2
  scratch.kp.resize(static_cast<std::size_t>(S * D));
  scratch.vp.resize(static_cast<std::size_t>(S * D));
  scratch.scores.resize(static_cast<std::size_t>(kRows * S));
  float* kp = scratch.kp.data();
  float* vp = scratch.vp.data();
  float* scores = scratch.scores.data();

  // k and v^T packed in panels of 64 columns, each panel contiguous: kp[j0 / 64][d][64] and
  // vp[e0 / 64][j][64]. The micro-kernel then streams one contiguous 256-byte row per step (rows of k
  // itself are seqlen * 4 bytes apart and would all fall into the same few cache sets).
  for (std::int64_t j0 = 0; j0 < S; j0 += kNR)
    for (std::int64_t d = 0; d < D; ++d)
      for (std::int64_t j = 0; j < kNR; ++j) kp[j0 * D + d * kNR + j] = k[d * S + j0 + j];
  for (std::int64_t e0 = 0; e0 < D; e0 += kNR)
    for (std::int64_t j0 = 0; j0 < S; j0 += 64)
      for (std::int64_t e = 0; e < kNR; ++e)
        for (std::int64_t j = j0; j < j0 + 64; ++j) vp[e0 * S + j * kNR + e] = v[(e0 + e) * S + j];

  float qp[128 * kRows];  // q[:, i0 : i0 + kRows] packed [d][kRows] (d_head <= 128)
  for (std::int64_t i0 = 0; i0 < S; i0 += kRows) {
    for (std::int64_t d = 0; d < D; ++d)
      for (std::int64_t r = 0; r < kRows; ++r) qp[d * kRows + r] = q[d * S + i0 + r];
    // scores[r, j] = sum_d q[d, i0 + r] k[d, j]: a 64-column panel of k (32 KiB) is reused from L1
    // by the 8 blocks of 4 rows.
    for (std::int64_t j0 = 0; j0 < S; j0 += kNR)
      for (std::int64_t r0 = 0; r0 < kRows; r0 += kMR)
        micro_kernel<false>(qp + r0, 1, kRows, kp + j0 * D, kNR, scores + r0 * S + j0, S, D);

    // Numerators exp(score - row max) in place, and their row sums.
    float row_sum[kRows];
    for (std::int64_t r = 0; r < kRows; ++r) {
      float* row = scores + r * S;
      float m = row[0];
      for (std::int64_t j = 1; j < S; ++j) m = std::max(m, row[j]);
      float sum = 0.0f;
      for (std::int64_t j = 0; j < S; ++j) {
        row[j] = std::exp(row[j] - m);
        sum += row[j];
      }
      row_sum[r] = sum;
    }

    // out[i0 + r, e] = sum_j P[r, j] v[e, j], then divided by the row sum.
    for (std::int64_t e0 = 0; e0 < D; e0 += kNR)
      for (std::int64_t r0 = 0; r0 < kRows; r0 += kMR)
        micro_kernel<false>(scores + r0 * S, S, 1, vp + e0 * S, kNR, out + (i0 + r0) * D + e0, D, S);
    for (std::int64_t r = 0; r < kRows; ++r) {
      const float inv = 1.0f / row_sum[r];
      float* orow = out + (i0 + r) * D;
      for (std::int64_t e = 0; e < D; ++e) orow[e] *= inv;
    }
  }
}

void mamba_f32(const float* delta, const float* u, const float* A, const float* B, const float* C, float* out,
               std::int64_t batch, std::int64_t channels, std::int64_t seq_len, std::int64_t state_size,
               MambaScratch& scratch) {
  // Each (channel, state) scan is a chain along t, so the vector axis is the channels: a block of
  // kCh channels walks t together (kCh / 16 independent AVX-512 chains hide the FMA latency).
  // delta and u of a block are transposed to [t, kCh], the output accumulated as [t, kCh].
  constexpr std::int64_t kCh = 64;
  const std::int64_t L = seq_len, S = state_size;
  const std::size_t block = static_cast<std::size_t>(L * kCh);
  scratch.work.resize(4 * block);  // delta^T, u^T, out^T, exp(delta A)^T of one channel block
  float* dt = scratch.work.data();
  float* ut = dt + block;
  float* acc = ut + block;
  float* da = acc + block;
  for (std::int64_t b = 0; b < batch; ++b) {
    const float* Bb = B + b * S * L;
    const float* Cb = C + b * S * L;
    for (std::int64_t c0 = 0; c0 < channels; c0 += kCh) {
      const std::int64_t row0 = (b * channels + c0) * L;
      for (std::int64_t t0 = 0; t0 < L; t0 += 64)
        for (std::int64_t c = 0; c < kCh; ++c)
          for (std::int64_t t = t0; t < std::min(t0 + 64, L); ++t) {
            dt[t * kCh + c] = delta[row0 + c * L + t];
            ut[t * kCh + c] = u[row0 + c * L + t];
          }
      std::fill(acc, acc + block, 0.0f);
      for (std::int64_t s = 0; s < S; ++s) {
        float a[kCh];
        for (std::int64_t c = 0; c < kCh; ++c) a[c] = A[(c0 + c) * S + s];
        for (std::int64_t t = 0; t < L; ++t)
          for (std::int64_t c = 0; c < kCh; ++c) da[t * kCh + c] = std::exp(dt[t * kCh + c] * a[c]);
        float scan[kCh] = {};
        const float* Bs = Bb + s * L;
        const float* Cs = Cb + s * L;
        for (std::int64_t t = 0; t < L; ++t) {
          const float bt = Bs[t], ct = Cs[t];
          const float* dtt = dt + t * kCh;
          const float* utt = ut + t * kCh;
          const float* dat = da + t * kCh;
          float* acct = acc + t * kCh;
#pragma GCC unroll 64
          for (std::int64_t c = 0; c < kCh; ++c) {
            scan[c] = dat[c] * scan[c] + dtt[c] * utt[c] * bt;
            acct[c] += scan[c] * ct;
          }
        }
      }
      for (std::int64_t t0 = 0; t0 < L; t0 += 64)
        for (std::int64_t c = 0; c < kCh; ++c)
          for (std::int64_t t = t0; t < std::min(t0 + 64, L); ++t) out[row0 + c * L + t] = acc[t * kCh + c];
    }
  }
}

}  // namespace nki_bench
