/** \file Grids and shapes too large for memory are refused, naming the bytes, before anything is allocated. */
#include "nki/kernels.h"
#include "nki/placement.h"
#include "nki/simulator/host_memory.h"
#include "test_support.h"

namespace nl = nki::language;

namespace {

const std::int64_t kHost = nki::sim::host_memory_bytes();

/** Each instance keeps a private_hbm scratch tensor of [65536, 65536] fp32 (16 GiB) and copies a tile through it. */
const nki::Kernel& private_scratch_kernel() {
  static const nki::Kernel k = nki::jit(
      "private_scratch",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto scratch = nl::ndarray({65536, 65536}, nl::float32, nl::private_hbm);
        auto [ip, jf] = nl::mgrid(128, 8);
        auto row = nl::program_id(0) * 128 + ip;
        nl::store(scratch[ip, jf], nl::load(a[row, jf]));
        nl::store(out[row, jf], nl::load(scratch[ip, jf]));
        return out;
      },
      {"a"});
  return k;
}

}  // namespace

TEST_CASE("a grid whose placement would not fit in host memory is refused with the bytes it needs") {
  const std::int64_t n = std::int64_t{1} << 40;
  CHECK(test::user_error_of([&] { nki::place_instances(nki::parse_grid("1099511627776,1"), 2, "k"); }) ==
        fmt::format("k: err_grid_too_large: grid \"1099511627776,1\" has {} instances; placing them on cores needs {} "
                    "bytes, more than the host's {} bytes of memory",
                    n, n * 20, kHost));
  // Through a launch: refused before tracing, compiling or allocating anything.
  nki::sim::Device chip("trn2", 2);
  auto a = nki::Tensor::from_floats({128, 512}, nki::DType::fp32, test::random_floats(128 * 512, 1), chip);
  const std::int64_t in_use = chip.hbm().bytes_in_use();
  const int line = __LINE__ + 1;
  CHECK(test::user_error_of([&] { nki::kernels::tensor_add()[nl::spmd_dim(nl::nc(2), n), 1](a, a); }) ==
        fmt::format("tensor_add (tests/runtime/memory_limits_test.cpp:{}): err_grid_too_large: grid "
                    "\"spmd_dim(nc(2),1099511627776),1\" has {} instances; placing them on cores needs {} bytes, more "
                    "than the host's {} bytes of memory",
                    line, 2 * n, 2 * n * 20, kHost));
  CHECK(chip.hbm().bytes_in_use() == in_use);
}

TEST_CASE("a tensor larger than the chip's HBM or the host's memory is refused with its bytes") {
  nki::sim::Device chip("trn2", 2);
  const std::int64_t capacity = chip.hbm().capacity();
  CHECK(test::user_error_of([&] { nki::Tensor({1 << 20, 1 << 20}, nki::DType::fp32, chip); }) ==
        fmt::format("err_hbm_out_of_memory: allocating 4398046511104 bytes of HBM would exceed the chip's {} bytes (0 "
                    "in use)",
                    capacity));
  // More than the host has but within HBM (on hosts with less memory than a trn2 chip's HBM).
  const std::int64_t elements = kHost / 4 + 1024;
  if (elements * 4 <= capacity) {
    CHECK(test::user_error_of([&] { nki::Tensor({elements}, nki::DType::fp32, chip); }) ==
          fmt::format("err_host_out_of_memory: allocating {} bytes of simulated HBM would exhaust the host's {} bytes "
                      "of memory",
                      elements * 4, kHost));
  }
  CHECK(test::user_error_of([&] { nki::Tensor({std::int64_t{1} << 31, std::int64_t{1} << 31}, nki::DType::fp32, chip); }) ==
        "err_invalid_shape: tensor shape [2147483648,2147483648] of fp32 has more bytes than fit in 64 bits");
  CHECK(chip.hbm().bytes_in_use() == 0);
}

TEST_CASE("per-instance private HBM times the busy cores is checked against free HBM before any is allocated") {
  nki::sim::Device chip("trn2", 8);
  auto a = nki::Tensor::from_floats({1024, 8}, nki::DType::fp32, test::random_floats(1024 * 8, 3), chip);
  const std::int64_t per_core = std::int64_t{65536} * 65536 * 4;
  const std::int64_t free_hbm = chip.hbm().capacity() - chip.hbm().bytes_in_use();
  for (nki::Executor ex : {nki::Executor::reference, nki::Executor::halide}) {
    CAPTURE(nki::executor_name(ex));
    const int line = __LINE__ + 1;
    CHECK(test::user_error_of([&] { private_scratch_kernel()[nl::nc(8)].with({ex, nullptr}).run({a}); }) ==
          fmt::format("private_scratch (tests/runtime/memory_limits_test.cpp:{}): err_hbm_out_of_memory: its private_hbm "
                      "tensors take {} bytes on each of 8 NeuronCores ({} bytes), more than the {} bytes of HBM free",
                      line, per_core, 8 * per_core, free_hbm));
  }
  // Two cores fit in HBM (32 GiB of 96); on a host with less memory than that, the host's limit refuses it.
  if (2 * per_core > kHost) {
    const nki::BoundLaunch two = private_scratch_kernel()[nl::nc(2)].with({nki::Executor::reference, nullptr});
    const int line = __LINE__ + 1;
    CHECK(test::user_error_of([&] { two.run({a}); }) ==
          fmt::format("private_scratch (tests/runtime/memory_limits_test.cpp:{}): err_host_out_of_memory: its "
                      "per-instance tensors take {} bytes on each of 2 NeuronCores ({} bytes), more than the host's {} "
                      "bytes of memory",
                      line, per_core, 2 * per_core, kHost));
  }
}
