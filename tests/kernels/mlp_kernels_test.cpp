/** \file mlp against the host, and tensor_parallel_mlp on a data=2, tensor=4 mesh against mlp on one core. */
#include "kernel_check.h"
#include "nki/sharding.h"
#include "nki/world_launch.h"

namespace nk = nki::kernels;
using nki::DType;

TEST_CASE("mlp - gelu(x @ w1) @ w2 on one core, both executors, fp32 and bf16") {
  for (DType dt : {DType::fp32, DType::bf16}) {
    CAPTURE(nki::dtype_name(dt));
    const std::int64_t B = 128, H = 256, F = 640;  // 512 does not divide 640: the hidden layer goes in 128-wide banks
    const nki::Tensor x = kt::input({B, H}, dt, 91, -1.0f, 1.0f);
    const nki::Tensor w1 = kt::input({H, F}, dt, 92, -0.0625f, 0.0625f);
    const nki::Tensor w2 = kt::input({F, H}, dt, 93, -0.0625f, 0.0625f);
    const auto want = kt::ref::mlp(x.to_values(), w1.to_values(), w2.to_values(), B, H, F);
    const kt::ref::Tolerance tol = dt == DType::fp32 ? kt::ref::Tolerance{1e-4, 1e-4} : kt::ref::Tolerance{1e-3, 1e-2};
    kt::check_kernel(nk::mlp(), nk::mlp_grid({x.shape(), w1.shape(), w2.shape()}), {x, w1, w2}, want, tol);
  }
  CHECK(test::user_error_of([] { (void)nk::mlp_grid({{128, 256}, {256, 512}, {512, 128}}); }) ==
        "mlp: err_input_shape_mismatch: x [128,256], w1 [256,512] and w2 [512,128] do not chain: x [B, H], w1 [H, F], "
        "w2 [F, H]");
}

TEST_CASE("tensor_parallel_mlp - w1 by columns, w2 by rows over tensor=4: each rank's y is mlp's on one core, closely") {
  const nki::sim::Device device("trn2", 8);
  const nki::Mesh mesh = nki::Mesh::iota({2, 4}, {"data", "tensor"});
  const std::int64_t B = 128, H = 256, F = 1024;
  const nki::Tensor x = kt::input({B, H}, DType::bf16, 94, -1.0f, 1.0f);
  const nki::Tensor w1 = kt::input({H, F}, DType::bf16, 95, -0.0625f, 0.0625f);
  const nki::Tensor w2 = kt::input({F, H}, DType::bf16, 96, -0.0625f, 0.0625f);
  auto on = [&](const nki::Tensor& t) { return nki::Tensor::from_values(device, t.shape(), t.dtype(), t.to_values()); };
  const nki::Tensor xd = on(x);
  const nki::ShardedTensor w1s = nki::mark_sharding(on(w1), mesh, nki::PartitionSpec::parse("(None, 'tensor')"));
  const nki::ShardedTensor w2s = nki::mark_sharding(on(w2), mesh, nki::PartitionSpec::parse("('tensor', None)"));
  const std::vector<double> one = nk::mlp()(x, w1, w2).to_values();
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    const nki::WorldResult r = nki::WorldLaunch(nk::tensor_parallel_mlp().launch({}).with({.executor = ex}), mesh).run({xd, w1s, w2s});
    for (int rank = 0; rank < 8; ++rank) {
      CAPTURE(rank);
      CHECK(kt::ref::allclose_mismatch(r.outputs[0].shard(rank).to_values(), one, {1e-4, 1e-4}) == "");
    }
  }
}
