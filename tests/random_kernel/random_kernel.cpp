/** \file Building a recipe's kernel and running it on both executors. */
#include "random_kernel.h"

#include <fmt/format.h>

#include <cstring>
#include <random>

#include "nki/nki.h"

namespace random_kernel {

namespace nl = nki::language;

namespace {

nki::DType dtype_of(Dt d) {
  switch (d) {
    case Dt::fp32: return nki::DType::fp32;
    case Dt::bf16: return nki::DType::bf16;
    case Dt::fp16: return nki::DType::fp16;
  }
  return nki::DType::fp32;
}

nki::Kernel make_kernel(const Recipe& r) {
  return nki::jit("random_kernel", [r](nl::tensor a, nl::tensor b) {
    auto o0 = nl::ndarray(a.shape(), dtype_of(r.out_dt[0]), nl::shared_hbm);
    auto o1 = nl::ndarray(a.shape(), dtype_of(r.out_dt[1]), nl::shared_hbm);
    auto ix = nl::program_id(0) * r.P + nl::arange(r.P)[nl::_, nl::newaxis];
    auto iy = nl::program_id(1) * r.F + nl::arange(r.F)[nl::newaxis, nl::_];
    std::vector<nl::tile> t{nl::load(a[ix, iy]), nl::load(b[ix, iy])};
    if (r.column_broadcast) t.push_back(nl::load(b[ix, nl::program_id(1) * r.F]));
    using Op = nl::binary_fn;
    const Op ops[] = {nl::add, nl::subtract, nl::multiply, nl::divide, nl::maximum, nl::minimum};
    for (const Step& s : r.steps) {
      const nl::tile lhs = t[static_cast<std::size_t>(s.lhs)];
      t.push_back(s.rhs < 0 ? ops[s.op](lhs, s.scalar) : ops[s.op](lhs, t[static_cast<std::size_t>(s.rhs)]));
    }
    // A (P, 1) column may end up last; widen it to the access shape before storing.
    auto full = t.back().shape()[1] == r.F ? t.back() : t.back() + t[0] * 0.0f;
    nl::store(o0[ix, iy], full);
    // Every returned tensor is written (err_tensor_output_not_written_to otherwise).
    nl::store(o1[ix, iy], r.two_outputs && t[t.size() - 2].shape()[1] == r.F ? t[t.size() - 2] : full);
    return std::make_tuple(o0, o1);
  });
}

std::vector<float> values(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-3.0f, 3.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

}  // namespace

Recipe from_seed(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> bytes(64);
  for (std::uint8_t& x : bytes) x = static_cast<std::uint8_t>(rng());
  return from_bytes(bytes.data(), bytes.size());
}

std::string compare_executors(const Recipe& r) {
  const nki::Shape shape{r.P * r.gx * 2, r.F * r.gy};
  const auto n = static_cast<std::size_t>(shape[0] * shape[1]);
  const std::vector<float> av = values(n, r.data_seed);
  std::vector<float> bv = values(n, r.data_seed ^ 0x9e3779b9u);
  for (std::size_t x = 0; x < n; x += 37) bv[x] = 0.0f;  // divisions by zero: inf and NaN paths
  const nki::Tensor a = nki::Tensor::from_floats(shape, dtype_of(r.in_dt[0]), av);
  const nki::Tensor b = nki::Tensor::from_floats(shape, dtype_of(r.in_dt[1]), bv);
  const nki::Kernel k = make_kernel(r);
  const nki::GridSpec grid{{nl::spmd_dim(r.gx, nl::nc(2)), r.gy}};
  std::vector<nki::LaunchResult> results;
  std::vector<std::string> refusals;
  for (nki::Executor e : {nki::Executor::halide, nki::Executor::reference}) {
    try {
      results.push_back(k.launch(grid).with({e, nullptr}).run({a, b}));
      refusals.emplace_back();
    } catch (const nki::UserError& err) {
      refusals.emplace_back(err.what());
    }
  }
  if (!refusals[0].empty() || !refusals[1].empty()) {
    if (refusals[0] == refusals[1]) return {};
    return fmt::format("halide: {}\nreference: {}", refusals[0].empty() ? "ran" : refusals[0],
                       refusals[1].empty() ? "ran" : refusals[1]);
  }
  const nki::LaunchResult &h = results[0], &ref = results[1];
  for (std::size_t o = 0; o < 2; ++o) {
    const int eb = nki::dtype_bytes(h.outputs[o].dtype());
    for (std::int64_t i = 0; i < h.outputs[o].elements(); ++i) {
      if (std::memcmp(h.outputs[o].data() + i * eb, ref.outputs[o].data() + i * eb, static_cast<std::size_t>(eb)) == 0)
        continue;
      return fmt::format("output {} element {}: halide {} vs reference {}\n{}", o, i,
                         h.outputs[o].to_floats()[static_cast<std::size_t>(i)],
                         ref.outputs[o].to_floats()[static_cast<std::size_t>(i)], h.ir_text);
    }
  }
  return {};
}

}  // namespace random_kernel
