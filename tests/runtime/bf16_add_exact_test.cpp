/** \file The tensor-add kernel on bf16 is bit-exact against a host reference, specials included, on both executors. */
#include <bit>
#include <cmath>
#include <limits>

#include "nki/kernels.h"
#include "test_support.h"

namespace nl = nki::language;

namespace {

/** Operand pairs exercising signed zeros, infinities, NaN, subnormals and rounding ties. */
std::vector<std::pair<std::uint16_t, std::uint16_t>> special_pairs() {
  const std::uint16_t values[] = {
      0x0000, 0x8000,          // +0, -0
      0x7f80, 0xff80,          // +inf, -inf
      0x7fc0, 0xffc1, 0x7f81,  // NaNs (quiet, negative with payload, signalling)
      0x0001, 0x8001, 0x007f,  // subnormals
      0x0080,                  // smallest normal
      0x3f80, 0x3f81, 0xbf80,  // 1, 1 + ulp, -1
      0x3b80, 0x3b00,          // 2^-8 and 2^-9: 1 + these is a rounding tie in bf16
      0x7f7f, 0xff7f,          // largest finite
      0x4040, 0x3c00,
  };
  std::vector<std::pair<std::uint16_t, std::uint16_t>> out;
  for (std::uint16_t a : values)
    for (std::uint16_t b : values) out.emplace_back(a, b);
  return out;
}

/** fp32 add, rounded to bf16; a NaN sum is the canonical quiet NaN (0x7fc0), as the executors define it. */
std::uint16_t reference_add(std::uint16_t a, std::uint16_t b) {
  const float sum = nki::bf16_bits_to_float(a) + nki::bf16_bits_to_float(b);
  return std::isnan(sum) ? std::uint16_t{0x7fc0} : nki::float_to_bf16_bits(sum);
}

}  // namespace

TEST_CASE("tensor_add on bf16 matches the host bit for bit, specials included, on both executors") {
  const std::int64_t P = 256, F = 1024;
  nki::Tensor a({P, F}, nl::bfloat16), b({P, F}, nl::bfloat16);
  auto pairs = special_pairs();
  std::mt19937 rng(7);
  for (std::int64_t i = 0; i < P * F; ++i) {
    if (i < static_cast<std::int64_t>(pairs.size())) {
      a.bits16()[i] = pairs[i].first;
      b.bits16()[i] = pairs[i].second;
    } else {
      a.bits16()[i] = static_cast<std::uint16_t>(rng());  // random bit patterns: every class of value
      b.bits16()[i] = static_cast<std::uint16_t>(rng());
    }
  }
  CHECK(reference_add(0xffc1, 0x3f80) == 0x7fc0);  // NaN payload and sign are not propagated
  CHECK(reference_add(0x7f80, 0xff80) == 0x7fc0);  // inf - inf
  CHECK(reference_add(0x8000, 0x8000) == 0x8000);  // -0 + -0
  CHECK(reference_add(0x0000, 0x8000) == 0x0000);  // +0 + -0
  CHECK(reference_add(0x0001, 0x0001) == 0x0002);  // subnormals add exactly
  // Ties: 1 + 2^-8 lies exactly between two bf16 values.
  CHECK(reference_add(0x3f80, 0x3b80) == 0x3f80);
  CHECK(reference_add(0x3f81, 0x3b80) == 0x3f82);

  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    nki::LaunchResult r =
        nki::kernels::tensor_add()[nl::spmd_dim(P / 256, nl::nc(2)), F / 512].with({ex, nullptr}).run({a, b});
    nki::Tensor c = r.outputs.at(0);
    for (std::int64_t i = 0; i < P * F; ++i) {
      const std::uint16_t want = reference_add(a.bits16()[i], b.bits16()[i]);
      if (c.bits16()[i] != want) {
        FAIL(fmt::format("element {}: {:#06x} + {:#06x}: expected {:#06x}, got {:#06x}", i, a.bits16()[i],
                         b.bits16()[i], want, c.bits16()[i]));
      }
    }
  }
}
