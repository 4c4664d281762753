/** \file isa::bn_stats (count, mean, variance * count of the even and the odd elements) and isa::bn_aggr (their combination). */
#include "lang_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

float fsub(float a, float b) {
  volatile float r = a - b;
  return r;
}
float fdiv(float a, float b) {
  volatile float r = a / b;
  return r;
}

/** Host bn_stats of row elements [from, from + n) of a row of width f: 6 values per row, fp32 two-pass. */
std::vector<float> host_stats(const std::vector<float>& x, std::int64_t row, std::int64_t f, std::int64_t from,
                              std::int64_t n) {
  std::vector<float> out;
  for (std::int64_t parity = 0; parity < 2; ++parity) {
    const std::int64_t count = parity == 0 ? (n + 1) / 2 : n / 2;
    if (count == 0) {
      out.insert(out.end(), {0.0f, 0.0f, 0.0f});
      continue;
    }
    const auto at = [&](std::int64_t j) { return x[static_cast<std::size_t>(row * f + from + j)]; };
    float s = 0.0f;
    for (std::int64_t j = parity; j < n; j += 2) s = lt::fadd(s, at(j));
    const float mean = fdiv(s, static_cast<float>(count));
    float m2 = 0.0f;
    for (std::int64_t j = parity; j < n; j += 2) {
      const float d = fsub(at(j), mean);
      m2 = lt::fadd(m2, lt::fmul(d, d));
    }
    out.insert(out.end(), {static_cast<float>(count), mean, m2});
  }
  return out;
}

/** Host bn_aggr of (count, mean, M2) triples: {mean, variance}. */
std::vector<float> host_aggr(const std::vector<float>& s) {
  float n = s[0], w = lt::fmul(s[0], s[1]);
  for (std::size_t i = 3; i < s.size(); i += 3) {
    n = lt::fadd(n, s[i]);
    w = lt::fadd(w, lt::fmul(s[i], s[i + 1]));
  }
  const float mean = fdiv(w, n);
  float m2 = 0.0f;
  for (std::size_t i = 0; i < s.size(); i += 3) {
    const float d = fsub(s[i + 1], mean);
    const float term = lt::fadd(s[i + 2], lt::fmul(s[i], lt::fmul(d, d)));
    m2 = i == 0 ? term : lt::fadd(m2, term);
  }
  return {mean, fdiv(m2, n)};
}

}  // namespace

TEST_CASE("isa::bn_stats - count, mean and variance * count of even and odd elements; bn_aggr of one chunk") {
  const nki::Kernel k = nki::jit("bn_stats", [](nl::tensor a) {
    const std::int64_t p = a.shape()[0];
    auto stats = nl::ndarray({p, 6}, nl::float32, nl::shared_hbm, "stats");
    auto aggr = nl::ndarray({p, 2}, nl::float32, nl::shared_hbm, "aggr");
    auto s = isa::bn_stats(nl::load(a.all()), {.dtype = nl::float32});
    nl::store(stats.all(), s);
    nl::store(aggr.all(), isa::bn_aggr(s));
    return std::make_tuple(stats, aggr);
  });
  for (const auto& [p, f] : {std::pair<std::int64_t, std::int64_t>{128, 512}, {3, 7}, {2, 1}}) {
    CAPTURE(p);
    CAPTURE(f);
    const std::vector<float> x = test::random_floats(static_cast<std::size_t>(p * f), 61, -3.0f, 5.0f);
    std::vector<double> stats, aggr;
    for (std::int64_t i = 0; i < p; ++i) {
      const std::vector<float> s = host_stats(x, i, f, 0, f);
      stats.insert(stats.end(), s.begin(), s.end());
      const std::vector<float> a = host_aggr(s);
      aggr.insert(aggr.end(), a.begin(), a.end());
    }
    lt::check_both(k, lt::no_grid(), {lt::make({p, f}, DType::fp32, x)}, {stats, aggr}, "bn_stats");
  }
}

TEST_CASE("isa::bn_aggr - the statistics of 512-element chunks written side by side, combined; bf16 input") {
  // A [P, 1200] row is three bn_stats (512, 512, 176) into one SBUF [P, 18] tile; bn_aggr reads all of it.
  const nki::Kernel k = nki::jit("bn_aggr", [](nl::tensor a) {
    const std::int64_t p = a.shape()[0], f = a.shape()[1];
    auto aggr = nl::ndarray({p, 2}, nl::bfloat16, nl::shared_hbm, "aggr");
    auto stats = nl::ndarray({p, 18}, nl::float32, nl::sbuf, "stats");
    auto x = nl::load(a.all());
    for (std::int64_t c = 0; c < 3; ++c) {
      const std::int64_t w = std::min<std::int64_t>(512, f - c * 512);
      stats[nl::_, nl::ds(c * 6, 6)] = isa::bn_stats(x[nl::_, nl::ds(c * 512, w)], {.dtype = nl::float32});
    }
    nl::store(aggr.all(), isa::bn_aggr(stats, {.dtype = nl::bfloat16}));
    return aggr;
  });
  const std::int64_t p = 64, f = 1200;
  const std::vector<float> x = lt::as_dtype(test::random_floats(static_cast<std::size_t>(p * f), 62, -2.0f, 2.0f), DType::bf16);
  std::vector<double> want;
  for (std::int64_t i = 0; i < p; ++i) {
    std::vector<float> s;
    for (std::int64_t c = 0; c < 3; ++c) {
      const std::vector<float> one = host_stats(x, i, f, c * 512, std::min<std::int64_t>(512, f - c * 512));
      s.insert(s.end(), one.begin(), one.end());
    }
    const std::vector<float> a = host_aggr(s);
    want.insert(want.end(), a.begin(), a.end());
  }
  lt::check_both(k, lt::no_grid(), {lt::make({p, f}, DType::bf16, x)}, want, "bn_aggr chunks");
}

namespace {
const char* kFile = "tests/language/isa_bn_stats_test.cpp";

template <class F>
std::string misuse(std::int64_t f, F body) {
  const nki::Kernel k = nki::jit("bn_misuse", [&](nl::tensor a) {
    auto out = nl::ndarray({4, 6}, nl::float32, nl::shared_hbm, "out");
    nl::store(out.all(), body(a));
    return out;
  });
  return test::user_error_of([&] { k(lt::make({4, f}, DType::fp32, test::random_floats(static_cast<std::size_t>(4 * f), 5))); });
}
}  // namespace

TEST_CASE("isa::bn_stats / bn_aggr - misuse names NKI's error") {
  int line = 0;
  std::string e = misuse(513, [&](nl::tensor a) {
    line = __LINE__ + 1;
    return isa::bn_stats(nl::load(a.all()));
  });
  CHECK(e == fmt::format("bn_misuse ({}:{}): err_size_of_dimension_exceed_arch_limit: isa::bn_stats: data has 513 "
                         "elements per partition; at most 512 (nl::tile_size::bn_stats_fmax): run one bn_stats per "
                         "chunk and combine them with bn_aggr",
                         kFile, line));
  e = misuse(8, [&](nl::tensor a) {
    line = __LINE__ + 1;
    return isa::bn_aggr(nl::load(a.all()));
  });
  CHECK(e == fmt::format("bn_misuse ({}:{}): err_free_dim_mismatch: isa::bn_aggr: data has 8 elements per partition; "
                         "bn_stats results are (count, mean, variance * count) triples, so it must be a multiple of 3",
                         kFile, line));
}
