/** \file Host references of the library kernels, in double precision. */
#include "nki/kernel_references.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>


namespace nki::kernels::reference {

namespace {
std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }
}  // namespace

std::vector<double> matmul(const std::vector<double>& lhsT, const std::vector<double>& rhs, std::int64_t k, std::int64_t m,
                           std::int64_t n) {
  std::vector<double> out(at(m * n), 0.0);
  for (std::int64_t kk = 0; kk < k; ++kk)
    for (std::int64_t i = 0; i < m; ++i) {
      const double a = lhsT[at(kk * m + i)];
      for (std::int64_t j = 0; j < n; ++j) out[at(i * n + j)] += a * rhs[at(kk * n + j)];
    }
  return out;
}

std::vector<double> mlp(const std::vector<double>& x, const std::vector<double>& w1, const std::vector<double>& w2,
                        std::int64_t b, std::int64_t h, std::int64_t f) {
  std::vector<double> z(at(b * f), 0.0), y(at(b * h), 0.0);
  for (std::int64_t i = 0; i < b; ++i)
    for (std::int64_t k = 0; k < h; ++k)
      for (std::int64_t j = 0; j < f; ++j) z[at(i * f + j)] += x[at(i * h + k)] * w1[at(k * f + j)];
  for (double& v : z) v = v * (1.0 + std::erf(v / std::sqrt(2.0))) / 2.0;
  for (std::int64_t i = 0; i < b; ++i)
    for (std::int64_t k = 0; k < f; ++k)
      for (std::int64_t j = 0; j < h; ++j) y[at(i * h + j)] += z[at(i * f + k)] * w2[at(k * h + j)];
  return y;
}

std::vector<double> softmax(const std::vector<double>& x, std::int64_t rows, std::int64_t cols) {
  std::vector<double> out(x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* row = x.data() + r * cols;
    const double mx = *std::max_element(row, row + cols);
    double sum = 0;
    for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(row[c] - mx);
    for (std::int64_t c = 0; c < cols; ++c) out[at(r * cols + c)] = std::exp(row[c] - mx) / sum;
  }
  return out;
}

std::vector<double> attention_forward(const std::vector<double>& q, const std::vector<double>& k,
                                      const std::vector<double>& v, std::int64_t d_head, std::int64_t seqlen) {
  const std::vector<double> qk = matmul(q, k, d_head, seqlen, seqlen);  // [seqlen_q, seqlen_kv] = q^T k
  const std::vector<double> scores = softmax(qk, seqlen, seqlen);
  std::vector<double> out(at(seqlen * d_head), 0.0);  // scores @ v^T
  for (std::int64_t i = 0; i < seqlen; ++i)
    for (std::int64_t j = 0; j < seqlen; ++j) {
      const double s = scores[at(i * seqlen + j)];
      for (std::int64_t d = 0; d < d_head; ++d) out[at(i * d_head + d)] += s * v[at(d * seqlen + j)];
    }
  return out;
}

std::vector<double> rmsnorm(const std::vector<double>& a, const std::vector<double>& g, std::int64_t rows, std::int64_t cols) {
  std::vector<double> out(a.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* row = a.data() + r * cols;
    double ss = 0;
    for (std::int64_t c = 0; c < cols; ++c) ss += row[c] * row[c];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(cols));
    for (std::int64_t c = 0; c < cols; ++c) out[at(r * cols + c)] = row[c] * inv * g[at(c)];
  }
  return out;
}

std::vector<double> layernorm(const std::vector<double>& x, const std::vector<double>& gamma, const std::vector<double>& beta,
                              std::int64_t rows, std::int64_t cols, double epsilon) {
  std::vector<double> out(x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* row = x.data() + r * cols;
    double mean = 0, var = 0;
    for (std::int64_t c = 0; c < cols; ++c) mean += row[c];
    mean /= static_cast<double>(cols);
    for (std::int64_t c = 0; c < cols; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= static_cast<double>(cols);
    const double rstd = 1.0 / std::sqrt(var + epsilon);
    for (std::int64_t c = 0; c < cols; ++c) out[at(r * cols + c)] = (row[c] - mean) * rstd * gamma[at(c)] + beta[at(c)];
  }
  return out;
}

std::vector<double> transpose2d(const std::vector<double>& in, std::int64_t p, std::int64_t y, std::int64_t x) {
  std::vector<double> out(in.size());
  for (std::int64_t i = 0; i < p; ++i)
    for (std::int64_t a = 0; a < y; ++a)
      for (std::int64_t b = 0; b < x; ++b) out[at((i * x + b) * y + a)] = in[at((i * y + a) * x + b)];
  return out;
}

std::vector<double> average_pool2d(const std::vector<double>& in, std::int64_t c, std::int64_t h, std::int64_t w,
                                   std::int64_t pool) {
  const std::int64_t ho = h / pool, wo = w / pool;
  std::vector<double> out(at(c * ho * wo), 0.0);
  for (std::int64_t ch = 0; ch < c; ++ch)
    for (std::int64_t i = 0; i < ho; ++i)
      for (std::int64_t j = 0; j < wo; ++j) {
        double s = 0;
        for (std::int64_t a = 0; a < pool; ++a)
          for (std::int64_t b = 0; b < pool; ++b) s += in[at((ch * h + i * pool + a) * w + j * pool + b)];
        out[at((ch * ho + i) * wo + j)] = s / static_cast<double>(pool * pool);
      }
  return out;
}

std::string allclose_mismatch(const std::vector<double>& got, const std::vector<double>& want, Tolerance tol) {
  if (got.size() != want.size()) return fmt::format("{} elements, expected {}", got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!(std::abs(got[i] - want[i]) <= tol.atol + tol.rtol * std::abs(want[i]))) {
      return fmt::format("element {}: got {} expected {} (atol {}, rtol {})", i, got[i], want[i], tol.atol, tol.rtol);
    }
  }
  return {};
}

}  // namespace nki::kernels::reference
