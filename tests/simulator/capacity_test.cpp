/** \file On-chip capacity: live SBUF/PSUM bytes per partition by scope and last use, per target, exact overflow messages. */
#include "test_support.h"

#include "nki/simulator/capacity.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;

namespace {
const char* kFile = "tests/simulator/capacity_test.cpp";

std::shared_ptr<const nki::ir::KernelIR> traced(const nki::Kernel& k, const nki::Shape& s, nki::DType dt = nki::DType::fp32) {
  return k.trace({s}, {dt}, nki::GridSpec{})->ir;
}
}  // namespace

TEST_CASE("capacity - two SBUF arrays that do not fit together: kernel, line, bytes asked, free and capacity") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "two_big_buffers",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
        auto big = nl::ndarray({nl::par_dim(128), 40000}, nl::float32, nl::sbuf, "big");
        line = __LINE__ + 1;
        auto more = nl::ndarray({nl::par_dim(128), 10000}, nl::float32, nl::sbuf, "more");
        big[nl::_, nl::ds(0, 64)] = nl::load(a.all());
        more[nl::_, nl::ds(0, 64)] = nl::load(a.all());
        nl::store(out.all(), big[nl::_, nl::ds(0, 64)] + more[nl::_, nl::ds(0, 64)]);
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 1));
  const std::string got = test::user_error_of([&] { k(a); });  // every launch checks, with either executor
  const std::string want = fmt::format(
      "two_big_buffers ({}:{}): err_sbuf_out_of_memory: tensor more fp32 [128,10000] needs 40000 bytes per partition of "
      "SBUF; 36608 bytes are free of the 196608 per partition on trn2 (160000 live)",
      kFile, line);
  CHECK(got == want);
  CHECK(test::user_error_of([&] { k.launch({}).with({nki::Executor::reference, nullptr}).run({a}); }) == want);
  const std::string trn1 = test::user_error_of([&] { nki::sim::check_capacity(*traced(k, {128, 64}), nki::sim::target_spec("trn1")); });
  CHECK(trn1.ends_with("on trn1 (160000 live)"));
}

TEST_CASE("capacity - an allocation inside a loop lives for one iteration, so the loop fits") {
  const nki::Kernel k = nki::jit(
      "per_iteration_buffer",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
        for (auto i : nl::affine_range(4)) {
          auto buf = nl::ndarray({nl::par_dim(128), 40000}, nl::float32, nl::sbuf, "buf");  // 160000 B per partition
          buf[nl::_, nl::ds(0, 16)] = nl::load(a[nl::_, nl::ds(i * 16, 16)]);
          nl::store(out[nl::_, nl::ds(i * 16, 16)], nl::copy(buf[nl::_, nl::ds(0, 16)]));
        }
        return out;
      },
      {"a"});
  const auto ir = traced(k, {128, 64});
  const nki::sim::CapacityUse use = nki::sim::check_capacity(*ir, nki::sim::target_spec("trn1"));
  // buf (160000) + the loaded tile (16 x 4 = 64) while it is written into buf.
  CHECK(use.sbuf_peak == 160064);
  CHECK(use.psum_peak == 0);
  auto a = nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 2));
  CHECK(test::first_difference(k(a), a) == -1);
}

TEST_CASE("capacity - a tile defined before a loop and used in it stays live through the whole loop") {
  const nki::Kernel k = nki::jit(
      "tile_across_loop",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 512}, a.dtype(), nl::shared_hbm, "out");
        auto t = nl::load(a[nl::_, nl::ds(0, 256)]);  // (128, 256) fp32: 1024 B per partition
        for (auto i : nl::sequential_range(2)) {
          auto u = nl::load(a[nl::_, nl::ds(256 + i * 256, 256)]);  // 1024 B
          auto s = u + 1.0f;                                         // 1024 B; u dies here
          nl::store(out[nl::_, nl::ds(i * 256, 256)], s + t);        // 1024 B; s dies here
        }
        return out;
      },
      {"a"});
  const nki::sim::CapacityUse use = nki::sim::check_capacity(*traced(k, {128, 768}), nki::sim::target_spec("trn2"));
  // t + u + s at the add (u is freed after it), then t + s + the sum.
  CHECK(use.sbuf_peak == 3 * 1024);
}

TEST_CASE("capacity - PSUM: two 16 KiB accumulators overflow the 16 KiB per partition") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "two_accumulators",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 16}, a.dtype(), nl::shared_hbm, "out");
        auto p1 = nl::zeros({128, 4096}, nl::float32, nl::psum, "p1");
        line = __LINE__ + 1;
        auto p2 = nl::zeros({128, 4096}, nl::float32, nl::psum, "p2");
        nl::store(out.all(), nl::copy(p1[nl::_, nl::ds(0, 16)]) + nl::copy(p2[nl::_, nl::ds(0, 16)]));
        return out;
      },
      {"a"});
  const std::string msg = test::user_error_of([&] { nki::sim::check_capacity(*traced(k, {128, 16}), nki::sim::target_spec("inf2")); });
  CHECK(msg == fmt::format("two_accumulators ({}:{}): err_psum_out_of_memory: tensor p2 fp32 [128,4096] needs 16384 bytes "
                           "per partition of PSUM; 0 bytes are free of the 16384 per partition on inf2 (16384 live)",
                           kFile, line));
}
