/**
 * \file NKI's attention-forward tutorial: attn_fwd_v1 ... v10 (and v8a), each version one step
 * further from nki.language towards instruction-level code. Arguments q, k, v are [d_head, seqlen]
 * (d_head = 128); the output is [seqlen, d_head] = softmax(q^T k) v^T.
 */
#pragma once

#include <string>
#include <vector>

#include "nki/kernel.h"

namespace nki::kernels {

/** One version of the tutorial kernel. */
struct AttentionVersion {
  const char* name;     ///< attn_fwd_v1, ...
  const char* summary;  ///< what this version changes, one line
  const Kernel& (*kernel)();
  std::int64_t min_seqlen;  ///< v1, v2: exactly 128; the tiled versions: a multiple of 512
  bool bf16_inside;         ///< rounds the scores (v7 on) or the output (v8a on) to bf16: fp32 accuracy is out of reach
};
/** Every version, in the tutorial's order. */
const std::vector<AttentionVersion>& attention_versions();

const Kernel& attn_fwd_v1();   ///< nki.language ops on one [128, 128] tile
const Kernel& attn_fwd_v2();   ///< the same with nki.isa instructions
const Kernel& attn_fwd_v3();   ///< tiled over seqlen, every step a pass through HBM
const Kernel& attn_fwd_v4();   ///< the steps fused under one loop over q tiles
const Kernel& attn_fwd_v5();   ///< the softmax division after the P @ V matmul
const Kernel& attn_fwd_v6();   ///< exp, bias and row sum in one Scalar-engine activation
const Kernel& attn_fwd_v7();   ///< scores and V in bf16 for the transposes and the matmul
const Kernel& attn_fwd_v8();   ///< PSUM evicted early by tensor_scalar_reduce on the Vector engine
const Kernel& attn_fwd_v8a();  ///< v8 refactored into stages, identity-matmul transposes, bf16 output
const Kernel& attn_fwd_v9();   ///< v8a with every array placed by hand (nki.compiler mod_alloc), double-buffered stages
const Kernel& attn_fwd_v10();  ///< v9 software-pipelined across consecutive q tiles
const Kernel& attn_fwd_v11();  ///< v9 software-pipelined: three q tiles' stages interleaved

/**
 * The launch of a version for inputs `shapes`: no grid. Checks the tutorial's asserts: three
 * inputs of one shape [128, seqlen] (err_input_shape_mismatch) and the version's seqlen
 * (err_input_shape_not_tiled).
 */
GridSpec attention_grid(const char* version, const std::vector<Shape>& shapes);

}  // namespace nki::kernels
