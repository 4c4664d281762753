/** \file matmul / nc_matmul into PSUM (fp32 fma, k ascending from 0.0f), PSUM += accumulation, a tiled matmul. */
#include "lang_support.h"

namespace nl = nki::language;
using lt::rd;
using nki::DType;

namespace {

/** result[m, n] = sum over k ascending of st[k * M + m] * mv[k * N + n], one fp32 fma per product, from 0.0f. */
std::vector<float> host_matmul(const std::vector<float>& st, const std::vector<float>& mv, std::int64_t k_, std::int64_t m_,
                               std::int64_t n_) {
  std::vector<float> out(static_cast<std::size_t>(m_ * n_));
  for (std::int64_t m = 0; m < m_; ++m)
    for (std::int64_t n = 0; n < n_; ++n) {
      float acc = 0.0f;
      for (std::int64_t k = 0; k < k_; ++k)
        acc = std::fma(st[static_cast<std::size_t>(k * m_ + m)], mv[static_cast<std::size_t>(k * n_ + n)], acc);
      out[static_cast<std::size_t>(m * n_ + n)] = acc;
    }
  return out;
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

}  // namespace

TEST_CASE("isa::nc_matmul computes stationary^T @ moving with fp32 fma, k ascending") {
  // st [K, M], mv [K, N] -> psum [M, N] fp32 -> nl::copy -> stored fp32
  const nki::Kernel k = nki::jit("nc_matmul", [](nl::tensor st, nl::tensor mv) {
    auto out = nl::ndarray({st.shape()[1], mv.shape()[1]}, nl::float32, nl::shared_hbm, "out");
    auto r = nki::isa::nc_matmul(nl::load(st.all()), nl::load(mv.all()));
    CHECK(r.dtype() == DType::fp32);
    nl::store(out.all(), nl::copy(r));
    return out;
  });
  struct Case {
    std::int64_t k, m, n;
  };
  for (DType dt : {DType::fp32, DType::bf16, DType::fp8_e4m3}) {
    for (Case c : {Case{128, 128, 512}, Case{32, 64, 96}, Case{5, 3, 7}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(c.k);
      CAPTURE(c.m);
      CAPTURE(c.n);
      auto st = lt::make({c.k, c.m}, dt, test::random_floats(static_cast<std::size_t>(c.k * c.m), 61, -2.0f, 2.0f));
      auto mv = lt::make({c.k, c.n}, dt, test::random_floats(static_cast<std::size_t>(c.k * c.n), 62, -2.0f, 2.0f));
      lt::check_both(k, lt::no_grid(), {st, mv}, to_double(host_matmul(st.to_floats(), mv.to_floats(), c.k, c.m, c.n)),
                     "nc_matmul");
    }
  }
}

namespace {
void nl_matmul_case(std::initializer_list<DType> dtypes) {
  // o1 = matmul(xT, y, transpose_x=true) with xT [K, M]; o2 = matmul(x, y) with x [M, K] (transposed first).
  const nki::Kernel k = nki::jit("nl_matmul", [](nl::tensor xt, nl::tensor x, nl::tensor y) {
    auto o1 = nl::ndarray({xt.shape()[1], y.shape()[1]}, nl::float32, nl::shared_hbm, "o1");
    auto o2 = nl::ndarray({x.shape()[0], y.shape()[1]}, nl::bfloat16, nl::shared_hbm, "o2");
    nl::store(o1.all(), nl::copy(nl::matmul(nl::load(xt.all()), nl::load(y.all()), true)));
    nl::store(o2.all(), nl::copy(nl::matmul(nl::load(x.all()), nl::load(y.all())), {.dtype = nl::bfloat16}));
    return std::make_tuple(o1, o2);
  });
  for (DType dt : dtypes) {
    for (auto [kk, mm, nn] : {std::array<std::int64_t, 3>{128, 128, 256}, std::array<std::int64_t, 3>{64, 17, 40}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(kk);
      CAPTURE(mm);
      CAPTURE(nn);
      auto xv = test::random_floats(static_cast<std::size_t>(kk * mm), 63, -3.0f, 3.0f);  // x^T as [K, M]
      auto xt = lt::make({kk, mm}, dt, xv);
      std::vector<float> xm(xv.size());  // the same values as [M, K]
      for (std::int64_t a = 0; a < kk; ++a)
        for (std::int64_t b = 0; b < mm; ++b) xm[static_cast<std::size_t>(b * kk + a)] = xv[static_cast<std::size_t>(a * mm + b)];
      auto x = lt::make({mm, kk}, dt, xm);
      auto y = lt::make({kk, nn}, dt, test::random_floats(static_cast<std::size_t>(kk * nn), 64, -3.0f, 3.0f));
      const auto r = host_matmul(xt.to_floats(), y.to_floats(), kk, mm, nn);
      std::vector<double> w2(r.size());
      for (std::size_t i = 0; i < r.size(); ++i) w2[i] = rd(r[i], DType::bf16);
      lt::check_both(k, lt::no_grid(), {xt, x, y}, {to_double(r), w2}, "nl_matmul");
    }
  }
}
}  // namespace

TEST_CASE("nl::matmul with and without transpose_x, fp32") { nl_matmul_case({DType::fp32}); }
TEST_CASE("nl::matmul with and without transpose_x, fp16") { nl_matmul_case({DType::fp16}); }
TEST_CASE("nl::matmul with and without transpose_x, bf16") { nl_matmul_case({DType::bf16}); }

TEST_CASE("PSUM += accumulates matmul results with fp32 adds, in loop order") {
  // psum = zeros; for kt in affine_range(K / 32): psum += nc_matmul(st[kt], mv[kt]) with 32-row K tiles.
  const nki::Kernel k = nki::jit("psum_accumulate", [](nl::tensor st, nl::tensor mv) {
    const std::int64_t kt = st.shape()[0] / 32, m = st.shape()[1], n = mv.shape()[1];
    auto out = nl::ndarray({m, n}, nl::float32, nl::shared_hbm, "out");
    auto acc = nl::zeros({m, n}, nl::float32, nl::psum, "acc");
    for (auto t : nl::affine_range(kt)) {
      auto a = nl::load(st[nl::ds(t * 32, 32), nl::_]);
      auto b = nl::load(mv[nl::ds(t * 32, 32), nl::_]);
      acc[nl::_, nl::_] += nki::isa::nc_matmul(a, b);
    }
    nl::store(out.all(), nl::copy(acc.all()));
    return out;
  });
  for (DType dt : {DType::bf16, DType::fp32}) {
    for (std::int64_t kk : {32, 128}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(kk);
      const std::int64_t m = 48, n = 80;
      auto st = lt::make({kk, m}, dt, test::random_floats(static_cast<std::size_t>(kk * m), 65));
      auto mv = lt::make({kk, n}, dt, test::random_floats(static_cast<std::size_t>(kk * n), 66));
      const auto sv = st.to_floats(), mvv = mv.to_floats();
      std::vector<double> want(static_cast<std::size_t>(m * n));
      std::vector<float> acc(want.size(), 0.0f);
      for (std::int64_t t = 0; t < kk / 32; ++t) {
        std::vector<float> sp(sv.begin() + t * 32 * m, sv.begin() + (t + 1) * 32 * m);
        std::vector<float> mp(mvv.begin() + t * 32 * n, mvv.begin() + (t + 1) * 32 * n);
        const auto part = host_matmul(sp, mp, 32, m, n);
        for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = lt::fadd(acc[i], part[i]);
      }
      for (std::size_t i = 0; i < acc.size(); ++i) want[i] = acc[i];
      lt::check_both(k, lt::no_grid(), {st, mv}, want, "psum_accumulate");
    }
  }
}

TEST_CASE("a masked nc_matmul computes only the masked rows and columns") {
  const nki::Kernel k = nki::jit("masked_matmul", [](nl::tensor st, nl::tensor mv) {
    const std::int64_t m = st.shape()[1], n = mv.shape()[1];
    auto out = nl::full({m, n}, -7.0, nl::float32, nl::shared_hbm, "out");
    auto g = nl::mgrid(m, n);
    auto on = (g.p < 20) & (g.x >= 4);
    auto r = nki::isa::nc_matmul(nl::load(st.all()), nl::load(mv.all()), {.mask = on});
    nl::store(out[g.p, g.x], nl::copy(r, {.mask = on}), {.mask = on});
    return out;
  });
  const std::int64_t kk = 16, m = 32, n = 24;
  auto st = lt::make({kk, m}, DType::bf16, test::random_floats(kk * m, 67));
  auto mv = lt::make({kk, n}, DType::bf16, test::random_floats(kk * n, 68));
  const auto r = host_matmul(st.to_floats(), mv.to_floats(), kk, m, n);
  std::vector<double> want(r.size());
  for (std::int64_t a = 0; a < m; ++a)
    for (std::int64_t b = 0; b < n; ++b)
      want[static_cast<std::size_t>(a * n + b)] = (a < 20 && b >= 4) ? r[static_cast<std::size_t>(a * n + b)] : -7.0f;
  lt::check_both(k, lt::no_grid(), {st, mv}, want, "masked_matmul");
}

namespace {

/** The NKI tutorial's tiled matmul: result = lhsT^T @ rhs, M in 128s, N in 512s, K accumulated in PSUM. */
nki::Kernel tiled_matmul() {
  return nki::jit("tiled_matmul", [](nl::tensor lhsT, nl::tensor rhs) {
    const std::int64_t kk = lhsT.shape()[0], mm = lhsT.shape()[1], nn = rhs.shape()[1];
    const std::int64_t tm = 128, tk = 128, tn = std::min<std::int64_t>(nn, 512);
    auto result = nl::ndarray({mm, nn}, lhsT.dtype(), nl::shared_hbm, "result");
    for (auto m : nl::affine_range(mm / tm)) {
      for (auto n : nl::affine_range(nn / tn)) {
        auto res_psum = nl::zeros({tm, tn}, nl::float32, nl::psum, "res_psum");
        for (auto k : nl::affine_range(kk / tk)) {
          auto lhsT_tile = nl::load(lhsT[nl::ds(k * tk, tk), nl::ds(m * tm, tm)]);
          auto rhs_tile = nl::load(rhs[nl::ds(k * tk, tk), nl::ds(n * tn, tn)]);
          res_psum.all() += nl::matmul(lhsT_tile, rhs_tile, true);
        }
        auto res_sb = nl::copy(res_psum.all(), {.dtype = result.dtype()});
        nl::store(result[nl::ds(m * tm, tm), nl::ds(n * tn, tn)], res_sb);
      }
    }
    return result;
  });
}

}  // namespace

TEST_CASE("the tutorial's tiled matmul: affine_range over K accumulating in PSUM, copied to SBUF and stored") {
  const nki::Kernel k = tiled_matmul();
  for (DType dt : {DType::bf16, DType::fp32}) {
    for (auto [kk, mm, nn] : {std::array<std::int64_t, 3>{256, 128, 512}, std::array<std::int64_t, 3>{384, 256, 128}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(kk);
      CAPTURE(mm);
      CAPTURE(nn);
      auto lhsT = lt::make({kk, mm}, dt, test::random_floats(static_cast<std::size_t>(kk * mm), 69, -1.0f, 1.0f));
      auto rhs = lt::make({kk, nn}, dt, test::random_floats(static_cast<std::size_t>(kk * nn), 70, -1.0f, 1.0f));
      const auto lv = lhsT.to_floats(), rv = rhs.to_floats();
      std::vector<double> want(static_cast<std::size_t>(mm * nn));
      for (std::int64_t m = 0; m < mm; ++m)
        for (std::int64_t n = 0; n < nn; ++n) {
          float acc = 0.0f;  // the PSUM buffer: sum of per-K-tile partial products
          for (std::int64_t t = 0; t < kk / 128; ++t) {
            float part = 0.0f;
            for (std::int64_t q = t * 128; q < (t + 1) * 128; ++q)
              part = std::fma(lv[static_cast<std::size_t>(q * mm + m)], rv[static_cast<std::size_t>(q * nn + n)], part);
            acc = lt::fadd(acc, part);
          }
          want[static_cast<std::size_t>(m * nn + n)] = rd(acc, dt);
        }
      lt::check_both(k, lt::no_grid(), {lhsT, rhs}, want, "tiled_matmul");
    }
  }
}
