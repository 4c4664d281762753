/** \file Helpers of the tile-language tests: run both executors, compare bytes with a host computation. */
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "test_support.h"

namespace lt {

namespace nl = nki::language;
using nki::DType;

inline constexpr nki::Executor executors[] = {nki::Executor::halide, nki::Executor::reference};

/** The canonical quiet NaN every NaN result is. */
inline float qnan() { return std::numeric_limits<float>::quiet_NaN(); }

/** fp32 result `x` rounded to `dt` (round to nearest even) and read back as float. */
inline float rd(double x, DType dt) { return static_cast<float>(nki::round_to_dtype(x, dt)); }

/** The values a tensor holds, exactly (every dtype fits a double). */
inline std::vector<double> values_of(const nki::Tensor& t) {
  std::vector<double> out(static_cast<std::size_t>(t.elements()));
  const int eb = nki::dtype_bytes(t.dtype());
  const auto* p = reinterpret_cast<const std::uint8_t*>(t.data());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = nki::load_element(p + i * eb, t.dtype());
  return out;
}

/** Input values (converted to `dt` on the way in) as floats, the way a kernel sees them. */
inline nki::Tensor make(const nki::Shape& s, DType dt, const std::vector<float>& v) {
  return nki::Tensor::from_floats(s, dt, v);
}
/**
 * The error that kernel `name` raises when `body(a, out)` is traced in it: `a` an [8, 16] fp32
 * argument, `out` a zeroed [8, 16] fp32 shared_hbm output (the scatter and atomic misuse tests).
 */
template <class Body>
std::string misuse_error_8x16(const char* name, Body body) {
  const nki::Kernel k = nki::jit(name, [&](nl::tensor a) {
    auto out = nl::zeros({8, 16}, nl::float32, nl::shared_hbm, "out");
    body(a, out);
    return out;
  });
  return test::user_error_of([&] { k(make({8, 16}, DType::fp32, test::random_floats(128, 5))); });
}

inline std::vector<float> floats_of(const nki::Tensor& t) { return t.to_floats(); }

/** Small integers in [lo, hi] as floats (exact in every dtype that holds the range). */
inline std::vector<float> random_ints(std::size_t n, std::uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(d(rng));
  return v;
}

/**
 * `got` holds exactly `want` (values before rounding to got's dtype; compared as the bytes
 * of the rounded values; NaNs are the canonical quiet NaN). Fails with the first mismatch.
 */
inline void check_exact(const nki::Tensor& got, const std::vector<double>& want, const std::string& what) {
  REQUIRE_MESSAGE(static_cast<std::size_t>(got.elements()) == want.size(),
                  what << ": " << got.elements() << " elements, expected " << want.size());
  const DType dt = got.dtype();
  const int eb = nki::dtype_bytes(dt);
  const auto* p = reinterpret_cast<const std::uint8_t*>(got.data());
  std::int64_t bad = 0, first = -1;
  for (std::size_t i = 0; i < want.size(); ++i) {
    std::uint8_t w[8] = {};
    nki::store_element(w, dt, want[i]);
    if (std::memcmp(w, p + i * eb, static_cast<std::size_t>(eb)) != 0) {
      if (first < 0) first = static_cast<std::int64_t>(i);
      ++bad;
    }
  }
  if (first >= 0) {
    const auto i = static_cast<std::size_t>(first);
    FAIL_CHECK(fmt::format("{} ({}): {} of {} elements differ; first at flat index {} (shape {}): got {} expected {}",
                     what, nki::dtype_name(dt), bad, want.size(), first, nki::shape_str(got.shape()),
                     nki::load_element(p + i * eb, dt), nki::round_to_dtype(want[i], dt)));
  }
}

/** Runs the launch on one executor. */
inline nki::LaunchResult run_on(const nki::Kernel& k, const nki::GridSpec& grid, nki::Executor ex,
                                const std::vector<nki::Tensor>& args) {
  return k.launch(grid).with({ex, nullptr}).run(args);
}

/**
 * Runs the kernel on both executors: each output must equal the host's `want` exactly,
 * and the two executors must produce the same bytes.
 */
inline std::vector<nki::Tensor> check_both(const nki::Kernel& k, const nki::GridSpec& grid,
                                           const std::vector<nki::Tensor>& args,
                                           const std::vector<std::vector<double>>& want, const std::string& what) {
  nki::LaunchResult h = run_on(k, grid, nki::Executor::halide, args);
  nki::LaunchResult r = run_on(k, grid, nki::Executor::reference, args);
  REQUIRE(h.outputs.size() == want.size());
  REQUIRE(r.outputs.size() == want.size());
  for (std::size_t o = 0; o < want.size(); ++o) {
    const std::string w = fmt::format("{} output {}", what, o);
    REQUIRE(h.outputs[o].dtype() == r.outputs[o].dtype());
    check_exact(r.outputs[o], want[o], w + " [reference]");
    check_exact(h.outputs[o], want[o], w + " [halide]");
    const std::int64_t d = test::first_difference(h.outputs[o], r.outputs[o]);
    if (d >= 0) {
      FAIL_CHECK(fmt::format("{}: executors differ at element {}: halide {} reference {}", w, d,
                       values_of(h.outputs[o])[static_cast<std::size_t>(d)],
                       values_of(r.outputs[o])[static_cast<std::size_t>(d)]));
    }
  }
  return r.outputs;
}

inline std::vector<nki::Tensor> check_both(const nki::Kernel& k, const nki::GridSpec& grid,
                                           const std::vector<nki::Tensor>& args, const std::vector<double>& want,
                                           const std::string& what) {
  return check_both(k, grid, args, std::vector<std::vector<double>>{want}, what);
}

inline nki::GridSpec no_grid() { return nki::GridSpec{}; }
inline nki::GridSpec grid1(std::int64_t n) { return nki::GridSpec{{nki::GridAxis(n)}}; }

/** Host: x rounded into dtype `dt` widened back (what a tile of that dtype holds). */
inline std::vector<float> as_dtype(const std::vector<float>& v, DType dt) {
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = rd(v[i], dt);
  return out;
}

/** fp32 add/mul that the host compiler cannot contract into an FMA (the executors do not). */
inline float fadd(float a, float b) {
  volatile float r = a + b;
  return r;
}
inline float fmul(float a, float b) {
  volatile float r = a * b;
  return r;
}

/** The ALU ops of the scan and cumulative tests. */
enum class AluOp { add, subtract, multiply, maximum, minimum };

/** The host's fp32 result of an AluOp (no contraction; the tests' inputs give no NaN). */
inline float host_alu(AluOp op, float a, float b) {
  switch (op) {
    case AluOp::add: return fadd(a, b);
    case AluOp::subtract: {
      volatile float r = a - b;
      return r;
    }
    case AluOp::multiply: return fmul(a, b);
    case AluOp::maximum: return a >= b ? a : b;
    case AluOp::minimum: return a <= b ? a : b;
  }
  return 0.0f;
}

inline float canon(float x) { return std::isnan(x) ? qnan() : x; }

/**
 * Each unary function of `ops`, applied to a [128, 24] tile of `values` (converted to the
 * dtype on the way in) in fp32, bf16 and fp16, must give host(name, x) on both executors.
 */
template <class Host>
void check_unary_ops(const std::string& prefix, std::initializer_list<std::pair<const char*, nl::unary_fn>> ops,
                     const std::vector<float>& values, Host host) {
  for (auto [name_c, op] : ops) {
    const std::string name = name_c;
    CAPTURE(name);
    const nki::Kernel k = nki::jit(prefix + "_" + name, [op](nl::tensor a) {
      auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
      nl::store(out.all(), op(nl::load(a.all())));
      return out;
    });
    for (DType dt : {DType::fp32, DType::bf16, DType::fp16}) {
      CAPTURE(nki::dtype_name(dt));
      auto a = make({128, 24}, dt, values);
      const auto av = a.to_floats();
      std::vector<double> want(av.size());
      for (std::size_t x = 0; x < av.size(); ++x) want[x] = host(name, av[x]);
      check_both(k, no_grid(), {a}, want, prefix + " " + name);
    }
  }
}

}  // namespace lt
