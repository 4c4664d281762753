/** \file Collectives refuse buffers on several sim::Devices, or more devices than NeuronCores (one process's devices). */
#include "nki/collectives.h"
#include "test_support.h"

namespace {
std::vector<nki::Tensor> ones(int n, const nki::sim::Device& device) {
  std::vector<nki::Tensor> b;
  for (int i = 0; i < n; ++i) b.push_back(nki::Tensor::from_floats({4}, nki::DType::fp32, std::vector<float>(4, 1.0f), device));
  return b;
}
}  // namespace

TEST_CASE("collectives: buffers on different devices, or more than the cores, are refused") {
  const nki::sim::Device eight("trn2", 8), other("trn2", 8);
  std::vector<nki::Tensor> in = ones(2, eight);
  in.push_back(ones(1, other).front());
  CHECK(test::user_error_of([&] { nki::all_reduce(in, nki::ReduceOp::max); }) ==
        "all_reduce: err_collective_device: device 2's buffer lives on another sim::Device than device 0's");
  const nki::sim::Device two("trn2", 2);
  CHECK(test::user_error_of([&] { nki::all_reduce(ones(3, two), nki::ReduceOp::sum); }) ==
        "all_reduce: err_collective_device: 3 devices take part but their sim::Device has 2 NeuronCores; one core runs "
        "each device");
}
