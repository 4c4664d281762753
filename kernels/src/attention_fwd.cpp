/**
 * \file NKI's attention-forward tutorial, version by version: out = softmax(q^T k) v^T for q, k, v
 * [d_head = 128, seqlen]. Each version follows the tutorial's steps; where the C++ differs the
 * comment says why. Shared differences:
 * - slices of a loaded input (q_sbuf[0:128, ds(...)]) are taken from an SBUF array the input was
 *   loaded into (subscripting a tile value is not supported);
 * - reductions whose result is used as a [P, 1] operand say keepdims (NKI broadcasts a [P] result
 *   along the free axis; here shapes broadcast from the right);
 * - v3's HBM intermediates are private_hbm: every shared_hbm ndarray is a kernel output here.
 */
#include "nki/attention_kernels.h"

#include <fmt/format.h>

#include "kernel_inputs.h"
#include "nki/nki.h"

namespace nl = nki::language;
namespace isa = nki::isa;
namespace ncc = nki::compiler;

namespace nki::kernels {

namespace {

using nl::_;
using nl::ds;
using nl::par_dim;

constexpr std::int64_t PMAX = nl::tile_size::pmax;                              // 128
constexpr std::int64_t FMAX_STATIONARY = nl::tile_size::gemm_stationary_fmax;  // 128
constexpr std::int64_t FMAX_MOVING = nl::tile_size::gemm_moving_fmax;          // 512

/** q, k or v loaded whole into an SBUF array [d_head, seqlen], so that it can be sliced. */
nl::tensor load_to_sbuf(const nl::tensor& x) {
  auto sbuf = nl::ndarray(x.shape(), x.dtype(), nl::sbuf);
  sbuf.all() = nl::load(x);
  return sbuf;
}

/** np.identity(n, dtype=np.int8) as values. */
std::vector<double> identity_values(std::int64_t n) {
  std::vector<double> eye(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) eye[static_cast<std::size_t>(i * n + i)] = 1.0;
  return eye;
}

// ---- v1: nki.language on one tile (seqlen 128) ----
nl::tensor v1_body(nl::tensor q, nl::tensor k, nl::tensor v) {
  const std::int64_t d_head = q.shape()[0], seqlen_q = q.shape()[1];
  auto kernel_out = nl::ndarray({seqlen_q, d_head}, q.dtype(), nl::shared_hbm, "kernel_out");
  auto q_sbuf = nl::load(q);  // (d_head, seqlen_q)
  auto k_sbuf = nl::load(k);
  auto v_sbuf = nl::load(v);
  // Q @ K, contracting along d_head.
  auto qk = nl::matmul(q_sbuf, k_sbuf, true);  // (seqlen_q, seqlen_kv) in PSUM
  // Softmax along seqlen_kv.
  auto row_max = nl::max(qk, 1, {.keepdims = true});     // (seqlen_q, 1)
  auto norm_row = nl::subtract(qk, row_max);
  auto exp_row = nl::exp(norm_row);
  auto sum_row = nl::sum(exp_row, 1, {.keepdims = true});  // (seqlen_q, 1)
  auto scores = nl::divide(exp_row, sum_row);               // (seqlen_q, seqlen_kv)
  auto v_sbuf_t = nl::transpose(v_sbuf);                    // (seqlen_kv, d_head): v has the wrong layout
  auto attn_out = nl::matmul(scores, v_sbuf_t, false);      // (seqlen_q, d_head)
  nl::store(kernel_out.all(), attn_out);
  return kernel_out;
}

// ---- v2: the same with nki.isa instructions ----
nl::tensor v2_body(nl::tensor q, nl::tensor k, nl::tensor v) {
  const std::int64_t d_head = q.shape()[0], seqlen_q = q.shape()[1];
  auto kernel_out = nl::ndarray({seqlen_q, d_head}, q.dtype(), nl::shared_hbm, "kernel_out");
  auto q_sbuf = nl::load(q);
  auto k_sbuf = nl::load(k);
  auto v_sbuf = nl::load(v);
  auto qk = isa::nc_matmul(q_sbuf, k_sbuf);                                   // (seqlen_q, seqlen_kv)
  auto row_max = isa::tensor_reduce(nl::maximum, qk, 1, {.keepdims = true});  // (seqlen_q, 1)
  auto norm_row = isa::tensor_scalar(qk, nl::subtract, row_max, {.engine = isa::vector_engine});
  auto exp_row = isa::activation(nl::exp, norm_row);
  auto sum_row = isa::tensor_reduce(nl::add, exp_row, 1, {.keepdims = true});  // (seqlen_q, 1)
  auto inverse_sum_row = isa::reciprocal(sum_row);
  auto scores = isa::tensor_scalar(exp_row, nl::multiply, inverse_sum_row,
                                   {.dtype = q.dtype(), .engine = isa::vector_engine});
  auto v_psum_t = isa::nc_transpose(v_sbuf);             // Tensor engine
  auto v_sbuf_t = isa::tensor_copy(v_psum_t);            // (seqlen_kv, d_head)
  auto scores_psum_t = isa::nc_transpose(scores);        // Tensor engine
  auto scores_sbuf_t = isa::tensor_copy(scores_psum_t);  // (seqlen_kv, seqlen_q)
  auto attn_out = isa::nc_matmul(scores_sbuf_t, v_sbuf_t);  // (seqlen_q, d_head)
  nl::store(kernel_out.all(), attn_out);
  return kernel_out;
}

// ---- v3: tiled over seqlen; every softmax step a pass of its own through HBM ----
nl::tensor v3_body(nl::tensor q, nl::tensor k, nl::tensor v) {
  const std::int64_t d_head = q.shape()[0], seqlen_q = q.shape()[1], seqlen_kv = seqlen_q;
  const auto f32 = nl::float32;
  auto kernel_out = nl::ndarray({seqlen_q, d_head}, q.dtype(), nl::shared_hbm, "kernel_out");
  auto q_sbuf = load_to_sbuf(q);
  auto k_sbuf = load_to_sbuf(k);
  auto v_sbuf = load_to_sbuf(v);

  auto qk = nl::ndarray({seqlen_q / PMAX, seqlen_kv / FMAX_MOVING, par_dim(PMAX), FMAX_MOVING}, f32, nl::psum, "qk");
  for (auto i_tile_q : nl::affine_range(seqlen_q / FMAX_STATIONARY))
    for (auto i_tile_kv : nl::affine_range(seqlen_kv / FMAX_MOVING))
      qk[i_tile_q, i_tile_kv, _, _] = isa::nc_matmul(q_sbuf[ds(0, PMAX), ds(i_tile_q * FMAX_STATIONARY, FMAX_STATIONARY)],
                                                     k_sbuf[ds(0, PMAX), ds(i_tile_kv * FMAX_MOVING, FMAX_MOVING)]);

  // Row max, per [128, 512] block and then over the blocks.
  auto row_max = nl::ndarray({par_dim(PMAX), seqlen_q / PMAX, 1}, f32, nl::sbuf, "row_max");
  for (auto i_tile_q : nl::affine_range(seqlen_q / PMAX)) {
    auto row_max_kv = nl::ndarray({par_dim(PMAX), seqlen_kv / FMAX_MOVING}, f32, nl::sbuf, "row_max_kv");
    for (auto i_tile_kv : nl::affine_range(seqlen_kv / FMAX_MOVING))
      row_max_kv[_, i_tile_kv] = isa::tensor_reduce(nl::maximum, qk[i_tile_q, i_tile_kv], 1);
    row_max[_, i_tile_q, _] = isa::tensor_reduce(nl::maximum, row_max_kv[_, _], 1, {.keepdims = true});
  }

  auto norm_row = nl::ndarray({seqlen_q / PMAX, PMAX, seqlen_kv}, f32, nl::private_hbm, "norm_row");
  for (auto i_tile_q : nl::affine_range(seqlen_q / PMAX)) {
    auto norm_buf = nl::ndarray({par_dim(PMAX), seqlen_kv}, f32, nl::sbuf, "norm_buf");
    for (auto i_tile_kv : nl::affine_range(seqlen_kv / FMAX_MOVING))
      norm_buf[_, ds(i_tile_kv * FMAX_MOVING, FMAX_MOVING)] = isa::tensor_scalar(
          qk[i_tile_q, i_tile_kv], nl::subtract, row_max[_, i_tile_q, _], {.engine = isa::vector_engine});
    nl::store(norm_row[i_tile_q], norm_buf[_, _]);
  }

  auto exp_row = nl::ndarray({seqlen_q / PMAX, PMAX, seqlen_kv}, f32, nl::private_hbm, "exp_row");
  for (auto i_tile_q : nl::affine_range(seqlen_q / PMAX)) {
    auto exp_buf = nl::ndarray({par_dim(PMAX), seqlen_kv}, f32, nl::sbuf, "exp_buf");
    auto norm_buf = nl::load(norm_row[i_tile_q]);
    exp_buf[_, _] = isa::activation(nl::exp, norm_buf);
    nl::store(exp_row[i_tile_q], exp_buf[_, _]);
  }

  auto sum_row = nl::ndarray({par_dim(PMAX), seqlen_q / PMAX}, f32, nl::sbuf, "sum_row");
  for (auto i_tile_q : nl::affine_range(seqlen_q / PMAX)) {
    auto exp_buf = nl::load(exp_row[i_tile_q]);
    sum_row[_, i_tile_q] = isa::tensor_reduce(nl::add, exp_buf, 1);
  }
  // NKI keeps the reciprocal as a tile and slices it; here it goes into an SBUF array to be sliced.
  auto inverse_sum_row = nl::ndarray({par_dim(PMAX), seqlen_q / PMAX}, f32, nl::sbuf, "inverse_sum_row");
  inverse_sum_row.all() = isa::reciprocal(sum_row);

  auto scores = nl::ndarray({seqlen_q / PMAX, PMAX, seqlen_kv}, f32, nl::private_hbm, "scores");
  for (auto i_tile_q : nl::affine_range(seqlen_q / PMAX)) {
    auto scores_buf = nl::ndarray({par_dim(PMAX), seqlen_kv}, f32, nl::sbuf, "scores_buf");
    auto exp_buf = nl::load(exp_row[i_tile_q]);
    scores_buf[_, _] = isa::tensor_scalar(exp_buf, nl::multiply, inverse_sum_row[_, ds(i_tile_q, 1)],
                                          {.dtype = f32, .engine = isa::vector_engine});
    nl::store(scores[i_tile_q], scores_buf[_, _]);
  }

  // v has the wrong layout.
  auto v_t = nl::ndarray({seqlen_kv / PMAX, PMAX, d_head}, f32, nl::private_hbm, "v_t");
  for (auto i_tile_kv : nl::affine_range(seqlen_kv / PMAX)) {
    auto v_psum_t = isa::nc_transpose(v_sbuf[_, ds(i_tile_kv * PMAX, PMAX)]);  // Tensor engine
    auto v_sbuf_t = nl::ndarray({par_dim(PMAX), d_head}, f32, nl::sbuf, "v_sbuf_t");
    v_sbuf_t[_, _] = isa::tensor_copy(v_psum_t, {.dtype = f32});
    nl::store(v_t[i_tile_kv], v_sbuf_t[_, _]);
  }

  // scores has the wrong layout: [128, 128] blocks, transposed.
  auto scores_t = nl::ndarray({seqlen_kv / PMAX, seqlen_q / PMAX, PMAX, PMAX}, f32, nl::private_hbm, "scores_t");
  for (auto i_tile_q : nl::affine_range(seqlen_q / PMAX))
    for (auto i_tile_kv : nl::affine_range(seqlen_kv / PMAX)) {
      auto scores_buf = nl::load(scores[i_tile_q, _, ds(i_tile_kv * PMAX, PMAX)]);
      auto scores_psum_t = isa::nc_transpose(scores_buf);
      auto scores_sbuf_t = nl::ndarray({par_dim(PMAX), PMAX}, f32, nl::sbuf, "scores_sbuf_t");
      scores_sbuf_t[_, _] = isa::tensor_copy(scores_psum_t, {.dtype = f32});
      nl::store(scores_t[i_tile_kv, i_tile_q, _, _], scores_sbuf_t);
    }

  // scores @ V, contracting along seqlen_kv (d_head == PMAX: no tiling there).
  for (auto i_tile_q : nl::affine_range(seqlen_q / PMAX)) {
    auto attn_out_psum = nl::zeros({PMAX, PMAX}, f32, nl::psum, "attn_out_psum");
    auto attn_out = nl::ndarray({par_dim(PMAX), d_head}, f32, nl::sbuf, "attn_out");
    for (auto i_tile_kv : nl::affine_range(seqlen_kv / PMAX)) {
      auto scores_sbuf_t = nl::load(scores_t[i_tile_kv, i_tile_q, _, _]);
      auto v_sbuf_t = nl::load(v_t[i_tile_kv, _, _]);
      attn_out_psum[_, _] += isa::nc_matmul(scores_sbuf_t, v_sbuf_t);
    }
    attn_out[_, _] = isa::tensor_copy(attn_out_psum);
    nl::store(kernel_out[ds(i_tile_q * PMAX, PMAX), _], attn_out[_, _]);
  }
  return kernel_out;
}

/** What v4 ... v8 vary: the options of the fused loop body. */
struct FusedLoop {
  bool delay_division = false;   ///< v5+: scale the [128, 128] output, not the scores
  bool activation_sum = false;   ///< v6+: exp, bias and row sum in one activation
  DType scores_dtype = DType::fp32;  ///< v7+: bf16 scores and V
  bool evict_psum = false;       ///< v8: tensor_scalar_reduce copies Q@K out of PSUM with its row max
};

// ---- v4 ... v8: one loop over q tiles, each version one change ----
nl::tensor fused_body(nl::tensor q, nl::tensor k, nl::tensor v, FusedLoop opt) {
  const std::int64_t d_head = q.shape()[0], seqlen_q = q.shape()[1], seqlen_kv = seqlen_q;
  const auto f32 = nl::float32;
  auto kernel_out = nl::ndarray({seqlen_q, d_head}, q.dtype(), nl::shared_hbm, "kernel_out");
  auto q_sbuf = load_to_sbuf(q);
  auto k_sbuf = load_to_sbuf(k);
  auto v_sbuf = load_to_sbuf(v);

  // v has the wrong layout.
  auto v_sbuf_t = nl::ndarray({par_dim(PMAX), seqlen_kv / PMAX, d_head}, opt.scores_dtype, nl::sbuf, "v_sbuf_t");
  for (auto i_tile_kv : nl::affine_range(seqlen_kv / PMAX)) {
    auto v_psum_t = isa::nc_transpose(v_sbuf[_, ds(i_tile_kv * PMAX, PMAX)]);                // Tensor engine
    v_sbuf_t[_, i_tile_kv, _] = isa::tensor_copy(v_psum_t, {.dtype = opt.scores_dtype});  // copy out of PSUM
  }

  for (auto i_tile_q : nl::affine_range(seqlen_q / FMAX_STATIONARY)) {
    // Q @ K for this q tile: one [128, 512] PSUM block per kv block.
    auto qk = nl::ndarray({seqlen_kv / FMAX_MOVING, par_dim(PMAX), FMAX_MOVING}, f32, nl::psum, "qk");
    for (auto i_tile_kv : nl::affine_range(seqlen_kv / FMAX_MOVING))
      qk[i_tile_kv, _, _] = isa::nc_matmul(q_sbuf[ds(0, PMAX), ds(i_tile_q * FMAX_STATIONARY, FMAX_STATIONARY)],
                                           k_sbuf[ds(0, PMAX), ds(i_tile_kv * FMAX_MOVING, FMAX_MOVING)]);

    // Row max: per block, then over the blocks (negated from v6 on: the activation's bias).
    auto row_max = nl::ndarray({par_dim(PMAX), 1}, f32, nl::sbuf, "row_max");
    auto row_max_kv = nl::ndarray({par_dim(PMAX), seqlen_kv / FMAX_MOVING}, f32, nl::sbuf, "row_max_kv");
    if (opt.evict_psum) {
      // v8: PSUM leaves early, its row max computed on the way out.
      auto qk_sbuf = nl::ndarray({par_dim(PMAX), seqlen_kv / FMAX_MOVING, FMAX_MOVING}, f32, nl::sbuf, "qk_sbuf");
      for (auto i_tile_kv : nl::affine_range(seqlen_kv / FMAX_MOVING))
        qk_sbuf[_, i_tile_kv, _] =
            isa::tensor_scalar_reduce(qk[i_tile_kv], nl::multiply, 1.0, nl::maximum, row_max_kv[_, i_tile_kv]);
    } else {
      for (auto i_tile_kv : nl::affine_range(seqlen_kv / FMAX_MOVING))
        row_max_kv[_, i_tile_kv] = isa::tensor_reduce(nl::maximum, qk[i_tile_kv], 1);
    }
    row_max[_, _] = isa::tensor_reduce(nl::maximum, row_max_kv[_, _], 1,
                                       {.negate = opt.activation_sum, .keepdims = true});

    auto exp_row = nl::ndarray({par_dim(PMAX), seqlen_kv}, opt.scores_dtype, nl::sbuf, "exp_row");
    nl::tile sum_row(-1);
    if (opt.activation_sum) {
      // v6+: the Scalar engine subtracts the max (bias = -max), exponentiates and sums the row in one go.
      auto sum_row_tiles = nl::ndarray({par_dim(PMAX), seqlen_kv / FMAX_MOVING}, f32, nl::sbuf, "sum_row_tiles");
      for (auto i_tile_kv : nl::affine_range(seqlen_kv / FMAX_MOVING))
        exp_row[_, ds(i_tile_kv * FMAX_MOVING, FMAX_MOVING)] =
            isa::activation(nl::exp, qk[i_tile_kv], row_max, 1.0,
                            {.dtype = opt.scores_dtype,
                             .reduce_op = nl::add,
                             .reduce_res = sum_row_tiles[_, i_tile_kv],
                             .reduce_cmd = isa::reduce_cmd::reset_reduce});
      sum_row = isa::tensor_reduce(nl::add, sum_row_tiles, 1, {.keepdims = true});
    } else {
      // Subtract the max, exponentiate, sum: a pass each.
      auto norm_row = nl::ndarray({par_dim(PMAX), seqlen_kv}, f32, nl::sbuf, "norm_row");
      for (auto i_tile_kv : nl::affine_range(seqlen_kv / FMAX_MOVING))
        norm_row[_, ds(i_tile_kv * FMAX_MOVING, FMAX_MOVING)] =
            isa::tensor_scalar(qk[i_tile_kv], nl::subtract, row_max, {.engine = isa::vector_engine});
      for (auto i_tile_kv : nl::affine_range(seqlen_kv / FMAX_MOVING))
        exp_row[_, ds(i_tile_kv * FMAX_MOVING, FMAX_MOVING)] =
            isa::activation(nl::exp, norm_row[_, ds(i_tile_kv * FMAX_MOVING, FMAX_MOVING)]);
      auto sum_row_kv = nl::ndarray({par_dim(PMAX), seqlen_kv / FMAX_MOVING}, f32, nl::sbuf, "sum_row_kv");
      for (auto i_tile_kv : nl::affine_range(seqlen_kv / FMAX_MOVING))
        sum_row_kv[_, i_tile_kv] = isa::tensor_reduce(nl::add, exp_row[_, ds(i_tile_kv * FMAX_MOVING, FMAX_MOVING)], 1);
      sum_row = isa::tensor_reduce(nl::add, sum_row_kv, 1, {.keepdims = true});
    }
    // The reciprocal of the row sums, [128, 1]: one per output row of this q tile.
    auto inverse_sum_row = isa::reciprocal(sum_row);

    // v4 divides the scores; v5+ transpose exp_row itself and divide the output instead.
    nl::tensor to_transpose = exp_row;
    if (!opt.delay_division) {
      auto scores = nl::ndarray({par_dim(PMAX), seqlen_kv}, f32, nl::sbuf, "scores");
      for (auto i_tile_kv : nl::affine_range(seqlen_kv / FMAX_MOVING))
        scores[_, ds(i_tile_kv * FMAX_MOVING, FMAX_MOVING)] =
            isa::tensor_scalar(exp_row[_, ds(i_tile_kv * FMAX_MOVING, FMAX_MOVING)], nl::multiply, inverse_sum_row,
                               {.engine = isa::vector_engine});
      to_transpose = scores;
    }
    auto scores_sbuf_t = nl::ndarray({par_dim(PMAX), seqlen_kv / PMAX, PMAX}, opt.scores_dtype, nl::sbuf, "scores_sbuf_t");
    for (auto i_tile_kv : nl::affine_range(seqlen_kv / PMAX)) {
      auto scores_psum_t = isa::nc_transpose(to_transpose[_, ds(i_tile_kv * PMAX, PMAX)]);  // Tensor engine
      scores_sbuf_t[_, i_tile_kv, _] = isa::tensor_copy(scores_psum_t, {.dtype = opt.scores_dtype});
    }

    // scores @ V, contracting along seqlen_kv.
    auto attn_out = nl::ndarray({par_dim(PMAX), PMAX}, f32, nl::sbuf, "attn_out");
    auto attn_out_psum = nl::zeros({PMAX, PMAX}, f32, nl::psum, "attn_out_psum");
    for (auto i_tile_kv : nl::affine_range(seqlen_kv / PMAX))
      attn_out_psum[_, _] += isa::nc_matmul(scores_sbuf_t[_, i_tile_kv, _], v_sbuf_t[_, i_tile_kv, _]);
    if (opt.delay_division) {
      // One multiply per output element instead of one per score.
      attn_out.all() = isa::tensor_scalar(attn_out_psum, nl::multiply, inverse_sum_row, {.engine = isa::vector_engine});
    } else {
      attn_out.all() = isa::tensor_copy(attn_out_psum);
    }
    nl::store(kernel_out[ds(i_tile_q * PMAX, PMAX), _], attn_out[_, _]);
  }
  return kernel_out;
}

/**
 * v8a and v11: the loop body split into stages over arrays allocated once, V and the scores
 * transposed by a matmul with a constant identity, a bf16 output. v11 double-buffers the
 * stages' arrays by q-tile parity (NKI: `i_tile_q % 2`; index expressions here are affine, so
 * the sequential loop walks pairs of q tiles, parity 0 then 1: the same order), with plain
 * SBUF / PSUM arrays (v9 and v10, which place them by hand, are placed_body below).
 * v8a transposes V with nc_matmul(..., is_transpose=True); a matmul with the identity gives the
 * same values for finite inputs, which is what this port computes. The PSUM arrays see below.
 */
/** How staged_body orders its stages over the q tiles. */
enum class StageOrder {
  one_tile_at_a_time,  ///< v8a: every stage of q tile i before any of i + 1
  pipelined,           ///< v11: the stages of three consecutive q tiles interleaved (software pipelining)
};

nl::tensor staged_body(nl::tensor q, nl::tensor k, nl::tensor v, StageOrder order) {
  const std::int64_t d_head = q.shape()[0], seqlen_q = q.shape()[1], seqlen_kv = seqlen_q;
  const auto f32 = nl::float32, bf16 = nl::bfloat16;
  const bool double_buffered = order != StageOrder::one_tile_at_a_time;
  const int buffers = double_buffered ? 2 : 1;

  auto identity = nl::shared_constant({128, 128}, identity_values(128), v.dtype());
  auto identity_load = nl::ndarray({par_dim(128), 128}, v.dtype(), nl::sbuf, "identity_load");
  identity_load.all() = nl::load(identity);
  auto identity_bf16 = nl::ndarray({par_dim(128), 128}, bf16, nl::sbuf, "identity_bf16");
  identity_bf16.all() = isa::tensor_copy(identity_load, {.dtype = bf16});

  auto kernel_out = nl::ndarray({seqlen_q, d_head}, bf16, nl::shared_hbm, "kernel_out");
  auto q_sbuf = load_to_sbuf(q);
  auto k_sbuf = load_to_sbuf(k);
  auto v_sbuf = load_to_sbuf(v);

  // v has the wrong layout: transposed by a matmul with the identity.
  auto v_sbuf_t = nl::ndarray({par_dim(PMAX), seqlen_kv / PMAX, PMAX}, bf16, nl::sbuf, "v_sbuf_t");
  auto v_psum_t = nl::ndarray({seqlen_kv / PMAX, par_dim(PMAX), PMAX}, f32, nl::psum, "v_psum_t");
  for (auto i_tile_kv : nl::affine_range(seqlen_kv / PMAX)) {
    v_psum_t[i_tile_kv] = isa::nc_matmul(v_sbuf[_, ds(i_tile_kv * PMAX, PMAX)], identity_load);  // Tensor engine
    v_sbuf_t[_, i_tile_kv, _] = isa::tensor_copy(v_psum_t[i_tile_kv], {.dtype = bf16});
  }

  const std::int64_t num_tile_q = seqlen_q / PMAX;
  const std::int64_t kv_blocks = seqlen_kv / FMAX_MOVING;
  auto qk_sbuf = nl::ndarray({par_dim(PMAX), buffers, kv_blocks, FMAX_MOVING}, f32, nl::sbuf, "qk_sbuf");
  auto row_max = nl::ndarray({par_dim(PMAX), 1}, f32, nl::sbuf, "row_max");
  auto exp_row = nl::ndarray({par_dim(PMAX), seqlen_kv}, bf16, nl::sbuf, "exp_row");
  auto sum_row = nl::ndarray({par_dim(PMAX), 1}, f32, nl::sbuf, "sum_row");
  auto inverse_sum_row = nl::ndarray({par_dim(PMAX), 1}, f32, nl::sbuf, "inverse_sum_row");
  auto scores_sbuf_t = nl::ndarray({par_dim(PMAX), seqlen_kv / PMAX, PMAX}, bf16, nl::sbuf, "scores_sbuf_t");
  auto attn_out = nl::ndarray({par_dim(PMAX), PMAX}, f32, nl::sbuf, "attn_out");
  // NKI declares qk, scores_psum_t and attn_out_psum with a leading q-tile dimension and places
  // them so that every q tile reuses the same PSUM (v9: mod_alloc with one tile along it). A q
  // tile's blocks are dead before the next q tile's are made, so here that dimension is dropped:
  // the whole-array form would not fit PSUM's 16 KiB per partition.
  auto qk = nl::ndarray({kv_blocks, par_dim(PMAX), FMAX_MOVING}, f32, nl::psum, "qk");
  auto scores_psum_t = nl::ndarray({seqlen_kv / PMAX, par_dim(PMAX), PMAX}, f32, nl::psum, "scores_psum_t");
  auto attn_out_sbuf = nl::ndarray({par_dim(PMAX), PMAX}, f32, nl::sbuf, "attn_out_sbuf");
  auto sum_row_tiles = nl::ndarray({par_dim(PMAX), buffers, kv_blocks}, f32, nl::sbuf, "sum_row_tiles");
  auto row_max_kv_shared = nl::ndarray({par_dim(PMAX), kv_blocks}, f32, nl::sbuf, "row_max_kv");

  // One block of Q @ K for q tile i_tile_q, evicted to SBUF with its row max on the way.
  auto qk_block = [&](const nl::index& i_tile_q, const nl::index& buf, const nl::index& i_tile_kv,
                      const nl::tensor& row_max_kv) {
    qk[i_tile_kv] = isa::nc_matmul(q_sbuf[ds(0, PMAX), ds(i_tile_q * PMAX, PMAX)],
                                   k_sbuf[ds(0, PMAX), ds(i_tile_kv * FMAX_MOVING, FMAX_MOVING)]);
    qk_sbuf[_, buf, i_tile_kv, _] =
        isa::tensor_scalar_reduce(qk[i_tile_kv], nl::multiply, 1.0, nl::maximum, row_max_kv[_, i_tile_kv]);
  };
  auto negated_row_max = [&](const nl::tensor& row_max_kv) {
    row_max[_, _] = isa::tensor_reduce(nl::maximum, row_max_kv[_, _], 1, {.negate = true, .keepdims = true});
  };
  auto qk_max = [&](const nl::index& i_tile_q, const nl::index& buf) {
    // v8a allocates row_max_kv afresh for each q tile; v11 keeps one.
    nl::tensor row_max_kv = double_buffered
                                ? row_max_kv_shared
                                : nl::ndarray({par_dim(PMAX), kv_blocks}, f32, nl::sbuf, "row_max_kv");
    for (auto i_tile_kv : nl::affine_range(kv_blocks)) qk_block(i_tile_q, buf, i_tile_kv, row_max_kv);
    negated_row_max(row_max_kv);
  };
  auto exp_row_sum = [&](const nl::index& buf) {
    for (auto i_tile_kv : nl::affine_range(kv_blocks))
      exp_row[_, ds(i_tile_kv * FMAX_MOVING, FMAX_MOVING)] =
          isa::activation(nl::exp, qk_sbuf[_, buf, i_tile_kv, _], row_max[_, _], 1.0,
                          {.dtype = bf16,
                           .reduce_op = nl::add,
                           .reduce_res = sum_row_tiles[_, buf, i_tile_kv],
                           .reduce_cmd = isa::reduce_cmd::reset_reduce});
  };
  auto transpose_scores = [&]() {
    for (auto i_tile_kv : nl::affine_range(seqlen_kv / PMAX)) {
      scores_psum_t[i_tile_kv] = isa::nc_matmul(exp_row[_, ds(i_tile_kv * PMAX, PMAX)], identity_bf16);
      scores_sbuf_t[_, i_tile_kv, _] = isa::tensor_copy(scores_psum_t[i_tile_kv], {.dtype = bf16});
    }
  };
  // NKI starts a matmul accumulation group afresh; here `+=` adds to what the array holds: zeros.
  auto fresh_attn_out_psum = [&] { return nl::zeros({par_dim(PMAX), PMAX}, f32, nl::psum, "attn_out_psum"); };
  auto pv_block = [&](const nl::tensor& attn_out_psum, const nl::index& i_tile_kv) {
    attn_out_psum[_, _] += isa::nc_matmul(scores_sbuf_t[_, i_tile_kv, _], v_sbuf_t[_, i_tile_kv, _]);
  };
  auto pv_matmul = [&]() {
    auto attn_out_psum = fresh_attn_out_psum();
    for (auto i_tile_kv : nl::affine_range(seqlen_kv / PMAX)) pv_block(attn_out_psum, i_tile_kv);
    attn_out_sbuf[_, _] = isa::tensor_copy(attn_out_psum, {.dtype = f32});
  };
  // v11: P @ V of q tile i_tile_q interleaved, block by block, with Q @ K of tile i_tile_q + 2
  // (buffer buf_ahead), so the Tensor engine has the next matmul while the Vector engine evicts.
  auto fused_qkmax_and_pv = [&](const nl::index& i_tile_q, const nl::index& buf_ahead) {
    auto attn_out_psum = fresh_attn_out_psum();
    for (auto i_tile_kv : nl::affine_range(kv_blocks)) {
      qk_block(i_tile_q + 2, buf_ahead, i_tile_kv, row_max_kv_shared);
      for (auto i_tile_kv_i : nl::affine_range(FMAX_MOVING / PMAX))
        pv_block(attn_out_psum, i_tile_kv * (FMAX_MOVING / PMAX) + i_tile_kv_i);
    }
    attn_out_sbuf[_, _] = isa::tensor_copy(attn_out_psum, {.dtype = f32});
    negated_row_max(row_max_kv_shared);
  };
  auto write_back = [&](const nl::index& i_tile_q, const nl::index& buf) {
    sum_row[_, _] = isa::tensor_reduce(nl::add, sum_row_tiles[_, buf, _], 1, {.keepdims = true});
    inverse_sum_row[_, _] = isa::reciprocal(sum_row[_, _]);
    attn_out[_, _] = isa::tensor_scalar(attn_out_sbuf[_, _], nl::multiply, inverse_sum_row[_, _],
                                        {.engine = isa::vector_engine});
    nl::store(kernel_out[ds(i_tile_q * PMAX, PMAX), _], attn_out[_, _]);
  };
  auto tile_q = [&](const nl::index& i_tile_q, const nl::index& buf) {
    qk_max(i_tile_q, buf);
    exp_row_sum(buf);
    transpose_scores();
    pv_matmul();
    write_back(i_tile_q, buf);
  };
  switch (order) {
    case StageOrder::one_tile_at_a_time:
      for (auto i_tile_q : nl::sequential_range(num_tile_q)) tile_q(i_tile_q, 0);
      break;
    case StageOrder::pipelined: {
      // NKI's v11: a prologue that runs tile 0 up to its transpose and tile 1's Q @ K, a steady
      // state in which iteration i finishes tile i and starts tiles i + 1 and i + 2, and an
      // epilogue for the last two tiles. Tile i's buffers are i % 2: num_tile_q - 2 is even
      // (seqlen is a multiple of 512), so the loop walks pairs, parity 0 then 1.
      qk_max(0, 0);
      exp_row_sum(0);
      transpose_scores();
      qk_max(1, 1);
      for (auto pair : nl::sequential_range((num_tile_q - 2) / 2)) {
        nl::no_reorder keep_program_order;  // NKI: sequential_range(..., directives=no_reorder())
        for (std::int64_t parity = 0; parity < 2; ++parity) {
          const nl::index i_tile_q = pair * 2 + parity;
          exp_row_sum(1 - parity);
          fused_qkmax_and_pv(i_tile_q, parity);
          transpose_scores();
          write_back(i_tile_q, parity);
        }
      }
      pv_matmul();
      write_back(num_tile_q - 2, 0);
      exp_row_sum(1);
      transpose_scores();
      pv_matmul();
      write_back(num_tile_q - 1, 1);
      break;
    }
  }
  return kernel_out;
}

/**
 * NKI's SBufAllocator: each array right after the previous one, `size` elements of `dtype` per
 * partition times `num_buffers`, as sbuf mod_alloc with num_buffers tiles. One per trace (the
 * tutorial's is a module global, so a second trace there would continue where the first ended).
 */
struct SbufAllocator {
  std::int64_t offset = 0;
  ncc::allocation allocate(std::int64_t size, DType dtype, std::int64_t num_buffers = 1) {
    const std::int64_t addr = offset;
    offset += size * num_buffers * dtype_bytes(dtype);
    return ncc::sbuf::mod_alloc({.base_addr = addr, .num_free_tiles = {num_buffers}});
  }
};

/**
 * v9 and v10 as NKI writes them: every on-chip array placed by hand (SbufAllocator, psum
 * mod_alloc), the stages of one q tile as functions of its index. v10 software-pipelines them:
 * a prologue, a loop whose iteration i runs exp_row_sum(i + 1), Q @ K of tile i + 2 fused with
 * P @ V of tile i, transpose_scores(i + 1) and write_back(i), and an epilogue. Where the C++
 * differs:
 * - NKI indexes qk_sbuf and sum_row_tiles [par, 2, ...] by `i_tile_q % 2` (index expressions
 *   here are affine); here they carry a leading q-tile block dimension with the same two tiles
 *   (num_buffers = 2 at the same address and size), so block i lives at i mod 2: the same
 *   memory, indexed by i_tile_q.
 * - NKI lets v_psum_t (banks 0-7), qk and scores_psum_t (banks 0-6) share PSUM banks; placed
 *   arrays here must not overlap (err_allocation_overlap), so qk takes banks 0-2, scores_psum_t
 *   3-5, v_psum_t 6, attn_out_psum 7 (as NKI's). Every block is still reused modulo its tiles.
 * - NKI's first matmul of an accumulation group overwrites PSUM; `+=` here adds to what is
 *   there, and attn_out_psum's one bank holds the previous q tile's sums, so each q tile's
 *   block is zeroed by an isa::memset first.
 */
nl::tensor placed_body(nl::tensor q, nl::tensor k, nl::tensor v, bool pipelined) {
  const std::int64_t d_head = q.shape()[0], seqlen_q = q.shape()[1], seqlen_kv = seqlen_q;
  const auto f32 = nl::float32, bf16 = nl::bfloat16;
  SbufAllocator allocator;

  auto identity = nl::shared_constant({128, 128}, identity_values(128), v.dtype());
  auto identity_load = nl::ndarray({par_dim(128), 128}, v.dtype(), allocator.allocate(128, v.dtype()), "identity_load");
  identity_load.all() = nl::load(identity);
  auto identity_bf16 = nl::ndarray({par_dim(128), 128}, bf16, allocator.allocate(128, bf16), "identity_bf16");
  identity_bf16.all() = isa::tensor_copy(identity_load, {.dtype = bf16});

  auto kernel_out = nl::ndarray({seqlen_q, d_head}, bf16, nl::shared_hbm, "kernel_out");
  auto q_sbuf = nl::ndarray({d_head, seqlen_q}, q.dtype(), allocator.allocate(seqlen_q, q.dtype()), "q_sbuf");
  auto k_sbuf = nl::ndarray({d_head, seqlen_kv}, k.dtype(), allocator.allocate(seqlen_kv, k.dtype()), "k_sbuf");
  auto v_sbuf = nl::ndarray({d_head, seqlen_kv}, v.dtype(), allocator.allocate(seqlen_kv, v.dtype()), "v_sbuf");
  q_sbuf.all() = nl::load(q);
  k_sbuf.all() = nl::load(k);
  v_sbuf.all() = nl::load(v);

  // v has the wrong layout: transposed by a matmul with the identity.
  auto v_sbuf_t = nl::ndarray({par_dim(PMAX), seqlen_kv / PMAX, PMAX}, bf16,
                              allocator.allocate(PMAX, bf16, seqlen_kv / PMAX), "v_sbuf_t");
  auto v_psum_t = nl::ndarray({seqlen_kv / PMAX, par_dim(PMAX), PMAX}, f32,
                              ncc::psum::mod_alloc({.base_bank = 6, .num_bank_tiles = {1}}), "v_psum_t");
  for (auto i_tile_kv : nl::affine_range(seqlen_kv / PMAX)) {
    v_psum_t[i_tile_kv] = isa::nc_matmul(v_sbuf[_, ds(i_tile_kv * PMAX, PMAX)], identity_load);  // Tensor engine
    v_sbuf_t[_, i_tile_kv, _] = isa::tensor_copy(v_psum_t[i_tile_kv], {.dtype = bf16});         // Scalar engine
  }

  const std::int64_t num_tile_q = seqlen_q / PMAX;
  const std::int64_t kv_blocks = seqlen_kv / FMAX_MOVING;
  auto qk_sbuf = nl::ndarray({num_tile_q, par_dim(PMAX), kv_blocks, FMAX_MOVING}, f32,
                             allocator.allocate(seqlen_kv, f32, 2), "qk_sbuf");
  auto row_max_kv = nl::ndarray({par_dim(PMAX), kv_blocks}, f32, allocator.allocate(kv_blocks, f32), "row_max_kv");
  auto row_max = nl::ndarray({par_dim(PMAX), 1}, f32, allocator.allocate(1, f32), "row_max");
  auto exp_row = nl::ndarray({par_dim(PMAX), seqlen_kv}, bf16, allocator.allocate(seqlen_kv, bf16), "exp_row");
  // Two sum_row tiles: one written back while the next q tile's exp sums into the other.
  auto sum_row_tiles = nl::ndarray({num_tile_q, par_dim(PMAX), kv_blocks}, f32, allocator.allocate(kv_blocks, f32, 2),
                                   "sum_row_tiles");
  auto sum_row = nl::ndarray({par_dim(PMAX), 1}, f32, allocator.allocate(1, f32), "sum_row");
  auto inverse_sum_row = nl::ndarray({par_dim(PMAX), 1}, f32, allocator.allocate(1, f32), "inverse_sum_row");
  auto scores_sbuf_t = nl::ndarray({par_dim(PMAX), seqlen_kv / PMAX, PMAX}, bf16, allocator.allocate(seqlen_kv, bf16),
                                   "scores_sbuf_t");
  auto attn_out = nl::ndarray({par_dim(PMAX), PMAX}, f32, allocator.allocate(PMAX, f32, 1), "attn_out");
  // PSUM: every q tile's blocks on the same banks (one tile along the q-tile dimension).
  auto qk = nl::ndarray({num_tile_q, kv_blocks, par_dim(PMAX), FMAX_MOVING}, f32,
                        ncc::psum::mod_alloc({.base_bank = 0, .num_bank_tiles = {1, 3}}), "qk");
  auto scores_psum_t = nl::ndarray({num_tile_q, seqlen_kv / PMAX, par_dim(PMAX), PMAX}, f32,
                                   ncc::psum::mod_alloc({.base_bank = 3, .num_bank_tiles = {1, 3}}), "scores_psum_t");
  auto attn_out_psum = nl::ndarray({num_tile_q, par_dim(PMAX), PMAX}, f32,
                                   ncc::psum::mod_alloc({.base_bank = 7, .num_bank_tiles = {1}}), "attn_out_psum");
  auto attn_out_sbuf = nl::ndarray({par_dim(PMAX), PMAX}, f32, allocator.allocate(PMAX, f32, 1), "attn_out_sbuf");

  auto qk_max = [&](const nl::index& i_tile_q) {
    for (auto i_tile_kv : nl::affine_range(kv_blocks)) {  // loop on moving_free
      qk[i_tile_q, i_tile_kv] = isa::nc_matmul(q_sbuf[ds(0, PMAX), ds(i_tile_q * PMAX, PMAX)],
                                               k_sbuf[ds(0, PMAX), ds(i_tile_kv * FMAX_MOVING, FMAX_MOVING)]);
      qk_sbuf[i_tile_q, _, i_tile_kv, _] =
          isa::tensor_scalar_reduce(qk[i_tile_q, i_tile_kv], nl::multiply, 1.0, nl::maximum, row_max_kv[_, i_tile_kv]);
    }
    row_max[_, _] = isa::tensor_reduce(nl::maximum, row_max_kv[_, _], 1, {.negate = true, .keepdims = true});
  };
  auto exp_row_sum = [&](const nl::index& i_tile_q) {
    for (auto i_tile_kv : nl::affine_range(kv_blocks))
      exp_row[_, ds(i_tile_kv * FMAX_MOVING, FMAX_MOVING)] =
          isa::activation(nl::exp, qk_sbuf[i_tile_q, _, i_tile_kv, _], row_max[_, _], 1.0,
                          {.dtype = bf16,
                           .reduce_op = nl::add,
                           .reduce_res = sum_row_tiles[i_tile_q, _, i_tile_kv],
                           .reduce_cmd = isa::reduce_cmd::reset_reduce});
  };
  auto transpose_scores = [&](const nl::index& i_tile_q) {
    for (auto i_tile_kv : nl::affine_range(seqlen_kv / PMAX)) {
      scores_psum_t[i_tile_q, i_tile_kv] = isa::nc_matmul(exp_row[_, ds(i_tile_kv * PMAX, PMAX)], identity_bf16);
      scores_sbuf_t[_, i_tile_kv, _] = isa::tensor_copy(scores_psum_t[i_tile_q, i_tile_kv], {.dtype = bf16});
    }
  };
  auto pv_matmul = [&](const nl::index& i_tile_q) {
    isa::memset(attn_out_psum[i_tile_q, _, _], 0.0);  // the accumulation group starts afresh
    for (auto i_tile_kv : nl::affine_range(seqlen_kv / PMAX))  // loop on contraction
      attn_out_psum[i_tile_q, _, _] += isa::nc_matmul(scores_sbuf_t[_, i_tile_kv, _], v_sbuf_t[_, i_tile_kv, _]);
    attn_out_sbuf[_, _] = isa::tensor_copy(attn_out_psum[i_tile_q, _, _], {.dtype = f32});
  };
  auto write_back = [&](const nl::index& i_tile_q) {
    sum_row[_, _] = isa::tensor_reduce(nl::add, sum_row_tiles[i_tile_q, _, _], 1, {.keepdims = true});
    inverse_sum_row[_, _] = isa::reciprocal(sum_row[_, _]);
    attn_out[_, _] = isa::tensor_scalar(attn_out_sbuf[_, _], nl::multiply, inverse_sum_row[_, _],
                                        {.engine = isa::vector_engine});
    nl::store(kernel_out[ds(i_tile_q * PMAX, PMAX), _], attn_out[_, _]);
  };
  // Q @ K of q tile i + 2 with P @ V of q tile i, kv block by kv block.
  auto fused_qkmax_and_pv = [&](const nl::index& i_tile_q) {
    isa::memset(attn_out_psum[i_tile_q, _, _], 0.0);
    for (auto i_tile_kv : nl::affine_range(kv_blocks)) {
      qk[i_tile_q + 2, i_tile_kv] = isa::nc_matmul(q_sbuf[ds(0, PMAX), ds((i_tile_q + 2) * PMAX, PMAX)],
                                                   k_sbuf[ds(0, PMAX), ds(i_tile_kv * FMAX_MOVING, FMAX_MOVING)]);
      qk_sbuf[i_tile_q + 2, _, i_tile_kv, _] = isa::tensor_scalar_reduce(qk[i_tile_q + 2, i_tile_kv], nl::multiply, 1.0,
                                                                         nl::maximum, row_max_kv[_, i_tile_kv]);
      for (auto i_tile_kv_i : nl::affine_range(FMAX_MOVING / PMAX)) {  // loop on contraction
        const nl::index i_tile_kv_pv = i_tile_kv * (FMAX_MOVING / PMAX) + i_tile_kv_i;
        attn_out_psum[i_tile_q, _, _] +=
            isa::nc_matmul(scores_sbuf_t[_, i_tile_kv_pv, _], v_sbuf_t[_, i_tile_kv_pv, _]);
      }
    }
    attn_out_sbuf[_, _] = isa::tensor_copy(attn_out_psum[i_tile_q, _, _], {.dtype = f32});
    row_max[_, _] = isa::tensor_reduce(nl::maximum, row_max_kv[_, _], 1, {.negate = true, .keepdims = true});
  };

  if (!pipelined) {
    for (auto i_tile_q : nl::sequential_range(num_tile_q)) {  // loop on stationary_free
      qk_max(i_tile_q);
      exp_row_sum(i_tile_q);
      transpose_scores(i_tile_q);
      pv_matmul(i_tile_q);
      write_back(i_tile_q);
    }
    return kernel_out;
  }
  qk_max(0);
  exp_row_sum(0);
  transpose_scores(0);
  qk_max(1);
  for (auto i_tile_q : nl::sequential_range(num_tile_q - 2)) {
    nl::no_reorder keep_program_order;  // NKI: sequential_range(..., directives=no_reorder())
    exp_row_sum(i_tile_q + 1);
    fused_qkmax_and_pv(i_tile_q);
    transpose_scores(i_tile_q + 1);
    write_back(i_tile_q);
  }
  pv_matmul(num_tile_q - 2);
  write_back(num_tile_q - 2);
  exp_row_sum(num_tile_q - 1);
  transpose_scores(num_tile_q - 1);
  pv_matmul(num_tile_q - 1);
  write_back(num_tile_q - 1);
  return kernel_out;
}

template <auto Body>
const Kernel& make(const char* name) {
  static const Kernel kernel = nki::jit(name, Body, {"q", "k", "v"});
  return kernel;
}

nl::tensor v4_body(nl::tensor q, nl::tensor k, nl::tensor v) { return fused_body(q, k, v, {}); }
nl::tensor v5_body(nl::tensor q, nl::tensor k, nl::tensor v) { return fused_body(q, k, v, {.delay_division = true}); }
nl::tensor v6_body(nl::tensor q, nl::tensor k, nl::tensor v) {
  return fused_body(q, k, v, {.delay_division = true, .activation_sum = true});
}
nl::tensor v7_body(nl::tensor q, nl::tensor k, nl::tensor v) {
  return fused_body(q, k, v, {.delay_division = true, .activation_sum = true, .scores_dtype = DType::bf16});
}
nl::tensor v8_body(nl::tensor q, nl::tensor k, nl::tensor v) {
  return fused_body(q, k, v,
                    {.delay_division = true, .activation_sum = true, .scores_dtype = DType::bf16, .evict_psum = true});
}
nl::tensor v8a_body(nl::tensor q, nl::tensor k, nl::tensor v) {
  return staged_body(q, k, v, StageOrder::one_tile_at_a_time);
}
nl::tensor v9_body(nl::tensor q, nl::tensor k, nl::tensor v) { return placed_body(q, k, v, false); }
nl::tensor v10_body(nl::tensor q, nl::tensor k, nl::tensor v) { return placed_body(q, k, v, true); }
nl::tensor v11_body(nl::tensor q, nl::tensor k, nl::tensor v) { return staged_body(q, k, v, StageOrder::pipelined); }

}  // namespace

const Kernel& attn_fwd_v1() { return make<v1_body>("attn_fwd_v1"); }
const Kernel& attn_fwd_v2() { return make<v2_body>("attn_fwd_v2"); }
const Kernel& attn_fwd_v3() { return make<v3_body>("attn_fwd_v3"); }
const Kernel& attn_fwd_v4() { return make<v4_body>("attn_fwd_v4"); }
const Kernel& attn_fwd_v5() { return make<v5_body>("attn_fwd_v5"); }
const Kernel& attn_fwd_v6() { return make<v6_body>("attn_fwd_v6"); }
const Kernel& attn_fwd_v7() { return make<v7_body>("attn_fwd_v7"); }
const Kernel& attn_fwd_v8() { return make<v8_body>("attn_fwd_v8"); }
const Kernel& attn_fwd_v8a() { return make<v8a_body>("attn_fwd_v8a"); }
const Kernel& attn_fwd_v9() { return make<v9_body>("attn_fwd_v9"); }
const Kernel& attn_fwd_v10() { return make<v10_body>("attn_fwd_v10"); }
const Kernel& attn_fwd_v11() { return make<v11_body>("attn_fwd_v11"); }

const std::vector<AttentionVersion>& attention_versions() {
  static const std::vector<AttentionVersion> versions = {
      {"attn_fwd_v1", "nki.language ops on one [128, 128] tile", attn_fwd_v1, 128, false},
      {"attn_fwd_v2", "the same with nki.isa instructions", attn_fwd_v2, 128, false},
      {"attn_fwd_v3", "tiled over seqlen, each softmax step a pass through HBM", attn_fwd_v3, 512, false},
      {"attn_fwd_v4", "every step fused under one loop over q tiles", attn_fwd_v4, 512, false},
      {"attn_fwd_v5", "the softmax division delayed to the [128, 128] output", attn_fwd_v5, 512, false},
      {"attn_fwd_v6", "exp, bias and row sum in one Scalar-engine activation", attn_fwd_v6, 512, false},
      {"attn_fwd_v7", "scores and V in bf16 for the transposes and the P @ V matmul", attn_fwd_v7, 512, true},
      {"attn_fwd_v8", "Q @ K leaves PSUM early through tensor_scalar_reduce (row max on the way)", attn_fwd_v8, 512, true},
      {"attn_fwd_v8a", "v8 in stages over arrays allocated once, identity-matmul transposes, bf16 output",
       attn_fwd_v8a, 512, true},
      {"attn_fwd_v9", "v8a with every array placed by hand (sbuf / psum mod_alloc), two buffers per q-tile stage",
       attn_fwd_v9, 512, true},
      {"attn_fwd_v10", "v9 software-pipelined: Q @ K of q tile i + 2 runs with P @ V of tile i", attn_fwd_v10, 512, true},
      {"attn_fwd_v11", "v9 software-pipelined: P @ V of a tile beside Q @ K of the tile two ahead", attn_fwd_v11, 512,
       true},
  };
  return versions;
}

GridSpec attention_grid(const char* version, const std::vector<Shape>& shapes) {
  check_argument_count(version, shapes, 3);
  const Shape& q = shapes[0];
  if (q.size() != 2 || shapes[1] != q || shapes[2] != q || q[0] != PMAX) {
    throw UserError("err_input_shape_mismatch", version, {},
                    fmt::format("q {}, k {} and v {} must be one shape [d_head, seqlen] with d_head = {}", shape_str(q),
                                shape_str(shapes[1]), shape_str(shapes[2]), PMAX));
  }
  const std::int64_t seqlen = q[1];
  for (const AttentionVersion& a : attention_versions()) {
    if (std::string(a.name) != version) continue;
    const bool ok = a.min_seqlen == PMAX ? seqlen == PMAX : seqlen > 0 && seqlen % a.min_seqlen == 0;
    if (!ok) {
      throw UserError("err_input_shape_not_tiled", version, {},
                      a.min_seqlen == PMAX
                          ? fmt::format("q {}: this version computes one tile, seqlen must be {}", shape_str(q), PMAX)
                          : fmt::format("q {}: seqlen must be a positive multiple of {}", shape_str(q), a.min_seqlen));
    }
    return GridSpec{};
  }
  throw UserError("err_unknown_kernel", version, {}, "not a version of the attention tutorial");
}

}  // namespace nki::kernels
