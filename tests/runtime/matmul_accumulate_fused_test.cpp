/**
 * \file `psum[...] += nl.matmul(...)` compiles to one step (the matmul's blocks added into PSUM
 * where they are made) when nothing else reads the matmul's result, and gives the interpreter's
 * bits either way, NaN, infinities and signed zeros included.
 */
#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "nki/compile_cache.h"
#include "test_support.h"

namespace nl = nki::language;

namespace {

constexpr std::int64_t kK = 256, kM = 128, kN = 512;  // two K tiles of a [128, 512] result

/**
 * res = zeros; res += matmul over the two K tiles; out = res. With `read_twice`, a second PSUM
 * tile accumulates the same matmul results, so the result is read by two stores.
 */
nki::Kernel accumulate_kernel(bool read_twice) {
  return nki::jit(
      read_twice ? "matmul_accumulate_read_twice" : "matmul_accumulate",
      [read_twice](nl::tensor lhsT, nl::tensor rhs) {
        auto out = nl::ndarray({kM, kN}, nl::float32, nl::shared_hbm, "out");
        auto res = nl::zeros({kM, kN}, nl::float32, nl::psum, "res");
        auto again = nl::zeros({kM, kN}, nl::float32, nl::psum, "again");
        for (auto k : nl::affine_range(kK / 128)) {
          auto a = nl::load(lhsT[nl::ds(k * 128, 128), nl::_]);
          auto b = nl::load(rhs[nl::ds(k * 128, 128), nl::_]);
          auto p = nl::matmul(a, b, true);
          res[nl::_, nl::_] += p;
          if (read_twice) again[nl::_, nl::_] += p;
        }
        if (read_twice) nl::store(out[nl::_, nl::_], res[nl::_, nl::_] + again[nl::_, nl::_]);
        else nl::store(out[nl::_, nl::_], nl::copy(res[nl::_, nl::_]));
        return out;
      },
      {"lhsT", "rhs"});
}

/** fp32 operands: random values, with NaNs (payloads, signs), infinities, signed zeros, subnormals and huge values. */
std::vector<float> operand(std::int64_t n, unsigned seed) {
  const float specials[] = {std::bit_cast<float>(0x7fc00001u), std::bit_cast<float>(0xffa00000u),
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            0.0f, -0.0f, std::numeric_limits<float>::denorm_min(), 3e38f, -3e38f};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = rng() % 97 == 0 ? specials[rng() % std::size(specials)] : u(rng);
  return v;
}

/** The plan of the artifact a launch ran (its entry in the compile cache). */
std::string plan_of(const nki::LaunchResult& r) {
  REQUIRE(r.artifact_keys.size() == 1);
  return test::read_bytes((nki::cache::entry_directory(r.artifact_keys[0]) / "plan.json").string());
}

}  // namespace

TEST_CASE("psum += matmul is one step, bit for bit the interpreter's, specials included") {
  const nki::Tensor lhsT = nki::Tensor::from_floats({kK, kM}, nl::float32, operand(kK * kM, 1));
  const nki::Tensor rhs = nki::Tensor::from_floats({kK, kN}, nl::float32, operand(kK * kN, 2));
  for (bool read_twice : {false, true}) {
    CAPTURE(read_twice);
    const nki::Kernel k = accumulate_kernel(read_twice);
    const nki::LaunchResult h = k.launch(nki::GridSpec{}).with({nki::Executor::halide}).run({lhsT, rhs});
    const nki::LaunchResult r = k.launch(nki::GridSpec{}).with({nki::Executor::reference}).run({lhsT, rhs});
    const std::vector<float> got = h.outputs.at(0).to_floats();
    CHECK(test::first_difference(h.outputs.at(0), r.outputs.at(0)) == -1);
    // The specials reach the result: some elements are NaN, some infinite.
    CHECK(std::count_if(got.begin(), got.end(), [](float x) { return std::isnan(x); }) > 0);
    CHECK(std::count_if(got.begin(), got.end(), [](float x) { return std::isinf(x); }) > 0);
    // The matmul's result (the kernel's third tile: a, b, p) has a step of its own, writing
    // scratch, only when a second store reads it.
    const bool own_step = plan_of(h).find("_tile2_") != std::string::npos;
    CHECK(own_step == read_twice);
  }
}
