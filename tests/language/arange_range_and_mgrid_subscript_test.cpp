/**
 * \file Two index forms of NKI: nl.arange(start, stop) (start, ..., stop - 1), and a whole mgrid
 * pair as one subscript (t[i] with i = nl.mgrid[0:P, 0:F] is t[i.p, i.x]).
 */
#include "lang_support.h"

namespace nl = nki::language;
using nki::DType;

TEST_CASE("nl::arange(start, stop) selects columns start..stop-1; t[mgrid(P, F)] is t[g.p, g.x]") {
  const nki::Kernel k = nki::jit("index_forms", [](nl::tensor a) {
    const std::int64_t P = a.shape()[0];
    auto cols = nl::ndarray({P, 4}, a.dtype(), nl::shared_hbm, "cols");
    auto whole = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "whole");
    auto ip = nl::arange(P)[nl::_, nl::newaxis];
    auto jf = nl::arange(3, 7)[nl::newaxis, nl::_];  // (1, 4): 3, 4, 5, 6
    CHECK(jf.shape() == nki::Shape{1, 4});
    nl::store(cols[ip, nl::arange(0, 4)[nl::newaxis, nl::_]], nl::load(a[ip, jf]));
    auto g = nl::mgrid(P, a.shape()[1]);
    nl::store(whole[g], nl::load(a[g]) * 2);
    return std::make_tuple(cols, whole);
  });
  for (nki::Shape s : {nki::Shape{128, 9}, nki::Shape{3, 7}}) {
    CAPTURE(nki::shape_str(s));
    const std::int64_t P = s[0], F = s[1];
    auto a = lt::make(s, DType::fp32, test::random_floats(static_cast<std::size_t>(P * F), 97));
    const auto av = a.to_floats();
    std::vector<double> w_cols(static_cast<std::size_t>(P * 4)), w_whole(av.size());
    for (std::int64_t p = 0; p < P; ++p) {
      for (std::int64_t c = 0; c < 4; ++c) w_cols[static_cast<std::size_t>(p * 4 + c)] = av[static_cast<std::size_t>(p * F + 3 + c)];
      for (std::int64_t f = 0; f < F; ++f)
        w_whole[static_cast<std::size_t>(p * F + f)] = lt::fmul(av[static_cast<std::size_t>(p * F + f)], 2.0f);
    }
    lt::check_both(k, lt::no_grid(), {a}, {w_cols, w_whole}, "index_forms");
  }
}
