/**
 * \file A Megatron-style MLP, gelu(x @ w1) @ w2: on one core (`mlp`), and tensor-parallel
 * (`tensor_parallel_mlp`), each rank holding a column shard of w1 and the matching row shard of
 * w2, its partial product all-reduced over the mesh's `tensor` axis.
 */
#include "nki/kernels.h"

#include <fmt/format.h>

#include "kernel_inputs.h"

namespace nki::kernels {

namespace {

namespace nl = nki::language;
namespace isa = nki::isa;
using nl::_;
using nl::ds;
using nl::par_dim;

constexpr std::int64_t PMAX = 128;   // partitions; the stationary free size of nc_matmul
constexpr std::int64_t FMAX = 512;   // nc_matmul's moving free size, one PSUM bank of fp32

/** The largest chunk of `n` (a multiple of PMAX) that fits one PSUM bank and divides it. */
std::int64_t bank_chunk(std::int64_t n) {
  std::int64_t c = std::min(n, FMAX);
  while (n % c != 0) c -= PMAX;
  return c;
}

/**
 * gelu(x @ w1) @ w2 in fp32, x [B, H], w1 [H, F], w2 [F, H], all multiples of 128 (B, H, F).
 * Per row tile of x: its transposed [128, 128] blocks are the stationary operands of x @ w1,
 * accumulated in PSUM over H; gelu of each bank goes to SBUF transposed (the stationary
 * operands of the second product), which accumulates over F.
 */
nl::tensor mlp_product(const nl::tensor& x, const nl::tensor& w1, const nl::tensor& w2, const char* out_name) {
  const std::int64_t B = x.shape()[0], H = x.shape()[1], F = w1.shape()[1];
  const DType dt = x.dtype();
  const std::int64_t FC = bank_chunk(F), HC = bank_chunk(H);
  auto out = nl::ndarray({B, H}, DType::fp32, nl::shared_hbm, out_name);
  auto ip = nl::arange(PMAX)[_, nl::newaxis];
  auto jp = nl::arange(PMAX)[nl::newaxis, _];
  for (auto bt : nl::affine_range(B / PMAX)) {
    auto x_t = nl::ndarray({H / PMAX, par_dim(PMAX), PMAX}, dt, nl::sbuf, "x_t");  // x_t[k] = x[rows, k block]^T
    for (auto kt : nl::affine_range(H / PMAX))
      x_t[kt, _, _] = isa::tensor_copy(isa::nc_transpose(nl::load(x[bt * PMAX + ip, kt * PMAX + jp])), {.dtype = dt});
    auto z_t = nl::ndarray({F / PMAX, par_dim(PMAX), PMAX}, dt, nl::sbuf, "z_t");  // z_t[f] = gelu(x @ w1)[:, f block]^T
    auto jf = nl::arange(FC)[nl::newaxis, _];
    for (auto fc : nl::affine_range(F / FC)) {
      auto z_psum = nl::zeros({PMAX, FC}, DType::fp32, nl::psum, "z_psum");
      for (auto kt : nl::affine_range(H / PMAX))
        z_psum[_, _] += isa::nc_matmul(x_t[kt, _, _], nl::load(w1[kt * PMAX + ip, fc * FC + jf]));
      auto z = nl::gelu(z_psum, {.dtype = dt});  // (128, FC)
      for (std::int64_t s = 0; s < FC / PMAX; ++s)
        z_t[fc * (FC / PMAX) + s, _, _] = isa::tensor_copy(isa::nc_transpose(z[ip, s * PMAX + jp]), {.dtype = dt});
    }
    auto jh = nl::arange(HC)[nl::newaxis, _];
    for (auto hc : nl::affine_range(H / HC)) {
      auto y_psum = nl::zeros({PMAX, HC}, DType::fp32, nl::psum, "y_psum");
      for (auto ft : nl::affine_range(F / PMAX))
        y_psum[_, _] += isa::nc_matmul(z_t[ft, _, _], nl::load(w2[ft * PMAX + ip, hc * HC + jh]));
      nl::store(out[bt * PMAX + ip, hc * HC + jh], isa::tensor_copy(y_psum));
    }
  }
  return out;
}

}  // namespace

GridSpec mlp_grid(const std::vector<Shape>& shapes) {
  check_argument_count("mlp", shapes, 3);
  const Shape x = matrix_shape("mlp", shapes[0], "x"), w1 = matrix_shape("mlp", shapes[1], "w1"),
              w2 = matrix_shape("mlp", shapes[2], "w2");
  if (w1[0] != x[1] || w2[0] != w1[1] || w2[1] != x[1]) {
    throw UserError("err_input_shape_mismatch", "mlp", {},
                    fmt::format("x {}, w1 {} and w2 {} do not chain: x [B, H], w1 [H, F], w2 [F, H]", shape_str(x),
                                shape_str(w1), shape_str(w2)));
  }
  for (std::int64_t d : {x[0], x[1], w1[1]}) {
    if (d % PMAX != 0) {
      throw UserError("err_input_shape_mismatch", "mlp", {},
                      fmt::format("x {} and w1 {}: B, H and F must be multiples of {}", shape_str(x), shape_str(w1), PMAX));
    }
  }
  return GridSpec{};
}

const Kernel& mlp() {
  static const Kernel k = nki::jit(
      "mlp", [](nl::tensor x, nl::tensor w1, nl::tensor w2) { return mlp_product(x, w1, w2, "y"); },
      {"x", "w1", "w2"});
  return k;
}

const Kernel& tensor_parallel_mlp() {
  static const Kernel k = nki::jit(
      "tensor_parallel_mlp",
      [](nl::tensor x, nl::tensor w1, nl::tensor w2) {
        auto partial = mlp_product(x, w1, w2, "partial");  // this rank's columns of the hidden layer
        auto y = nl::ndarray(partial.shape(), DType::fp32, nl::shared_hbm, "y");
        nki::collectives::all_reduce({partial}, {y}, {.axes = {"tensor"}}, nl::add);
        return y;
      },
      {"x", "w1", "w2"});
  return k;
}

}  // namespace nki::kernels
