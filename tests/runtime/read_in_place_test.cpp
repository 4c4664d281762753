/**
 * \file Reads of on-chip tensors the kernel writes: no snapshot (a step copying the tile to scratch)
 * when every use of the value runs before the tensor's next write, or that write is an update in
 * place (`acc[i] = acc[i] + x`); a snapshot still where a later write could change what was read.
 * Both executors give the same bits either way.
 */
#include <cmath>
#include <random>

#include "test_support.h"

namespace nl = nki::language;

namespace {

constexpr std::int64_t kP = 128, kF = 64;

std::vector<float> values(std::int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

/** Whether the compiled plan has a step computing a tile into scratch (a snapshot, here). */
bool has_tile_step(const nki::LaunchResult& r) { return test::plan_of(r).find("_tile") != std::string::npos; }

/** An SBUF accumulator of `dtype` updated in place once per row block of x, then stored. */
nki::Kernel accumulator_kernel(nki::DType dtype) {
  return nki::jit(
      dtype == nl::bfloat16 ? "sbuf_accumulator_bf16" : "sbuf_accumulator_fp32",
      [dtype](nl::tensor x) {
        auto out = nl::ndarray({kP, kF}, nl::float32, nl::shared_hbm, "out");
        auto acc = nl::zeros({kP, kF}, dtype, nl::sbuf, "acc");
        for (auto k : nl::sequential_range(4)) acc[nl::_, nl::_] = acc[nl::_, nl::_] + nl::load(x[nl::ds(k * kP, kP), nl::_]);
        nl::store(out[nl::_, nl::_], nl::copy(acc[nl::_, nl::_], {.dtype = nl::float32}));
        return out;
      },
      {"x"});
}

}  // namespace

TEST_CASE("an SBUF accumulator updated in place takes no snapshot and matches the interpreter") {
  const std::vector<float> xs = values(4 * kP * kF, 1);
  const nki::Tensor x = nki::Tensor::from_floats({4 * kP, kF}, nl::float32, xs);
  for (nki::DType dtype : {nl::float32, nl::bfloat16}) {
    CAPTURE(nki::dtype_name(dtype));
    const nki::LaunchResult h = test::same_bits_on_both(accumulator_kernel(dtype), {x});
    CHECK_FALSE(has_tile_step(h));
    if (dtype == nl::float32) {  // the sum in row-block order, one fp32 rounding per add
      const std::vector<float> got = h.outputs.at(0).to_floats();
      for (std::int64_t e = 0; e < kP * kF; ++e) {
        float want = 0.0f;
        for (std::int64_t k = 0; k < 4; ++k) want += xs[static_cast<std::size_t>(k * kP * kF + e)];
        REQUIRE(got[static_cast<std::size_t>(e)] == want);
      }
    }
  }
}

TEST_CASE("a read of a written tensor used only before its next write takes no snapshot") {
  const std::vector<float> xs = values(kP * kF, 2);
  const nki::Tensor x = nki::Tensor::from_floats({kP, kF}, nl::float32, xs);
  const nki::Kernel k = nki::jit("read_then_elementwise_store", [](nl::tensor x) {
    auto out = nl::ndarray({kP, kF}, nl::float32, nl::shared_hbm, "out");
    auto s = nl::ndarray({kP, kF}, nl::float32, nl::sbuf, "s");
    s[nl::_, nl::_] = nl::load(x[nl::_, nl::_]);
    nl::store(out[nl::_, nl::_], s[nl::_, nl::_] * 2.0f + 1.0f);
    return out;
  }, {"x"});
  const nki::LaunchResult h = test::same_bits_on_both(k, {x});
  CHECK_FALSE(has_tile_step(h));
  const std::vector<float> got = h.outputs.at(0).to_floats();
  for (std::size_t e = 0; e < got.size(); ++e) REQUIRE(got[e] == xs[e] * 2.0f + 1.0f);
}

TEST_CASE("a read that a later write could change keeps its snapshot") {
  const std::vector<float> xs = values(kP * kF, 3);
  const nki::Tensor x = nki::Tensor::from_floats({kP, kF}, nl::float32, xs);

  SUBCASE("an update of the columns one to the right of those it read") {
    const nki::Kernel k = nki::jit("shifted_update", [](nl::tensor x) {
      auto out = nl::ndarray({kP, kF}, nl::float32, nl::shared_hbm, "out");
      auto s = nl::ndarray({kP, kF}, nl::float32, nl::sbuf, "s");
      s[nl::_, nl::_] = nl::load(x[nl::_, nl::_]);
      s[nl::_, nl::ds(1, kF - 1)] = s[nl::_, nl::ds(0, kF - 1)] + 1.0f;
      nl::store(out[nl::_, nl::_], nl::copy(s[nl::_, nl::_]));
      return out;
    }, {"x"});
    const nki::LaunchResult h = test::same_bits_on_both(k, {x});
    CHECK(has_tile_step(h));
    const std::vector<float> got = h.outputs.at(0).to_floats();
    for (std::int64_t p = 0; p < kP; ++p) {
      for (std::int64_t f = 0; f < kF; ++f) {
        const float want = f == 0 ? xs[static_cast<std::size_t>(p * kF)] : xs[static_cast<std::size_t>(p * kF + f - 1)] + 1.0f;
        REQUIRE(got[static_cast<std::size_t>(p * kF + f)] == want);
      }
    }
  }

  SUBCASE("the value read is used again after the update in place") {
    const nki::Kernel k = nki::jit("read_after_update", [](nl::tensor x) {
      auto out = nl::ndarray({kP, kF}, nl::float32, nl::shared_hbm, "out");
      auto old = nl::ndarray({kP, kF}, nl::float32, nl::shared_hbm, "old");
      auto s = nl::ndarray({kP, kF}, nl::float32, nl::sbuf, "s");
      s[nl::_, nl::_] = nl::load(x[nl::_, nl::_]);
      auto t = s[nl::_, nl::_] * 1.0f;
      s[nl::_, nl::_] = t + 1.0f;
      nl::store(old[nl::_, nl::_], t * 2.0f);
      nl::store(out[nl::_, nl::_], nl::copy(s[nl::_, nl::_]));
      return std::tuple{out, old};
    }, {"x"});
    const nki::LaunchResult h = test::same_bits_on_both(k, {x});
    CHECK(has_tile_step(h));
    const std::vector<float> got = h.outputs.at(0).to_floats(), old = h.outputs.at(1).to_floats();
    for (std::size_t e = 0; e < xs.size(); ++e) {
      REQUIRE(got[e] == xs[e] + 1.0f);
      REQUIRE(old[e] == xs[e] * 2.0f);  // the value before the update
    }
  }
}
