/**
 * \file Host references of the library kernels, in double precision from the input values as the
 * kernel sees them (already in the input dtype: Tensor::to_values()). Tests, tutorials and benchmarks compare the
 * kernels' outputs with these (allclose), the way NKI's tutorials compare with NumPy or torch.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nki/shape.h"

namespace nki::kernels::reference {

/** result [M, N] = lhsT^T @ rhs for lhsT [K, M], rhs [K, N] (row-major). */
std::vector<double> matmul(const std::vector<double>& lhsT, const std::vector<double>& rhs, std::int64_t k, std::int64_t m,
                           std::int64_t n);
/** Softmax over each row of x [rows, cols]. */
std::vector<double> softmax(const std::vector<double>& x, std::int64_t rows, std::int64_t cols);
/** a / sqrt(mean(a^2)) * g over each row; g has `cols` values. */
std::vector<double> rmsnorm(const std::vector<double>& a, const std::vector<double>& g, std::int64_t rows, std::int64_t cols);
/** (x - mean) / sqrt(var + epsilon) * gamma + beta over each row (population variance). */
std::vector<double> layernorm(const std::vector<double>& x, const std::vector<double>& gamma, const std::vector<double>& beta,
                              std::int64_t rows, std::int64_t cols, double epsilon);
/** in [p, y, x] -> out [p, x, y]. */
std::vector<double> transpose2d(const std::vector<double>& in, std::int64_t p, std::int64_t y, std::int64_t x);
/** in [c, h, w] -> [c, h/pool, w/pool], the mean of each pool x pool window. */
std::vector<double> average_pool2d(const std::vector<double>& in, std::int64_t c, std::int64_t h, std::int64_t w,
                                   std::int64_t pool);

/**
 * NKI's attention tutorial reference (its numpy_attention): q, k, v [d_head, seqlen] ->
 * softmax(q^T k) v^T [seqlen, d_head], the softmax over each row with its max subtracted.
 */
std::vector<double> attention_forward(const std::vector<double>& q, const std::vector<double>& k,
                                      const std::vector<double>& v, std::int64_t d_head, std::int64_t seqlen);

/** y [B, H] = gelu(x @ w1) @ w2 for x [B, H], w1 [H, F], w2 [F, H], gelu(z) = z (1 + erf(z / sqrt 2)) / 2. */
std::vector<double> mlp(const std::vector<double>& x, const std::vector<double>& w1, const std::vector<double>& w2,
                        std::int64_t b, std::int64_t h, std::int64_t f);

/** Tolerances of a comparison: |got - want| <= atol + rtol * |want| (numpy.allclose). */
struct Tolerance {
  double atol, rtol;
};
/**
 * The first element where `got` is not close to `want` (NaN never is), as a one-line message naming
 * the index, both values and the tolerance; empty when all are close.
 */
std::string allclose_mismatch(const std::vector<double>& got, const std::vector<double>& want, Tolerance tol);

}  // namespace nki::kernels::reference
