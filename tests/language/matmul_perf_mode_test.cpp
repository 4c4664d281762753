/** \file isa::nc_matmul with perf_mode double_row: fp8 pairs contracted over 2K rows in one pass. */
#include <cmath>

#include "lang_support.h"
#include "nki/profile.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

nki::Kernel double_row_matmul() {
  return nki::jit("double_row", [](nl::tensor st, nl::tensor mv) {
    const std::int64_t m = st.shape()[2], n = mv.shape()[2];
    auto out = nl::ndarray({m, n}, nl::float32, nl::shared_hbm, "out");
    auto r = isa::nc_matmul(nl::load(st.all()), nl::load(mv.all()), {.perf_mode = isa::matmul_perf_mode::double_row});
    nl::store(out.all(), nl::copy(r, {.dtype = nl::float32}));
    return out;
  });
}

}  // namespace

TEST_CASE("isa::nc_matmul double_row: [K, 2, M] by [K, 2, N] fp8, the pair's rows contracted at each k") {
  const nki::Kernel k = double_row_matmul();
  for (const auto& [kk, m, n, dt] : {std::tuple{128, 64, 96, DType::fp8_e4m3}, std::tuple{24, 128, 512, DType::fp8_e5m2},
                                     std::tuple{7, 5, 3, DType::fp8_e4m3}}) {
    const nki::Tensor st = lt::make({kk, 2, m}, dt, test::random_floats(static_cast<std::size_t>(kk * 2 * m), 21, -4, 4));
    const nki::Tensor mv = lt::make({kk, 2, n}, dt, test::random_floats(static_cast<std::size_t>(kk * 2 * n), 22, -4, 4));
    const std::vector<double> s = lt::values_of(st), v = lt::values_of(mv);
    std::vector<double> want(static_cast<std::size_t>(m * n));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        float acc = 0.0f;
        for (std::int64_t q = 0; q < kk; ++q)
          for (std::int64_t r = 0; r < 2; ++r)
            acc = std::fma(static_cast<float>(s[static_cast<std::size_t>((q * 2 + r) * m + i)]),
                           static_cast<float>(v[static_cast<std::size_t>((q * 2 + r) * n + j)]), acc);
        want[static_cast<std::size_t>(i * n + j)] = acc;
      }
    lt::check_both(k, lt::no_grid(), {st, mv}, want, fmt::format("double_row K={} M={} N={}", kk, m, n));
  }
}

TEST_CASE("isa::nc_matmul double_row takes the time of one pass and counts the FLOPs of 2K rows") {
  const nki::Kernel pair = double_row_matmul();
  const nki::Kernel plain = nki::jit("plain_fp8", [](nl::tensor st, nl::tensor mv) {
    auto out = nl::ndarray({st.shape()[1], mv.shape()[1]}, nl::float32, nl::shared_hbm, "out");
    nl::store(out.all(), nl::copy(isa::nc_matmul(nl::load(st.all()), nl::load(mv.all())), {.dtype = nl::float32}));
    return out;
  });
  using nki::sim::Engine;
  const nki::sim::ProfileReport a =
      nki::profile(pair.launch(nki::GridSpec{}), {{{128, 2, 128}, DType::fp8_e4m3}, {{128, 2, 512}, DType::fp8_e4m3}}, "trn2");
  const nki::sim::ProfileReport b =
      nki::profile(plain.launch(nki::GridSpec{}), {{{128, 128}, DType::fp8_e4m3}, {{128, 512}, DType::fp8_e4m3}}, "trn2");
  const auto tensor = static_cast<std::size_t>(Engine::tensor);
  CHECK(a.cores.at(0).engines[tensor].instructions == 1);
  CHECK(a.cores.at(0).engines[tensor].busy_us == doctest::Approx(b.cores.at(0).engines[tensor].busy_us).epsilon(1e-12));
  CHECK(a.flops == 2 * b.flops);
  CHECK(b.flops == 2LL * 128 * 128 * 512);
}

TEST_CASE("isa::nc_matmul double_row misuse names NKI's error") {
  static int line = 0;
  const auto kernel = [](DType) {
    return nki::jit("bad_double_row", [](nl::tensor st, nl::tensor mv) {
      auto out = nl::ndarray({4, 4}, nl::float32, nl::shared_hbm, "out");
      auto a = nl::load(st.all());
      auto b = nl::load(mv.all());
      line = __LINE__ + 1;
      auto r = isa::nc_matmul(a, b, {.perf_mode = isa::matmul_perf_mode::double_row});
      nl::store(out.all(), nl::copy(r, {.dtype = nl::float32}));
      return out;
    });
  };
  const auto run = [&](const nki::sim::Device& d, nki::Shape s, DType dt) {
    const nki::Tensor st = nki::Tensor(s, dt, d), mv = nki::Tensor(s, dt, d);
    return test::user_error_of([&] { kernel(dt)(st, mv); });
  };
  const nki::sim::Device trn1("trn1", 1), trn2("trn2", 1);
  const std::string where = "bad_double_row (tests/language/matmul_perf_mode_test.cpp:";
  const std::string gen2 = run(trn1, {8, 2, 4}, DType::fp8_e4m3);  // sets `line` first
  CHECK(gen2 ==
        fmt::format("{}{}): err_unsupported_perf_mode: isa::nc_matmul with perf_mode double_row needs NeuronCore-v3 or "
                    "newer (trn2, trn3); the target is gen2",
                    where, line));
  CHECK(run(trn2, {8, 2, 4}, DType::bf16) ==
        fmt::format("{}{}): err_unsupported_dtype: isa::nc_matmul with perf_mode double_row: the stationary operand is "
                    "bf16; double_row packs float8_e4m3 or float8_e5m2 pairs",
                    where, line));
  CHECK(run(trn2, {8, 3, 4}, DType::fp8_e5m2) ==
        fmt::format("{}{}): err_unsupported_tile_rank: isa::nc_matmul with perf_mode double_row: the stationary operand "
                    "must be a [K, 2, F] tile (the contraction over K partitions and a pair), got shape [8,3,4]",
                    where, line));
}

TEST_CASE("isa::nc_matmul with a result dtype other than fp32 is err_unsupported_dtype") {
  static int line = 0;
  const nki::Kernel k = nki::jit("bf16_psum", [](nl::tensor a) {
    auto out = nl::ndarray({8, 8}, nl::float32, nl::shared_hbm, "out");
    auto t = nl::load(a.all());
    line = __LINE__ + 1;
    auto r = isa::nc_matmul(t, t, {.dtype = nl::bfloat16});
    nl::store(out.all(), nl::copy(r, {.dtype = nl::float32}));
    return out;
  });
  const std::string msg = test::user_error_of([&] { k(nki::Tensor({8, 8}, DType::bf16)); });
  CHECK(msg == fmt::format("bf16_psum (tests/language/matmul_perf_mode_test.cpp:{}): err_unsupported_dtype: "
                           "isa::nc_matmul with dtype=bf16: the result accumulates in PSUM as fp32",
                           line));
}

TEST_CASE("isa::nc_matmul double_row depends on the target: a trace for trn2 does not serve a launch on trn1") {
  const nki::Kernel k = double_row_matmul();
  const nki::sim::Device trn2("trn2", 1), trn1("trn1", 1);
  const auto args = [](const nki::sim::Device& d) {
    return std::vector<nki::Tensor>{nki::Tensor({8, 2, 4}, DType::fp8_e4m3, d), nki::Tensor({8, 2, 4}, DType::fp8_e4m3, d)};
  };
  const nki::LaunchResult ok = lt::run_on(k, lt::no_grid(), nki::Executor::reference, args(trn2));
  CHECK(ok.ir_text.find("  traced for nc_version gen3\n") != std::string::npos);
  const std::string msg = test::user_error_of([&] { lt::run_on(k, lt::no_grid(), nki::Executor::reference, args(trn1)); });
  CHECK(msg.find("err_unsupported_perf_mode: isa::nc_matmul with perf_mode double_row needs NeuronCore-v3 or newer "
                 "(trn2, trn3); the target is gen2") != std::string::npos);
}
