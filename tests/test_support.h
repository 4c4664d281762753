/** \file Helpers shared by tests: random data, running both executors, exact error capture. */
#pragma once

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "nki/nki.h"

namespace test {

inline std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float lo = -8.0f, float hi = 8.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

/** The what() of the nki::UserError `f` throws; fails the test when it throws nothing or something else. */
inline std::string user_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const nki::UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("expected nki::UserError, got: " << e.what());
  }
  FAIL("expected nki::UserError, nothing was thrown");
  return {};
}

/** Raw bits of a tensor's storage (any dtype), for bit-exact comparison. */
inline std::vector<std::uint8_t> bytes_of(const nki::Tensor& t) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(t.data());
  return {p, p + t.bytes()};
}

/** Index of the first differing element (by bytes of one element), or -1. */
inline std::int64_t first_difference(const nki::Tensor& a, const nki::Tensor& b) {
  const int eb = nki::dtype_bytes(a.dtype());
  const auto x = bytes_of(a), y = bytes_of(b);
  for (std::int64_t i = 0; i < a.elements(); ++i)
    if (std::memcmp(x.data() + i * eb, y.data() + i * eb, static_cast<std::size_t>(eb)) != 0) return i;
  return -1;
}

}  // namespace test
