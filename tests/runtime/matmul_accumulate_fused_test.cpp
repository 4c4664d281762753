/**
 * \file `psum[...] += nl.matmul(...)` compiles to one step (the matmul's blocks added into PSUM
 * where they are made) when nothing else reads the matmul's result, and gives the interpreter's
 * bits either way: NaN and infinities, rounding of ordinary values, a PSUM slice at a loop's
 * offset, unrolled loops.
 */
#include <bit>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include <random>

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

/**
 * Two column halves of rhs, each accumulated into its half of one [128, 1024] PSUM tensor: the
 * fused store lands at an offset the outer loop's variable gives.
 */
const nki::Kernel& sliced_kernel() {
  static const nki::Kernel kernel = nki::jit(
      "matmul_accumulate_sliced",
      [](nl::tensor lhsT, nl::tensor rhs) {
        auto out = nl::ndarray({kM, 2 * kN}, nl::float32, nl::shared_hbm, "out");
        auto res = nl::zeros({kM, 2 * kN}, nl::float32, nl::psum, "res");
        for (auto n : nl::affine_range(2)) {
          for (auto k : nl::affine_range(kK / 128)) {
            auto a = nl::load(lhsT[nl::ds(k * 128, 128), nl::_]);
            auto b = nl::load(rhs[nl::ds(k * 128, 128), nl::ds(n * kN, kN)]);
            res[nl::_, nl::ds(n * kN, kN)] += nl::matmul(a, b, true);
          }
        }
        nl::store(out[nl::_, nl::_], nl::copy(res[nl::_, nl::_]));
        return out;
      },
      {"lhsT", "rhs"});
  return kernel;
}

/**
 * fp32 operands in [-2, 2]; with `specials`, one value in 4001 is a NaN (with a payload, or
 * negative), an infinity, a signed zero, a subnormal or a huge value: rare enough that most
 * sums (512 operands each) stay finite.
 */
std::vector<float> operand(std::int64_t n, unsigned seed, bool specials) {
  const float special[] = {std::bit_cast<float>(0x7fc00001u), std::bit_cast<float>(0xffa00000u),
                           std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                           0.0f, -0.0f, std::numeric_limits<float>::denorm_min(), 3e38f, -3e38f};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = specials && rng() % 4001 == 0 ? special[rng() % std::size(special)] : u(rng);
  return v;
}

/** How many fill steps the plan of a launch's artifact runs. */
int fill_steps(const nki::LaunchResult& h) {
  const nlohmann::json plan = nlohmann::json::parse(test::plan_of(h));
  int n = 0;
  for (const auto& step : plan.at("steps")) n += step.at("kind") == "fill";
  return n;
}

/**
 * res = zeros; for k: out[k] = res (a snapshot before the matmul), res += matmul. The loop reads
 * res before its first psum += matmul writes it, so that store cannot do the fill.
 */
const nki::Kernel& read_first_kernel() {
  static const nki::Kernel kernel = nki::jit(
      "matmul_accumulate_read_first",
      [](nl::tensor lhsT, nl::tensor rhs) {
        auto out = nl::ndarray({kK / 128 * kM, kN}, nl::float32, nl::shared_hbm, "out");
        auto res = nl::zeros({kM, kN}, nl::float32, nl::psum, "res");
        for (auto k : nl::affine_range(kK / 128)) {
          nl::store(out[nl::ds(k * kM, kM), nl::_], nl::copy(res[nl::_, nl::_]));
          auto a = nl::load(lhsT[nl::ds(k * 128, 128), nl::_]);
          auto b = nl::load(rhs[nl::ds(k * 128, 128), nl::_]);
          res[nl::_, nl::_] += nl::matmul(a, b, true);
        }
        return out;
      },
      {"lhsT", "rhs"});
  return kernel;
}

}  // namespace

TEST_CASE("the first psum += matmul writing a whole PSUM tile does its zero fill, only where nothing reads the tile first") {
  const nki::Tensor lhsT = nki::Tensor::from_floats({kK, kM}, nl::float32, operand(kK * kM, 7, true));
  const nki::Tensor rhs = nki::Tensor::from_floats({kK, 2 * kN}, nl::float32, operand(kK * 2 * kN, 8, true));
  const nki::Tensor rhs_half = nki::Tensor::from_floats({kK, kN}, nl::float32, operand(kK * kN, 8, true));
  for (int unroll : {1, 2}) {
    CAPTURE(unroll);
    // res's fill is done by the loop's first fused store; `again` is never stored (read_twice off): it keeps its fill.
    CHECK(fill_steps(test::same_bits_on_both(accumulate_kernel(false), {lhsT, rhs_half}, unroll)) == 1);
    // The matmul's result read twice: no fused store, both fills stay.
    CHECK(fill_steps(test::same_bits_on_both(accumulate_kernel(true), {lhsT, rhs_half}, unroll)) == 2);
    // Each fused store writes half of res: the fill stays.
    CHECK(fill_steps(test::same_bits_on_both(sliced_kernel(), {lhsT, rhs}, unroll)) == 1);
    // res read before the loop's first matmul: the fill stays, and the first snapshot is all zeros.
    const nki::LaunchResult h = test::same_bits_on_both(read_first_kernel(), {lhsT, rhs_half}, unroll);
    CHECK(fill_steps(h) == 1);
    const std::vector<float> got = h.outputs.at(0).to_floats();
    CHECK(std::count(got.begin(), got.begin() + kM * kN, 0.0f) == kM * kN);
    CHECK(std::count(got.begin() + kM * kN, got.end(), 0.0f) < kM * kN / 100);
  }
}

TEST_CASE("psum += matmul is one step, bit for bit the interpreter's, specials included") {
  for (bool specials : {true, false}) {
    CAPTURE(specials);
    const nki::Tensor lhsT = nki::Tensor::from_floats({kK, kM}, nl::float32, operand(kK * kM, 1, specials));
    const nki::Tensor rhs = nki::Tensor::from_floats({kK, kN}, nl::float32, operand(kK * kN, 2, specials));
    for (bool read_twice : {false, true}) {
      CAPTURE(read_twice);
      const nki::LaunchResult h = test::same_bits_on_both(accumulate_kernel(read_twice), {lhsT, rhs});
      const std::vector<float> got = h.outputs.at(0).to_floats();
      const auto nan = std::count_if(got.begin(), got.end(), [](float x) { return std::isnan(x); });
      const auto finite = std::count_if(got.begin(), got.end(), [](float x) { return std::isfinite(x); });
      // With specials, NaN and infinities reach the result but most sums stay finite; without, all do.
      CHECK((nan > 0) == specials);
      // Every NaN is the canonical one, though the operands' NaNs carry payloads (0x7fc00001, 0xffa00000).
      const nki::Tensor& out = h.outputs.at(0);
      const auto* bits = reinterpret_cast<const std::uint32_t*>(out.data());
      CHECK(std::count(bits, bits + got.size(), 0x7fc00000u) == nan);
      if (specials) CHECK(finite > static_cast<std::int64_t>(got.size()) / 2);
      else CHECK(finite == static_cast<std::int64_t>(got.size()));
      // The matmul's result (the kernel's third tile: a, b, p) has a step of its own, writing
      // scratch, only when a second store reads it.
      const bool own_step = test::plan_of(h).find("_tile2_") != std::string::npos;
      CHECK(own_step == read_twice);
    }
  }
}

TEST_CASE("psum += matmul fused into a PSUM slice at a loop's offset, rolled and unrolled, matches the interpreter") {
  const nki::Tensor lhsT = nki::Tensor::from_floats({kK, kM}, nl::float32, operand(kK * kM, 3, false));
  const nki::Tensor rhs = nki::Tensor::from_floats({kK, 2 * kN}, nl::float32, operand(kK * 2 * kN, 4, false));
  for (int unroll : {1, 2}) {
    CAPTURE(unroll);
    const nki::LaunchResult h = test::same_bits_on_both(sliced_kernel(), {lhsT, rhs}, unroll);
    // Both halves written: no element is still PSUM's zero.
    const std::vector<float> got = h.outputs.at(0).to_floats();
    CHECK(std::count(got.begin(), got.end(), 0.0f) == 0);
    CHECK(test::plan_of(h).find("_tile2_") == std::string::npos);  // the matmul (tile 2: a, b, p) has no step of its own
  }
}

TEST_CASE("psum += an isa::nc_matmul double_row fuses too and matches the interpreter") {
  namespace isa = nki::isa;
  // [K, 2, M] by [K, 2, N] fp8 pairs, accumulated twice into one PSUM tile.
  const nki::Kernel k = nki::jit("double_row_accumulate", [](nl::tensor st, nl::tensor mv) {
    auto out = nl::ndarray({kM, kN}, nl::float32, nl::shared_hbm, "out");
    auto res = nl::zeros({kM, kN}, nl::float32, nl::psum, "res");
    for (auto r : nl::affine_range(2)) {
      (void)r;
      auto a = nl::load(st.all());
      auto b = nl::load(mv.all());
      res[nl::_, nl::_] += isa::nc_matmul(a, b, {.perf_mode = isa::matmul_perf_mode::double_row});
    }
    nl::store(out[nl::_, nl::_], nl::copy(res[nl::_, nl::_]));
    return out;
  });
  const std::int64_t K = 64;
  const nki::Tensor st = nki::Tensor::from_floats({K, 2, kM}, nl::float8_e4m3, operand(K * 2 * kM, 5, false));
  const nki::Tensor mv = nki::Tensor::from_floats({K, 2, kN}, nl::float8_e4m3, operand(K * 2 * kN, 6, false));
  const nki::LaunchResult h = test::same_bits_on_both(k, {st, mv});
  CHECK(fill_steps(h) == 0);  // res's zero fill is done by the loop's first fused store
  // No tile has a step of its own: the matmul is added into PSUM where it is made, and the copy
  // reads res in place (nothing writes res after it).
  CHECK(test::plan_of(h).find("\"function\":\"nki_double_row_accumulate_tile") == std::string::npos);
  const std::vector<float> got = h.outputs.at(0).to_floats();
  CHECK(std::count(got.begin(), got.end(), 0.0f) < static_cast<std::ptrdiff_t>(got.size() / 100));
}
