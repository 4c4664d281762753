/**
 * \file The tensor-add kernel on bf16 is bit-exact against a host reference, specials included, on both
 * executors, and with streaming stores where its output is large.
 */
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

/** Operands of shape [P, F]: every special pair first, then random bit patterns (every class of value). */
std::pair<nki::Tensor, nki::Tensor> operands(std::int64_t P, std::int64_t F, unsigned seed) {
  nki::Tensor a({P, F}, nl::bfloat16), b({P, F}, nl::bfloat16);
  const auto pairs = special_pairs();
  std::mt19937 rng(seed);
  for (std::int64_t i = 0; i < P * F; ++i) {
    const bool special = i < static_cast<std::int64_t>(pairs.size());
    a.bits16()[i] = special ? pairs[static_cast<std::size_t>(i)].first : static_cast<std::uint16_t>(rng());
    b.bits16()[i] = special ? pairs[static_cast<std::size_t>(i)].second : static_cast<std::uint16_t>(rng());
  }
  return {a, b};
}

/** Fails at the first element of `c` that is not reference_add of `a` and `b`'s. */
void check_sums(nki::Tensor& a, nki::Tensor& b, nki::Tensor c) {
  for (std::int64_t i = 0; i < a.elements(); ++i) {
    const std::uint16_t want = reference_add(a.bits16()[i], b.bits16()[i]);
    if (c.bits16()[i] != want) {
      FAIL(fmt::format("element {}: {:#06x} + {:#06x}: expected {:#06x}, got {:#06x}", i, a.bits16()[i], b.bits16()[i],
                       want, c.bits16()[i]));
    }
  }
}

}  // namespace

TEST_CASE("tensor_add on bf16 matches the host bit for bit, specials included, on both executors") {
  const std::int64_t P = 256, F = 1024;
  auto [a, b] = operands(P, F, 7);
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
    check_sums(a, b, r.outputs.at(0));
  }
}

TEST_CASE("a tensor_add output of 64 MiB is written with streaming stores and matches the host bit for bit") {
  // [8192, 4096] bf16: an output as large as the lowering streams (kStreamingBytes), written by two
  // cores whose stores bypass the caches; the launch's end must still see every element.
  const std::int64_t P = 8192, F = 4096;
  auto [a, b] = operands(P, F, 11);
  const nki::LaunchResult r = nki::kernels::tensor_add()[nl::spmd_dim(P / 256, nl::nc(2)), F / 512].run({a, b});
  CHECK(test::plan_of(r).find("\"streaming\":true") != std::string::npos);
  check_sums(a, b, r.outputs.at(0));
  // An output a cache can hold keeps plain stores.
  nki::Tensor small_a({256, 1024}, nl::bfloat16), small_b({256, 1024}, nl::bfloat16);
  const nki::LaunchResult small = nki::kernels::tensor_add()[nl::spmd_dim(1, nl::nc(2)), 2].run({small_a, small_b});
  CHECK(test::plan_of(small).find("\"streaming\":false") != std::string::npos);
  CHECK(test::plan_of(small).find("\"streaming\":true") == std::string::npos);
}
