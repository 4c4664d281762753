/**
 * \file Tutorial 8: NKI's attention-forward tutorial, out = softmax(q^T k) v^T, version by version.
 *
 * q, k and v are [d_head = 128, seqlen]: the contraction of q^T k runs over d_head, which sits on
 * the partitions. v1 writes it with nki.language ops on one [128, 128] tile; v2 with nki.isa
 * instructions; v3 tiles seqlen (q tiles of 128 rows, kv blocks of 512 columns) and makes each
 * softmax step a pass through HBM; v4 fuses every step under one loop over q tiles; v5 divides
 * the [128, 128] output by the row sums instead of every score; v6 lets one Scalar-engine
 * activation subtract the max (as a bias), exponentiate and sum the row; v7 keeps scores and V
 * in bf16 for the transposes and the P @ V matmul; v8 copies Q @ K out of PSUM early with
 * tensor_scalar_reduce, computing the row max on the way; v8a splits the loop into stages over
 * arrays allocated once and transposes with an identity matmul; v9 places every array by hand
 * (nki::compiler's sbuf / psum mod_alloc), two buffers for the stages a q tile hands on; v10
 * software-pipelines v9, Q @ K of q tile i + 2 running with P @ V of tile i; v11 is the same
 * pipeline over plain SBUF / PSUM buffers.
 *
 * Each version is checked against the tutorial's float64 reference and its simulated latency on
 * trn2 printed: how the changes move time between the engines.
 */
#include <fmt/format.h>

#include "nki/attention_kernels.h"
#include "nki/kernel_references.h"
#include "nki/nki.h"
#include "nki/profile.h"
#include "tutorial_check.h"

namespace nl = nki::language;
namespace nk = nki::kernels;
namespace ref = nki::kernels::reference;

int main() {
  const std::int64_t d_head = 128;
  int failed = 0;
  for (const nk::AttentionVersion& a : nk::attention_versions()) {
    const std::int64_t seqlen = a.min_seqlen;
    const nki::Tensor q = tutorial::random_tensor({d_head, seqlen}, nl::float32, -1.0f, 1.0f, 1);
    const nki::Tensor k = tutorial::random_tensor({d_head, seqlen}, nl::float32, -1.0f, 1.0f, 2);
    const nki::Tensor v = tutorial::random_tensor({d_head, seqlen}, nl::float32, -1.0f, 1.0f, 3);
    const nki::GridSpec grid = nk::attention_grid(a.name, {q.shape(), k.shape(), v.shape()});
    const nki::LaunchResult r = a.kernel().launch(grid).run({q, k, v});
    const std::vector<double> want = ref::attention_forward(q.to_values(), k.to_values(), v.to_values(), d_head, seqlen);
    const std::vector<double> got = r.outputs.at(0).to_values();
    const nki::sim::ProfileReport p =
        nki::profile(a.kernel().launch(grid), {{q.shape(), q.dtype()}, {k.shape(), k.dtype()}, {v.shape(), v.dtype()}}, "trn2");
    fmt::print("{:<13} seqlen {:>4}: simulated {:8.2f} us on trn2, {:5} instructions  ({})\n  ", a.name, seqlen,
               p.latency_us, p.instructions, a.summary);
    // bf16 scores or output: the tutorial's own tolerance (atol 1e-2); fp32 inside: rtol 1e-3.
    failed += tutorial::check_allclose({got.begin(), got.end()}, {want.begin(), want.end()}, a.bf16_inside ? 1e-2 : 1e-5,
                                       1e-3);
  }
  if (failed != 0) {
    fmt::print("{} versions differ from the reference\n", failed);
    return 1;
  }
  fmt::print("all versions: NKI and reference match\n");
  return 0;
}
