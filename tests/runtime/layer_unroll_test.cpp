/** \file layer_unroll_factor: the outermost loop unrolled in the compiled code, results bit-identical to the interpreter. */
#include <filesystem>

#include "test_support.h"

namespace nl = nki::language;

namespace {

/** out[i] = (a[i] * 3 + 1) for row tiles i of an affine_range: each iteration stores at its own rows. */
nki::Kernel affine_rows() {
  return nki::jit("unroll_rows", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(a.shape()[1])[nl::newaxis, nl::_];
    for (auto i : nl::affine_range(a.shape()[0] / 128)) {
      auto x = nl::load(a[i * 128 + ip, jf]);
      nl::store(out[i * 128 + ip, jf], x * 3.0f + 1.0f);
    }
    return out;
  });
}

/** A running sum carried in SBUF across a sequential outer loop, with an inner affine loop over column halves. */
nki::Kernel running_sum_nested() {
  return nki::jit("unroll_running_sum", [](nl::tensor a) {
    const std::int64_t n = a.shape()[0] / 128, f = a.shape()[1];
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto acc = nl::zeros({128, f}, nl::float32, nl::sbuf, "acc");
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jh = nl::arange(f / 2)[nl::newaxis, nl::_];
    for (auto i : nl::sequential_range(n)) {
      for (auto h : nl::affine_range(2)) {
        auto x = nl::load(a[i * 128 + ip, h * (f / 2) + jh]);
        acc[ip, h * (f / 2) + jh] = nl::add(acc[ip, h * (f / 2) + jh], x);
        nl::store(out[i * 128 + ip, h * (f / 2) + jh], acc[ip, h * (f / 2) + jh]);
      }
    }
    return out;
  });
}

nki::LaunchResult run_with(const nki::Kernel& k, nki::Executor ex, int unroll, const nki::Tensor& a) {
  nki::LaunchOptions o;
  o.executor = ex;
  o.layer_unroll_factor = unroll;
  return k.launch(nki::GridSpec{}).with(o).run({a});
}

std::string lowered_of(const nki::LaunchResult& r) {
  REQUIRE(r.artifact_keys.size() == 1);
  return test::read_bytes((nki::cache::entry_directory(r.artifact_keys[0]) / "lowered.stmt").string());
}

}  // namespace

TEST_CASE("an unrolled outermost loop gives the interpreter's bytes for every factor and trip count") {
  test::FreshCache cache;
  const std::int64_t trip = 5;  // 2, 3 and 4 leave a remainder, 5 does not, 9 is more than the trip count
  const nki::Tensor a16 = nki::Tensor::from_floats({trip * 128, 16}, nki::DType::bf16, test::random_floats(trip * 128 * 16, 11));
  const nki::Tensor a32 = nki::Tensor::from_floats({trip * 128, 16}, nki::DType::fp32, test::random_floats(trip * 128 * 16, 12));
  const nki::Kernel rows = affine_rows(), sum = running_sum_nested();
  const nki::Tensor want_rows = run_with(rows, nki::Executor::reference, 1, a16).outputs[0];
  const nki::Tensor want_sum = run_with(sum, nki::Executor::reference, 1, a32).outputs[0];
  for (const int unroll : {2, 3, 5, 9}) {
    CAPTURE(unroll);
    CHECK(test::first_difference(run_with(rows, nki::Executor::halide, unroll, a16).outputs[0], want_rows) == -1);
  }
  for (const int unroll : {2, 4}) {  // the sequential accumulator and the inner loop across copies and the remainder
    CAPTURE(unroll);
    CHECK(test::first_difference(run_with(sum, nki::Executor::halide, unroll, a32).outputs[0], want_sum) == -1);
  }
}

TEST_CASE("the unroll factor is in the cache key and in the lowered code") {
  test::FreshCache cache;
  const nki::Kernel k = affine_rows();
  const nki::Tensor a = nki::Tensor::from_floats({5 * 128, 16}, nki::DType::fp32, test::random_floats(5 * 128 * 16, 3));
  const nki::LaunchResult rolled = run_with(k, nki::Executor::halide, 1, a);
  const nki::LaunchResult by2 = run_with(k, nki::Executor::halide, 2, a);
  const nki::LaunchResult by2_again = run_with(k, nki::Executor::halide, 2, a);
  REQUIRE(rolled.artifact_keys.size() == 1);
  REQUIRE(by2.artifact_keys.size() == 1);
  CHECK(rolled.artifact_keys != by2.artifact_keys);
  CHECK(by2_again.artifact_keys == by2.artifact_keys);
  CHECK(by2_again.compiled == 0);
  const std::string key_text =
      test::read_bytes((nki::cache::entry_directory(by2.artifact_keys[0]) / "key.txt").string());
  CHECK(key_text.find("\nlayer_unroll_factor 2\n") != std::string::npos);

  // Rolled: one loop over the 5 iterations. By 2: two copies per group of 2, then one remaining iteration.
  const std::string r = lowered_of(rolled), u = lowered_of(by2);
  CHECK(r.starts_with("for loop0 = 0 step 1, every iteration:\n  nki_unroll_rows_store_1 -> store4\n"));
  CHECK(u.starts_with("for loop0 = 0 step 2, 2 times:\n"
                      "  nki_unroll_rows_store_1 -> store4  (loop0 + 0)\n"
                      "  nki_unroll_rows_store_2 -> store4  (loop0 + 1)\n"
                      "for loop0 = 4 step 1, 1 time:\n"
                      "  nki_unroll_rows_store_1 -> store4\n"));
  // Halide's lowered statement of the second copy reads one iteration further: 128 rows x 16 = 2048 elements on;
  // the step's arguments are its buffers, the rank, the loop variables and its output.
  CHECK(u.find("func nki_unroll_rows_store_2 (tensor0, rank, loop0, ") != std::string::npos);
  // A vector of the row's elements (16 lanes with AVX-512, 8 with AVX2) 2048 elements on.
  CHECK(u.find(" + 2048, 1, ") != std::string::npos);
  CHECK(r.find(" + 2048, 1, ") == std::string::npos);
}
