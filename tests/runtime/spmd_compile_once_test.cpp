/** \file SPMD: one compiled artifact serves every instance on every core; the trace is cached per signature. */
#include "nki/kernels.h"
#include "test_support.h"
#include "nki/cli.h"

namespace nl = nki::language;

TEST_CASE("a kernel compiles once for all instances and cores, and is reused by later launches") {
  const nki::Kernel k = nki::jit("spmd_once", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto i = nl::program_id(0) * 128 + nl::arange(128)[nl::_, nl::newaxis];
    auto j = nl::program_id(1) * 16 + nl::arange(16)[nl::newaxis, nl::_];
    nl::store(out[i, j], nl::load(a[i, j]) * 2);
    return out;
  });
  auto a = nki::Tensor::from_floats({512, 64}, nki::DType::fp32, test::random_floats(512 * 64, 4));
  test::FreshCache cache;
  const std::int64_t before = nki::compile_count();
  nki::LaunchResult r1 = k[nl::spmd_dim(2, nl::nc(2)), 4].run({a});
  CHECK(r1.compiled == 1);
  CHECK(r1.reused == 0);
  CHECK(nki::compile_count() == before + 1);
  // Another grid with the same logical shape, another placement: same IR, same artifact.
  nki::LaunchResult r2 = k[nl::spmd_dim(nl::nc(2), 2), 4].run({a});
  CHECK(r2.compiled == 0);
  CHECK(r2.reused == 1);
  CHECK(r2.ir_hash == r1.ir_hash);
  // No nc at all: still the same artifact.
  nki::LaunchResult r3 = k[4, 4].run({a});
  CHECK(r3.compiled == 0);
  CHECK(nki::compile_count() == before + 1);
  CHECK(test::first_difference(r1.outputs[0], r3.outputs[0]) == -1);
}

TEST_CASE("the registry's two tensor-add entries share one kernel and so one artifact") {
  nki::KernelRegistry reg;
  nki::cli::register_library_kernels(reg);
  auto a = nki::Tensor::from_floats({512, 1024}, nki::DType::bf16, test::random_floats(512 * 1024, 5));
  auto b = nki::Tensor::from_floats({512, 1024}, nki::DType::bf16, test::random_floats(512 * 1024, 6));
  const auto* one = reg.find("tensor_add");
  const auto* two = reg.find("tensor_add_nc2");
  REQUIRE(one != nullptr);
  REQUIRE(two != nullptr);
  nki::LaunchResult r1 = one->kernel.launch(one->default_grid({a.shape(), b.shape()})).run({a, b});
  nki::LaunchResult r2 = two->kernel.launch(two->default_grid({a.shape(), b.shape()})).run({a, b});
  CHECK(r2.grid.str() == "spmd_dim(2,nc(2)),2");
  CHECK(r2.compiled == 0);
  CHECK(r1.ir_hash == r2.ir_hash);
  CHECK(r2.cores[0].instances.size() == 4);
  CHECK(r2.cores[1].instances.size() == 4);
}
