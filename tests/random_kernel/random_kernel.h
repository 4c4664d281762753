/**
 * \file Random elementwise kernels for differential testing: a recipe (tile, grid, dtypes,
 * a chain of binary ops over loaded tiles and scalars) and the check that both executors
 * give the same bytes for it. Only standard headers here, so the libFuzzer target
 * (tests/fuzz/random_kernel_fuzz.cpp, built with clang) can decode its bytes inline, where
 * the fuzzer sees the branches, and call the check built with the project's compiler.
 */
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace random_kernel {

enum class Dt : std::uint8_t { fp32, bf16, fp16 };

struct Step {
  int op;        ///< 0..5: add subtract multiply divide maximum minimum
  int lhs, rhs;  ///< tile indices; rhs -1: the scalar
  float scalar;
};

struct Recipe {
  std::int64_t P, F;    ///< the tile
  std::int64_t gx, gy;  ///< the grid: [spmd_dim(gx, nc(2)), gy]
  std::array<Dt, 2> in_dt, out_dt;
  std::vector<Step> steps;
  bool column_broadcast;  ///< one more tile: a (P, 1) column of input 1
  bool two_outputs;
  std::uint32_t data_seed;  ///< the inputs' values
};

/** Reads bytes in order; past the end every byte is 0, so any byte string is a recipe. */
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t next() { return at_ < size_ ? data_[at_++] : 0; }
  int pick(int n) { return next() % n; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

/** The recipe these bytes spell. */
inline Recipe from_bytes(const std::uint8_t* data, std::size_t size) {
  Bytes b(data, size);
  constexpr std::int64_t Ps[] = {1, 32, 128, 7, 64}, Fs[] = {1, 7, 16, 64, 96};
  Recipe r{};
  r.P = Ps[b.pick(5)];
  r.F = Fs[b.pick(5)];
  r.gx = 1 + b.pick(3);
  r.gy = 1 + b.pick(3);
  for (Dt& d : r.in_dt) d = static_cast<Dt>(b.pick(3));
  for (Dt& d : r.out_dt) d = static_cast<Dt>(b.pick(3));
  r.column_broadcast = b.pick(2) == 1;
  r.two_outputs = b.pick(2) == 1;
  int tiles = r.column_broadcast ? 3 : 2;  // the loads come first
  const int n = 1 + b.pick(8);
  for (int s = 0; s < n; ++s) {
    Step st{b.pick(6), b.pick(tiles), 0, static_cast<float>(b.pick(9)) - 4.0f};
    st.rhs = b.pick(4) == 0 ? -1 : b.pick(tiles);
    if (st.lhs == 2 && st.rhs == 2) st.rhs = 0;  // keep at least one full-width operand
    r.steps.push_back(st);
    ++tiles;
  }
  for (int i = 0; i < 4; ++i) r.data_seed = r.data_seed << 8 | b.next();
  return r;
}

/** The recipe a seed gives (the doctest's cases). */
Recipe from_seed(std::uint32_t seed);

/**
 * Runs the recipe's kernel on the halide executor and the reference interpreter with the same
 * inputs (some divisors zero, for the inf and NaN paths). "" when every output is byte for byte
 * the same, or both refuse with the same error; otherwise what differs, with the IR.
 */
std::string compare_executors(const Recipe& r);

}  // namespace random_kernel
