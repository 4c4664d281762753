/** \file Multi-dimensional on-chip arrays with nl::par_dim: window writes and reads indexed by loop variables. */
#include "lang_support.h"

namespace nl = nki::language;
using lt::rd;
using nki::DType;

TEST_CASE("an SBUF array {n, par_dim(128), F} holds one tile per loop iteration, read back reversed") {
  // Loop 1 writes buf[i] = a_tile(i) * 2; loop 2 stores out tile j = buf[n - 1 - j] + 1.
  const nki::Kernel k = nki::jit("par_dim_reverse", [](nl::tensor a) {
    const std::int64_t n = a.shape()[0] / 128, f = a.shape()[1];
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto buf = nl::ndarray({n, nl::par_dim(128), f}, a.dtype(), nl::sbuf, "buf");
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(f)[nl::newaxis, nl::_];
    for (auto i : nl::affine_range(n)) buf[i, nl::_, nl::_] = nl::load(a[i * 128 + ip, jf]) * 2;
    for (auto j : nl::affine_range(n)) nl::store(out[j * 128 + ip, jf], buf[(n - 1) - j, nl::_, nl::_] + 1);
    return out;
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    for (std::int64_t n : {1, 3}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(n);
      const std::int64_t f = 20;
      auto a = lt::make({n * 128, f}, dt, test::random_floats(static_cast<std::size_t>(n * 128 * f), 31));
      const auto av = a.to_floats();
      std::vector<double> want(av.size());
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t e = 0; e < 128 * f; ++e)
          want[static_cast<std::size_t>(j * 128 * f + e)] =
              rd(rd(av[static_cast<std::size_t>((n - 1 - j) * 128 * f + e)] * 2.0f, dt) + 1.0f, dt);
      lt::check_both(k, lt::no_grid(), {a}, want, "par_dim_reverse");
    }
  }
}

TEST_CASE("par_dim in the middle: {F2, par_dim(P), F} indexed with index arrays and with slices") {
  // buf[c, p, f] = a[p, c * F + f] (a is [P, C * F]); then out[p, f] = sum over c of buf[c, p, f] in order c = 0, 1, ...
  const nki::Kernel k = nki::jit("par_dim_middle", [](nl::tensor a) {
    const std::int64_t p = a.shape()[0], c = 4, f = a.shape()[1] / 4;
    auto out = nl::ndarray({p, f}, nl::float32, nl::shared_hbm, "out");
    auto buf = nl::ndarray({c, nl::par_dim(p), f}, nl::float32, nl::sbuf, "buf");
    auto g = nl::mgrid(p, f);
    for (auto i : nl::affine_range(c)) buf[i, g.p, g.x] = nl::load(a[g.p, i * f + g.x], {.dtype = nl::float32});
    auto acc = nl::zeros({nl::par_dim(p), f}, nl::float32, nl::sbuf, "acc");
    for (auto i : nl::sequential_range(c)) acc[nl::_, nl::_] = acc[nl::_, nl::_] + buf[i, nl::_, nl::_];
    nl::store(out.all(), acc.all());
    return out;
  });
  for (DType dt : {DType::fp32, DType::fp16}) {
    for (std::int64_t p : {128, 48}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(p);
      const std::int64_t f = 16;
      auto a = lt::make({p, 4 * f}, dt, test::random_floats(static_cast<std::size_t>(p * 4 * f), 32));
      const auto av = a.to_floats();
      std::vector<double> want(static_cast<std::size_t>(p * f));
      for (std::int64_t r = 0; r < p; ++r) {
        for (std::int64_t x = 0; x < f; ++x) {
          float acc = 0.0f;
          for (std::int64_t i = 0; i < 4; ++i) acc = lt::fadd(acc, av[static_cast<std::size_t>(r * 4 * f + i * f + x)]);
          want[static_cast<std::size_t>(r * f + x)] = acc;
        }
      }
      lt::check_both(k, lt::no_grid(), {a}, want, "par_dim_middle");
    }
  }
}

TEST_CASE("a 3-D SBUF tile {par_dim(128), A, B} loaded, computed on and stored whole") {
  const nki::Kernel k = nki::jit("tile_3d", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto buf = nl::ndarray({nl::par_dim(a.shape()[0]), a.shape()[1], a.shape()[2]}, a.dtype(), nl::sbuf, "buf");
    buf[nl::_, nl::_, nl::_] = nl::load(a[nl::_, nl::_, nl::_]);
    auto y = nl::exp(buf[nl::_, nl::_, nl::_]) - buf.all();
    nl::store(out[nl::_, nl::_, nl::_], y);
    return out;
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    CAPTURE(nki::dtype_name(dt));
    const nki::Shape s{128, 3, 10};
    auto a = lt::make(s, dt, test::random_floats(128 * 30, 33, -3.0f, 3.0f));
    const auto av = a.to_floats();
    std::vector<double> want(av.size());
    for (std::size_t x = 0; x < av.size(); ++x) want[x] = rd(rd(std::exp(av[x]), dt) - av[x], dt);
    lt::check_both(k, lt::no_grid(), {a}, want, "tile_3d");
  }
}

TEST_CASE("par_dim in the shape of a shared_hbm ndarray is accepted and changes nothing (HBM has no partitions)") {
  const nki::Kernel k = nki::jit("par_dim_in_hbm", [](nl::tensor a) {
    auto out = nl::ndarray({2, nl::par_dim(128), a.shape()[1]}, a.dtype(), nl::shared_hbm, "out");
    nl::store(out[0, nl::_, nl::_], nl::load(a.all()));
    nl::store(out[1, nl::_, nl::_], nl::load(a.all()) * 2);
    return out;
  });
  const std::int64_t f = 16;
  auto a = lt::make({128, f}, DType::fp32, test::random_floats(static_cast<std::size_t>(128 * f), 33));
  const auto av = a.to_floats();
  std::vector<double> want(av.begin(), av.end());
  for (float x : av) want.push_back(lt::fmul(x, 2.0f));
  const std::vector<nki::Tensor> out = lt::check_both(k, lt::no_grid(), {a}, want, "par_dim_in_hbm");
  CHECK(out.at(0).shape() == nki::Shape{2, 128, f});
}
