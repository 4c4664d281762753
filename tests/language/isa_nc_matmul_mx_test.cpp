/** \file isa::nc_matmul_mx: dequantized products summed in fp32 against the host, both executors, and misuse. */
#include "lang_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

/** Host: value i of a packed word, from the element format's code. */
double element(std::uint32_t word, int i, DType packed) {
  if (packed == DType::fp4_e2m1fn_x4) {
    const unsigned c = (word >> (4 * i)) & 0xfu;
    static constexpr double mags[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    return (c & 8u) ? -mags[c & 7u] : mags[c & 7u];
  }
  const auto c = static_cast<std::uint8_t>(word >> (8 * i));
  return packed == DType::fp8_e5m2_x4 ? nki::fp8_e5m2_bits_to_float(c) : nki::fp8_e4m3fn_bits_to_float(c);
}

/** Random packed words without NaN codes (fp8: no exponent-all-ones in e5m2, no 0x7f in e4m3fn). */
std::vector<double> random_words(std::size_t n, DType packed, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<double> w(n);
  for (double& x : w) {
    std::uint32_t word = 0;
    for (int i = 0; i < 4; ++i) {
      std::uint32_t c = rng() & 0xffu;
      if (packed == DType::fp4_e2m1fn_x4) c &= 0xfu;
      else if (packed == DType::fp8_e5m2_x4 && (c & 0x7cu) == 0x7cu) c &= 0xf3u;
      else if (packed == DType::fp8_e4m3fn_x4 && (c & 0x7fu) == 0x7fu) c = 0x7e;
      word |= c << ((packed == DType::fp4_e2m1fn_x4 ? 4 : 8) * i);
    }
    x = word;
  }
  return w;
}

/** Random scale codes around 2^0 (120..134), as e8m0 values or uint8 codes. */
std::vector<double> random_scales(std::size_t n, DType dt, std::uint32_t seed, std::vector<int>& codes) {
  std::mt19937 rng(seed);
  std::vector<double> s(n);
  codes.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    codes[i] = 120 + static_cast<int>(rng() % 15);
    s[i] = dt == DType::uint8 ? codes[i] : std::ldexp(1.0, codes[i] - 127);
  }
  return s;
}

struct Case {
  std::int64_t K, M, N;
  DType st, mv, scale, out;
};

void run_case(const Case& c, std::uint32_t seed) {
  CAPTURE(c.K);
  CAPTURE(c.M);
  CAPTURE(c.N);
  CAPTURE(nki::dtype_name(c.st));
  CAPTURE(nki::dtype_name(c.mv));
  CAPTURE(nki::dtype_name(c.scale));
  CAPTURE(nki::dtype_name(c.out));
  const auto& dev = nki::sim::Device::default_device();
  const auto sw = random_words(static_cast<std::size_t>(c.K * c.M), c.st, seed);
  const auto mw = random_words(static_cast<std::size_t>(c.K * c.N), c.mv, seed + 1);
  std::vector<int> ssc, msc;
  const auto ss = random_scales(static_cast<std::size_t>(c.K / 8 * c.M), c.scale, seed + 2, ssc);
  const auto ms = random_scales(static_cast<std::size_t>(c.K / 8 * c.N), c.scale, seed + 3, msc);
  const nki::Tensor st = nki::Tensor::from_values(dev, {c.K, c.M}, c.st, sw);
  const nki::Tensor mv = nki::Tensor::from_values(dev, {c.K, c.N}, c.mv, mw);
  const nki::Tensor sst = nki::Tensor::from_values(dev, {c.K / 8, c.M}, c.scale, ss);
  const nki::Tensor mst = nki::Tensor::from_values(dev, {c.K / 8, c.N}, c.scale, ms);
  const DType out_dt = c.out;
  const nki::Kernel k = nki::jit("matmul_mx", [out_dt](nl::tensor a, nl::tensor b, nl::tensor as, nl::tensor bs) {
    auto out = nl::ndarray({a.shape()[1], b.shape()[1]}, nl::float32, nl::shared_hbm, "out");
    auto r = isa::nc_matmul_mx(nl::load(a.all()), nl::load(b.all()), nl::load(as.all()), nl::load(bs.all()),
                               {.dtype = out_dt});
    CHECK(r.dtype() == out_dt);
    nl::store(out.all(), r);
    return out;
  });
  // Host: each value times 2^(its scale code - 127), one fp32 fma per product, k ascending, then i.
  std::vector<double> want(static_cast<std::size_t>(c.M * c.N));
  for (std::int64_t m = 0; m < c.M; ++m)
    for (std::int64_t n = 0; n < c.N; ++n) {
      float acc = 0.0f;
      for (std::int64_t kk = 0; kk < c.K; ++kk) {
        const auto w1 = static_cast<std::uint32_t>(sw[static_cast<std::size_t>(kk * c.M + m)]);
        const auto w2 = static_cast<std::uint32_t>(mw[static_cast<std::size_t>(kk * c.N + n)]);
        const int s1 = ssc[static_cast<std::size_t>(kk / 8 * c.M + m)], s2 = msc[static_cast<std::size_t>(kk / 8 * c.N + n)];
        for (int i = 0; i < 4; ++i)
          acc = std::fma(static_cast<float>(std::ldexp(element(w1, i, c.st), s1 - 127)),
                         static_cast<float>(std::ldexp(element(w2, i, c.mv), s2 - 127)), acc);
      }
      want[static_cast<std::size_t>(m * c.N + n)] = nki::round_to_dtype(acc, out_dt);
    }
  lt::check_both(k, lt::no_grid(), {st, mv, sst, mst}, want, "matmul_mx");
}

}  // namespace

TEST_CASE("isa::nc_matmul_mx - MXFP8 and MXFP4 products with e8m0 or uint8 scales, summed in fp32") {
  run_case({32, 8, 16, DType::fp8_e4m3fn_x4, DType::fp8_e4m3fn_x4, DType::fp8_e8m0fnu, DType::fp32}, 201);
  run_case({64, 6, 20, DType::fp8_e5m2_x4, DType::fp8_e5m2_x4, DType::uint8, DType::fp32}, 202);
  run_case({32, 4, 8, DType::fp4_e2m1fn_x4, DType::fp4_e2m1fn_x4, DType::fp8_e8m0fnu, DType::bf16}, 203);
  run_case({128, 2, 5, DType::fp8_e4m3fn_x4, DType::fp4_e2m1fn_x4, DType::fp8_e8m0fnu, DType::fp32}, 204);
}

TEST_CASE("isa::nc_matmul_mx - random shapes and formats, seeded") {
  std::mt19937 rng(205);
  const DType packed[] = {DType::fp8_e4m3fn_x4, DType::fp8_e5m2_x4, DType::fp4_e2m1fn_x4};
  for (int trial = 0; trial < 4; ++trial) {
    const Case c{32 * static_cast<std::int64_t>(1 + rng() % 4), 2 * static_cast<std::int64_t>(1 + rng() % 8),
                 static_cast<std::int64_t>(1 + rng() % 24), packed[rng() % 3], packed[rng() % 3],
                 rng() % 2 ? DType::uint8 : DType::fp8_e8m0fnu, rng() % 2 ? DType::bf16 : DType::fp32};
    run_case(c, 206 + static_cast<std::uint32_t>(trial) * 10);
  }
}

TEST_CASE("isa::nc_matmul_mx of quantize_mx outputs is the matmul of the dequantized values") {
  // A [K=32, 4M] and B [32, 4N] in bf16, each quantized to MXFP8, then multiplied.
  const std::int64_t K = 32, M = 4, N = 6;
  auto av = test::random_floats(static_cast<std::size_t>(K * 4 * M), 211, -3.0f, 3.0f);
  auto bv = test::random_floats(static_cast<std::size_t>(K * 4 * N), 212, -50.0f, 50.0f);
  auto a = lt::make({K, 4 * M}, DType::bf16, av);
  auto b = lt::make({K, 4 * N}, DType::bf16, bv);
  const nki::Kernel k = nki::jit("quantize_matmul", [](nl::tensor a, nl::tensor b) {
    auto out = nl::ndarray({a.shape()[1] / 4, b.shape()[1] / 4}, nl::float32, nl::shared_hbm, "out");
    auto qa = isa::quantize_mx(nl::load(a.all()), nl::float8_e4m3fn_x4);
    auto qb = isa::quantize_mx(nl::load(b.all()), nl::float8_e5m2_x4);
    nl::store(out.all(), isa::nc_matmul_mx(qa.data, qb.data, qa.scale, qb.scale));
    return out;
  });
  // Host: quantize each group (scale 2^(floor(log2 amax) - (E - 1))), dequantize, multiply.
  auto dequantized = [](const std::vector<double>& v, std::int64_t F, int e, DType fmt) {
    std::vector<double> d(v.size());
    for (std::int64_t g = 0; g < K / 8; ++g)
      for (std::int64_t j = 0; j < F / 4; ++j) {
        double amax = 0;
        for (std::int64_t p = 8 * g; p < 8 * g + 8; ++p)
          for (std::int64_t i = 0; i < 4; ++i) amax = std::max(amax, std::fabs(v[static_cast<std::size_t>(p * F + 4 * j + i)]));
        const int x = std::ilogb(amax) - (e - 1);
        for (std::int64_t p = 8 * g; p < 8 * g + 8; ++p)
          for (std::int64_t i = 0; i < 4; ++i) {
            const auto at = static_cast<std::size_t>(p * F + 4 * j + i);
            d[at] = std::ldexp(nki::round_to_dtype(std::ldexp(v[at], -x), fmt), x);
          }
      }
    return d;
  };
  const auto da = dequantized(lt::values_of(a), 4 * M, 8, DType::fp8_e4m3fn);
  const auto db = dequantized(lt::values_of(b), 4 * N, 15, DType::fp8_e5m2);
  std::vector<double> want(static_cast<std::size_t>(M * N));
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (std::int64_t kk = 0; kk < K; ++kk)
        for (std::int64_t i = 0; i < 4; ++i)
          acc = std::fma(static_cast<float>(da[static_cast<std::size_t>(kk * 4 * M + 4 * m + i)]),
                         static_cast<float>(db[static_cast<std::size_t>(kk * 4 * N + 4 * n + i)]), acc);
      want[static_cast<std::size_t>(m * N + n)] = acc;
    }
  lt::check_both(k, lt::no_grid(), {a, b}, want, "quantize_matmul");
}

namespace {
const char* kFile = "tests/language/isa_nc_matmul_mx_test.cpp";

/** Runs `body` on loaded tiles of packed a [K, M], b [K, N] and scales; returns the user error. */
template <class F>
std::string misuse(F body) {
  const nki::Kernel k = nki::jit("matmul_mx_misuse", [&](nl::tensor a, nl::tensor b, nl::tensor as, nl::tensor bs) {
    auto out = nl::ndarray({1, 1}, nl::float32, nl::shared_hbm, "out");
    body(nl::load(a.all()), nl::load(b.all()), nl::load(as.all()), nl::load(bs.all()));
    return out;
  });
  const auto& dev = nki::sim::Device::default_device();
  auto zeros = [&](nki::Shape s, DType dt) {
    return nki::Tensor::from_values(dev, s, dt, std::vector<double>(static_cast<std::size_t>(s[0] * s[1]), 0.0));
  };
  return test::user_error_of([&] {
    k(zeros({32, 4}, DType::fp8_e4m3fn_x4), zeros({32, 8}, DType::fp8_e4m3fn_x4), zeros({4, 4}, DType::fp8_e8m0fnu),
      zeros({4, 8}, DType::fp8_e8m0fnu));
  });
}
}  // namespace

TEST_CASE("isa::nc_matmul_mx - misuse names NKI's error") {
  int line = 0;
  auto expect = [&](const std::string& e, const std::string& rest) {
    CHECK(e == fmt::format("matmul_mx_misuse ({}:{}): {}", kFile, line, rest));
  };
  using T = nl::tile;
  std::string e = misuse([&](T a, T b, T as, T bs) {
    line = __LINE__ + 1;
    isa::nc_matmul_mx(nl::copy(a, {.dtype = nl::uint32}), b, as, bs);
  });
  expect(e, "err_unsupported_dtype: isa::nc_matmul_mx: stationary is uint32; it must be fp8_e5m2_x4, fp8_e4m3fn_x4 or "
            "fp4_e2m1fn_x4");
  e = misuse([&](T a, T b, T as, T bs) {
    line = __LINE__ + 1;
    isa::nc_matmul_mx(a, b, as, bs, {.dtype = nl::float16});
  });
  expect(e, "err_unsupported_dtype: isa::nc_matmul_mx: result dtype fp16; it must be fp32 or bf16");
  e = misuse([&](T a, T b, T as, T bs) {
    line = __LINE__ + 1;
    isa::nc_matmul_mx(a[nl::ds(0, 16), nl::_], b, as, bs);
  });
  expect(e, "err_num_partition_mismatch: isa::nc_matmul_mx: the contraction (partition) sizes differ: stationary "
            "[16,4] has K=16, moving [32,8] has K=32");
  e = misuse([&](T a, T b, T as, T bs) {
    line = __LINE__ + 1;
    isa::nc_matmul_mx(a[nl::ds(0, 16), nl::_], b[nl::ds(0, 16), nl::_], as, bs);
  });
  expect(e, "err_num_partition_exceed_arch_limit: isa::nc_matmul_mx: stationary [16,4] has 16 partitions; MX data "
            "needs a multiple of 32, at most 128");
  e = misuse([&](T a, T b, T as, T bs) {
    line = __LINE__ + 1;
    isa::nc_matmul_mx(a[nl::ds(0, 32), nl::ds(0, 3)], b, as, bs);
  });
  expect(e, "err_size_of_dimension_exceed_arch_limit: isa::nc_matmul_mx: stationary free size 3 must be even and at "
            "most 128 (stationary shape [32,3])");
  e = misuse([&](T a, T b, T, T bs) {
    line = __LINE__ + 1;
    isa::nc_matmul_mx(a, b, bs, bs);
  });
  expect(e, "err_invalid_shape: isa::nc_matmul_mx: stationary_scale has shape [4,8]; one scale per 8 partitions x 1 "
            "packed element of its data is [4,4]");
  e = misuse([&](T a, T b, T as, T bs) {
    line = __LINE__ + 1;
    isa::nc_matmul_mx(a, b, as, nl::copy(bs, {.dtype = nl::float32}));
  });
  expect(e, "err_unsupported_dtype: isa::nc_matmul_mx: moving_scale is fp32; it must be fp8_e8m0fnu or uint8");
  e = misuse([&](T a, T b, T as, T bs) {
    auto psum = isa::nc_matmul_mx(a, b, as, bs);
    line = __LINE__ + 1;
    isa::nc_matmul_mx(psum, b, as, bs);
  });
  expect(e, fmt::format("err_unsupported_memory: isa::nc_matmul_mx reads stationary from SBUF; tile %t{} is in psum", 4));
}
