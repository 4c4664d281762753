/** \file `+=` into an SBUF window: read, fp32 add, write back in the array's dtype, in loops and in 3-D arrays. */
#include "lang_support.h"

namespace nl = nki::language;
using nki::DType;

TEST_CASE("sbuf += - a sum over an affine_range, rounded to the array's dtype at every step") {
  // acc [P, F] of `dt` starts at 1; acc += x[k] for k in 0..K-1 (x is [K * P, F]); out = acc.
  const nki::Kernel k = nki::jit("sbuf_accumulate", [](nl::tensor x, nl::tensor like) {
    const std::int64_t p = like.shape()[0], f = like.shape()[1], steps = x.shape()[0] / p;
    auto out = nl::ndarray({p, f}, like.dtype(), nl::shared_hbm, "out");
    auto acc = nl::ones({p, f}, like.dtype(), nl::sbuf, "acc");
    for (auto i : nl::affine_range(steps)) acc[nl::_, nl::_] += nl::load(x[nl::ds(i * p, p), nl::_]);
    nl::store(out.all(), acc);
    return out;
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    CAPTURE(nki::dtype_name(dt));
    const std::int64_t p = 32, f = 24, steps = 5;
    auto x = lt::make({steps * p, f}, DType::fp32, test::random_floats(static_cast<std::size_t>(steps * p * f), 51, -3.0f, 3.0f));
    auto like = lt::make({p, f}, dt, std::vector<float>(static_cast<std::size_t>(p * f), 0.0f));
    const auto xv = x.to_floats();
    std::vector<double> want(static_cast<std::size_t>(p * f));
    for (std::size_t e = 0; e < want.size(); ++e) {
      float acc = 1.0f;
      for (std::int64_t s = 0; s < steps; ++s) acc = lt::rd(lt::fadd(acc, xv[static_cast<std::size_t>(s * p * f) + e]), dt);
      want[e] = acc;
    }
    lt::check_both(k, lt::no_grid(), {x, like}, want, "sbuf +=");
  }
}

TEST_CASE("sbuf += - a window of a 3-D array with par_dim in the middle, and a broadcast column") {
  // acc [T, par_dim(P), F] = 0; acc[t] += x[t] for each tile t; acc[t][:, 0:8] += col; out[t] = acc[t].
  const nki::Kernel k = nki::jit("sbuf_accumulate_3d", [](nl::tensor x, nl::tensor col) {
    const std::int64_t tiles = x.shape()[0], p = x.shape()[1], f = x.shape()[2];
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    auto acc = nl::zeros({tiles, nl::par_dim(p), f}, x.dtype(), nl::sbuf, "acc");
    auto c = nl::load(col.all());  // (P, 1)
    for (auto t : nl::affine_range(tiles)) {
      acc[t, nl::_, nl::_] += nl::load(x[t, nl::_, nl::_]);
      acc[t, nl::_, nl::ds(0, 8)] += c;
    }
    for (auto t : nl::affine_range(tiles)) nl::store(out[t, nl::_, nl::_], acc[t, nl::_, nl::_]);
    return out;
  });
  const std::int64_t tiles = 3, p = 128, f = 20;
  auto x = lt::make({tiles, p, f}, DType::fp32, test::random_floats(static_cast<std::size_t>(tiles * p * f), 52));
  auto col = lt::make({p, 1}, DType::fp32, test::random_floats(static_cast<std::size_t>(p), 53));
  const auto xv = x.to_floats(), cv = col.to_floats();
  std::vector<double> want(xv.size());
  for (std::size_t e = 0; e < want.size(); ++e) {
    const std::size_t j = e % static_cast<std::size_t>(f), i = e / static_cast<std::size_t>(f) % static_cast<std::size_t>(p);
    want[e] = j < 8 ? lt::fadd(lt::fadd(0.0f, xv[e]), cv[i]) : lt::fadd(0.0f, xv[e]);
  }
  lt::check_both(k, lt::no_grid(), {x, col}, want, "sbuf += 3-D");
}

TEST_CASE("sbuf += - randomized shapes, step counts and dtypes") {
  std::mt19937 rng(54);
  const DType dtypes[] = {DType::fp32, DType::bf16, DType::fp16};
  for (int round = 0; round < 5; ++round) {
    const std::int64_t p = 1 + static_cast<std::int64_t>(rng() % 128), f = 1 + static_cast<std::int64_t>(rng() % 100);
    const std::int64_t steps = 1 + static_cast<std::int64_t>(rng() % 6);
    const DType dt = dtypes[rng() % 3];
    CAPTURE(round);
    CAPTURE(p);
    CAPTURE(f);
    CAPTURE(steps);
    CAPTURE(nki::dtype_name(dt));
    const nki::Kernel k = nki::jit("sbuf_accumulate_random", [=](nl::tensor x) {
      auto out = nl::ndarray({p, f}, dt, nl::shared_hbm, "out");
      auto acc = nl::zeros({p, f}, dt, nl::sbuf, "acc");
      for (auto i : nl::sequential_range(steps)) acc.all() += nl::load(x[i, nl::_, nl::_]);
      nl::store(out.all(), acc);
      return out;
    });
    auto x = lt::make({steps, p, f}, DType::fp32,
                      test::random_floats(static_cast<std::size_t>(steps * p * f), 1000 + static_cast<std::uint32_t>(round)));
    const auto xv = x.to_floats();
    std::vector<double> want(static_cast<std::size_t>(p * f));
    for (std::size_t e = 0; e < want.size(); ++e) {
      float acc = 0.0f;
      for (std::int64_t s = 0; s < steps; ++s) acc = lt::rd(lt::fadd(acc, xv[static_cast<std::size_t>(s * p * f) + e]), dt);
      want[e] = acc;
    }
    lt::check_both(k, lt::no_grid(), {x}, want, "random sbuf +=");
  }
}
