/**
 * \file Tutorial 2: the same tensor add, split across the two NeuronCores of a logical core.
 *
 * On Trn2 two physical NeuronCores form one logical core (LNC=2) and share HBM. A grid
 * factor written `nl::nc(2)` tells the runtime to spread that factor over both cores.
 * `nl::spmd_dim(grid_x, nl::nc(2))` is ONE logical grid axis of size grid_x * 2 whose
 * index is i_x * 2 + i_nc, so program_id(0) still counts 0..3 and the kernel body is
 * unchanged: NC0 runs the even program_id(0) values, NC1 the odd ones.
 *
 * The kernel is compiled once (SPMD): program ids are runtime values, so the single
 * artifact serves every instance on both cores.
 */
#include <random>

#include "nki/kernels.h"
#include "nki/nki.h"
#include "tutorial_check.h"

namespace nl = nki::language;

int main() {
  const std::int64_t P = 512, F = 2048;
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> a_host(P * F), b_host(P * F);
  for (float& v : a_host) v = dist(rng);
  for (float& v : b_host) v = dist(rng);

  // Inputs live in the simulated HBM that both cores share.
  nki::Tensor a = nki::Tensor::from_floats({P, F}, nl::bfloat16, a_host);
  nki::Tensor b = nki::Tensor::from_floats({P, F}, nl::bfloat16, b_host);

  const std::int64_t grid_x = P / (128 * 2);  // 2: the partition tiles each core takes
  const std::int64_t grid_y = F / 512;        // 4
  const nki::Kernel& tensor_add = nki::kernels::tensor_add();

  nki::LaunchResult r = tensor_add[nl::spmd_dim(grid_x, nl::nc(2)), grid_y].run({a, b});
  tutorial::print_placement(r);
  fmt::print("artifacts compiled {}, reused {}\n", r.compiled, r.reused);

  // Host reference: the framework computes in fp32 from the same bf16 inputs.
  std::vector<float> a_bf = a.to_floats(), b_bf = b.to_floats(), expected(P * F);
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = a_bf[i] + b_bf[i];
  return tutorial::check_allclose(r.outputs[0].to_floats(), expected, 1e-4, 1e-2);
}
