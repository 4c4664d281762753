/**
 * \file Tutorial 1: add two [512, 2048] bf16 tensors with an NKI-style kernel.
 *
 * The kernel (kernels/src/tensor_add.cpp) handles one [128, 512] tile: at most 128
 * partitions fit a tile, and 512 elements along the free dimension is a good DMA size.
 * It reads which tile from program_id(0) (partition tiles) and program_id(1) (free tiles),
 * so we launch it on a [512/128, 2048/512] = [4, 4] grid. Without an nc() factor the
 * whole grid runs on NC0, the first core of the logical core.
 *
 *   auto ix = nl::program_id(0) * 128 + nl::arange(128)[nl::_, nl::newaxis];  // (128, 1)
 *   auto iy = nl::program_id(1) * 512 + nl::arange(512)[nl::newaxis, nl::_];  // (1, 512)
 *   nl::store(c[ix, iy], nl::load(a[ix, iy]) + nl::load(b[ix, iy]));
 *
 * Arithmetic on bf16 tiles happens in fp32 and is rounded back to bf16 (nearest even).
 */
#include <random>

#include "nki/kernels.h"
#include "nki/nki.h"
#include "tutorial_check.h"

namespace nl = nki::language;

int main() {
  const std::int64_t P = 512, F = 2048;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> a_host(P * F), b_host(P * F);
  for (float& v : a_host) v = dist(rng);
  for (float& v : b_host) v = dist(rng);

  nki::Tensor a = nki::Tensor::from_floats({P, F}, nl::bfloat16, a_host);
  nki::Tensor b = nki::Tensor::from_floats({P, F}, nl::bfloat16, b_host);

  const nki::Kernel& tensor_add = nki::kernels::tensor_add();
  nki::LaunchResult r = tensor_add[P / 128, F / 512].run({a, b});
  tutorial::print_placement(r);

  std::vector<float> a_bf = a.to_floats(), b_bf = b.to_floats(), expected(P * F);
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = a_bf[i] + b_bf[i];
  return tutorial::check_allclose(r.outputs[0].to_floats(), expected, 1e-4, 1e-2);
}
