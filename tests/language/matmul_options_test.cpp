/** \file isa::nc_matmul's is_transpose, tile_position / tile_size and is_*_onezero options. */
#include <cmath>
#include <cstring>

#include "lang_support.h"
#include "nki/profile.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

/** stationary [K, M] by moving [K, N] with the options, the PSUM result copied out in its own dtype. */
nki::Kernel matmul_with(isa::nc_matmul_options o) {
  return nki::jit("matmul_options", [o](nl::tensor st, nl::tensor mv) {
    auto a = nl::load(st.all());
    auto b = nl::load(mv.all());
    auto r = isa::nc_matmul(a, b, o);
    auto out = nl::ndarray(r.shape(), r.dtype(), nl::shared_hbm, "out");
    nl::store(out.all(), nl::copy(r));
    return out;
  });
}

/** The host's PSUM product: one fma per k, ascending from 0. */
std::vector<double> host_matmul(const std::vector<double>& s, const std::vector<double>& v, std::int64_t kk, std::int64_t m,
                                std::int64_t n) {
  std::vector<double> want(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (std::int64_t q = 0; q < kk; ++q)
        acc = std::fma(static_cast<float>(s[static_cast<std::size_t>(q * m + i)]),
                       static_cast<float>(v[static_cast<std::size_t>(q * n + j)]), acc);
      want[static_cast<std::size_t>(i * n + j)] = lt::canon(acc);
    }
  return want;
}

std::vector<float> identity(std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n * n), 0.0f);
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i * n + i)] = 1.0f;
  return v;
}

const std::string kFile = "tests/language/matmul_options_test.cpp";

}  // namespace

TEST_CASE("isa::nc_matmul is_transpose on NeuronCore-v3: stationary^T in its own dtype, NaN, infinities and -0.0 kept") {
  const nki::Kernel k = matmul_with({.is_transpose = true});
  for (const auto& [kk, m, dt] : {std::tuple{32, 48, DType::bf16}, std::tuple{128, 128, DType::fp32}, std::tuple{5, 3, DType::fp16}}) {
    std::vector<float> sv = test::random_floats(static_cast<std::size_t>(kk * m), 41, -1e3f, 1e3f);
    sv[0] = lt::qnan(), sv[1] = INFINITY, sv[2] = -0.0f, sv[3] = -INFINITY;
    const nki::Tensor st = lt::make({kk, m}, dt, sv);
    const nki::Tensor mv = lt::make({kk, kk}, dt, identity(kk));
    const std::vector<double> s = lt::values_of(st);
    std::vector<double> want(static_cast<std::size_t>(m * kk));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < kk; ++j) want[static_cast<std::size_t>(i * kk + j)] = s[static_cast<std::size_t>(j * m + i)];
    const std::vector<nki::Tensor> got = lt::check_both(k, lt::no_grid(), {st, mv}, want, fmt::format("transpose {}x{}", kk, m));
    CHECK(got.at(0).dtype() == dt);
    CHECK(std::signbit(got.at(0).to_floats().at(static_cast<std::size_t>(2 * kk))));  // -0.0 at [2, 0]
  }
}

TEST_CASE("isa::nc_matmul is_transpose with a permutation moves each stationary row to the column it selects") {
  // moving[k, n] = 1 where k = (n + 1) % K: result[m, n] = stationary[(n + 1) % K, m].
  const nki::Kernel k = matmul_with({.is_transpose = true});
  const std::int64_t kk = 16, m = 8;
  std::vector<float> p(static_cast<std::size_t>(kk * kk), 0.0f);
  for (std::int64_t n = 0; n < kk; ++n) p[static_cast<std::size_t>(((n + 1) % kk) * kk + n)] = 1.0f;
  const nki::Tensor st = lt::make({kk, m}, DType::bf16, test::random_floats(static_cast<std::size_t>(kk * m), 42, -8, 8));
  const nki::Tensor mv = lt::make({kk, kk}, DType::bf16, p);
  const std::vector<double> s = lt::values_of(st);
  std::vector<double> want(static_cast<std::size_t>(m * kk));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t n = 0; n < kk; ++n) want[static_cast<std::size_t>(i * kk + n)] = s[static_cast<std::size_t>(((n + 1) % kk) * m + i)];
  lt::check_both(k, lt::no_grid(), {st, mv}, want, "permutation");
}

TEST_CASE("isa::nc_matmul is_transpose on NeuronCore-v2 is an ordinary fp32 matmul: a NaN times 0 poisons its row") {
  const nki::Kernel k = matmul_with({.is_transpose = true});
  const nki::sim::Device trn1("trn1", 1);
  const std::int64_t kk = 8, m = 4;
  std::vector<float> sv = test::random_floats(static_cast<std::size_t>(kk * m), 43, -4, 4);
  sv[1] = lt::qnan();  // stationary[0, 1]: every element of result row 1
  const nki::Tensor st = nki::Tensor::from_floats({kk, m}, DType::bf16, sv, trn1);
  const nki::Tensor mv = nki::Tensor::from_floats({kk, kk}, DType::bf16, identity(kk), trn1);
  const std::vector<double> want = host_matmul(lt::values_of(st), lt::values_of(mv), kk, m, kk);
  for (std::int64_t j = 0; j < kk; ++j) CHECK(std::isnan(want[static_cast<std::size_t>(kk + j)]));
  const nki::LaunchResult h = lt::run_on(k, lt::no_grid(), nki::Executor::halide, {st, mv});
  const nki::LaunchResult r = lt::run_on(k, lt::no_grid(), nki::Executor::reference, {st, mv});
  CHECK(r.outputs.at(0).dtype() == DType::fp32);
  lt::check_exact(h.outputs.at(0), want, "gen2 transpose [halide]");
  lt::check_exact(r.outputs.at(0), want, "gen2 transpose [reference]");
}

TEST_CASE("isa::nc_matmul tile_position and tile_size change timing, not values: disjoint row tiles overlap") {
  // Two K=64 matmuls: on rows 0..63 and 64..127 they run at once; on the whole array one after the other.
  const auto two = [](bool tiled) {
    return nki::jit("two_matmuls", [tiled](nl::tensor st, nl::tensor mv) {
      auto a = nl::load(st[nl::ds(0, 64), nl::_]), b = nl::load(st[nl::ds(64, 64), nl::_]);
      auto x = nl::load(mv[nl::ds(0, 64), nl::_]), y = nl::load(mv[nl::ds(64, 64), nl::_]);
      const isa::nc_matmul_options top = tiled ? isa::nc_matmul_options{.tile_position = {0, 0}, .tile_size = {64, 128}}
                                               : isa::nc_matmul_options{};
      const isa::nc_matmul_options bottom = tiled ? isa::nc_matmul_options{.tile_position = {64, 0}, .tile_size = {64, 128}}
                                                  : isa::nc_matmul_options{};
      auto r0 = isa::nc_matmul(a, x, top);
      auto r1 = isa::nc_matmul(b, y, bottom);
      auto out = nl::ndarray({256, 512}, nl::float32, nl::shared_hbm, "out");
      nl::store(out[nl::ds(0, 128), nl::_], nl::copy(r0));
      nl::store(out[nl::ds(128, 128), nl::_], nl::copy(r1));
      return out;
    });
  };
  const nki::Tensor st = lt::make({128, 128}, DType::bf16, test::random_floats(128 * 128, 44, -2, 2));
  const nki::Tensor mv = lt::make({128, 512}, DType::bf16, test::random_floats(128 * 512, 45, -2, 2));
  const std::vector<double> s = lt::values_of(st), v = lt::values_of(mv);
  std::vector<double> want = host_matmul({s.begin(), s.begin() + 64 * 128}, {v.begin(), v.begin() + 64 * 512}, 64, 128, 512);
  const std::vector<double> second = host_matmul({s.begin() + 64 * 128, s.end()}, {v.begin() + 64 * 512, v.end()}, 64, 128, 512);
  want.insert(want.end(), second.begin(), second.end());
  lt::check_both(two(true), lt::no_grid(), {st, mv}, want, "tiled");
  lt::check_both(two(false), lt::no_grid(), {st, mv}, want, "untiled");

  const auto matmul_events = [](const nki::sim::ProfileReport& p) {
    std::vector<nki::sim::Event> e;
    for (const nki::sim::Event& x : p.cores.at(0).events)
      if (x.queue == 0) e.push_back(x);  // queue 0: the Tensor engine
    return e;
  };
  const std::vector<nki::TensorSpec> args{{{128, 128}, DType::bf16}, {{128, 512}, DType::bf16}};
  const auto tiled = matmul_events(nki::profile(two(true).launch(nki::GridSpec{}), args, "trn2"));
  const auto whole = matmul_events(nki::profile(two(false).launch(nki::GridSpec{}), args, "trn2"));
  REQUIRE(tiled.size() == 2);
  REQUIRE(whole.size() == 2);
  CHECK(tiled[1].start_us < tiled[0].end_us);   // the bottom tile does not wait for the top one
  CHECK(whole[1].start_us >= whole[0].end_us);  // the whole array: in turn
  CHECK(tiled[0].end_us - tiled[0].start_us == doctest::Approx(whole[0].end_us - whole[0].start_us).epsilon(1e-12));
}

TEST_CASE("isa::nc_matmul is_stationary_onezero and is_moving_onezero: an fp32 product of ones and zeros at twice the rate") {
  // Cycles: bf16 max(64, 512) = 512, fp32 x4 = 2048, fp32 with both hints x2 = 1024; each
  // instruction's time adds the same fixed access bubble, so the differences are in cycles.
  const auto tensor_busy = [&](DType dt, isa::nc_matmul_options o) {
    const std::vector<nki::TensorSpec> args{{{128, 128}, dt}, {{128, 512}, dt}};
    return nki::profile(matmul_with(o).launch(nki::GridSpec{}), args, "trn2")
        .cores.at(0)
        .engines[static_cast<std::size_t>(nki::sim::Engine::tensor)]
        .busy_us;
  };
  const double bf16 = tensor_busy(DType::bf16, {}), fp32 = tensor_busy(DType::fp32, {});
  const double hinted = tensor_busy(DType::fp32, {.is_stationary_onezero = true, .is_moving_onezero = true});
  CHECK(hinted - bf16 == doctest::Approx((fp32 - bf16) / 3).epsilon(1e-9));  // 512 of 1536 extra cycles
  CHECK(tensor_busy(DType::fp32, {.is_stationary_onezero = true}) == doctest::Approx(fp32).epsilon(1e-12));  // moving still fp32
  CHECK(tensor_busy(DType::bf16, {.is_stationary_onezero = true, .is_moving_onezero = true}) ==
        doctest::Approx(bf16).epsilon(1e-12));  // no effect without fp32
  // The values are the product's, whatever the hint says.
  const nki::Tensor st = lt::make({8, 4}, DType::fp32, lt::random_ints(32, 46, 0, 1));
  const nki::Tensor mv = lt::make({8, 6}, DType::fp32, lt::random_ints(48, 47, 0, 1));
  lt::check_both(matmul_with({.is_stationary_onezero = true, .is_moving_onezero = true}), lt::no_grid(), {st, mv},
                 host_matmul(lt::values_of(st), lt::values_of(mv), 8, 4, 6), "onezero");
}

TEST_CASE("isa::nc_matmul tiling and transpose misuse names NKI's error") {
  static int line = 0;
  const auto error_of = [](isa::nc_matmul_options o, const nki::sim::Device& d, nki::Shape st = {64, 64}) {
    const nki::Kernel k = nki::jit("bad_matmul", [o](nl::tensor a, nl::tensor b) {
      auto out = nl::ndarray({a.shape()[1], b.shape()[1]}, nl::float32, nl::shared_hbm, "out");
      auto x = nl::load(a.all());
      auto y = nl::load(b.all());
      line = __LINE__ + 1;
      auto r = isa::nc_matmul(x, y, o);
      nl::store(out.all(), nl::copy(r, {.dtype = nl::float32}));
      return out;
    });
    const nki::Tensor a(st, DType::bf16, d), b({st[0], 32}, DType::bf16, d);
    return test::user_error_of([&] { k(a, b); });
  };
  const nki::sim::Device trn1("trn1", 1), trn2("trn2", 1);
  const std::string where = "bad_matmul (" + kFile + ":";
  std::string msg;
  msg = error_of({.tile_position = {64, 0}}, trn2);
  CHECK(msg ==
        fmt::format("{}{}): err_invalid_tile_position: isa::nc_matmul with tile_position {{64, 0}} and tile_size {{}}: "
                    "tiling mode needs both set, or neither",
                    where, line));
  msg = error_of({.tile_position = {64}, .tile_size = {64, 128}}, trn2);
  CHECK(msg ==
        fmt::format("{}{}): err_invalid_tile_position: isa::nc_matmul: tile_position {{64}} must be a pair (start_row, "
                    "start_column)",
                    where, line));
  msg = error_of({.tile_position = {0, 0}, .tile_size = {64, 128, 1}}, trn2);
  CHECK(msg ==
        fmt::format("{}{}): err_invalid_tile_size: isa::nc_matmul: tile_size {{64, 128, 1}} must be a pair (row_size, "
                    "column_size)",
                    where, line));
  msg = error_of({.tile_position = {0, 0}, .tile_size = {48, 128}}, trn2);
  CHECK(msg ==
        fmt::format("{}{}): err_invalid_tile_size: isa::nc_matmul: tile_size {{48, 128}} has row_size 48; the PE rows "
                    "tile as 128, 64 or (NeuronCore-v3 and newer) 32",
                    where, line));
  msg = error_of({.tile_position = {0, 0}, .tile_size = {32, 128}}, trn1, {32, 64});
  CHECK(msg ==
        fmt::format("{}{}): err_invalid_tile_size: isa::nc_matmul: tile_size {{32, 128}} has row_size 32; the PE rows "
                    "tile as 128, 64 or (NeuronCore-v3 and newer) 32",
                    where, line));
  msg = error_of({.tile_position = {0, 0}, .tile_size = {64, 64}}, trn2);
  CHECK(msg ==
        fmt::format("{}{}): err_invalid_tile_size: isa::nc_matmul: tile_size {{64, 64}} has column_size 64; it must be 128",
                    where, line));
  msg = error_of({.tile_position = {0, 32}, .tile_size = {64, 128}}, trn2);
  CHECK(msg ==
        fmt::format("{}{}): err_invalid_tile_position: isa::nc_matmul: tile_position {{0, 32}} has start_column 32; it "
                    "must be 0",
                    where, line));
  msg = error_of({.tile_position = {32, 0}, .tile_size = {64, 128}}, trn2);
  CHECK(msg ==
        fmt::format("{}{}): err_invalid_tile_position: isa::nc_matmul: tile_position {{32, 0}} has start_row 32; it "
                    "must be a multiple of row_size 64 below 128",
                    where, line));
  msg = error_of({.tile_position = {0, 0}, .tile_size = {32, 128}}, trn2);
  CHECK(msg ==
        fmt::format("{}{}): err_invalid_tile_size: isa::nc_matmul: the stationary operand [64,64] does not fit tile_size "
                    "{{32, 128}} (K <= row_size, M <= column_size)",
                    where, line));
  msg = error_of({.dtype = nl::float32, .is_transpose = true}, trn2);
  CHECK(msg ==
        fmt::format("{}{}): err_unsupported_dtype: isa::nc_matmul with is_transpose and dtype=fp32: transpose mode "
                    "moves the bf16 stationary operand bit-accurately, so the result is bf16",
                    where, line));
}

TEST_CASE("isa::nc_matmul is_transpose with perf_mode double_row is err_unsupported_perf_mode") {
  static int line = 0;
  const nki::Kernel k = nki::jit("transpose_double_row", [](nl::tensor a) {
    auto out = nl::ndarray({4, 4}, nl::float32, nl::shared_hbm, "out");
    auto t = nl::load(a.all());
    line = __LINE__ + 1;
    auto r = isa::nc_matmul(t, t, {.perf_mode = isa::matmul_perf_mode::double_row, .is_transpose = true});
    nl::store(out.all(), nl::copy(r, {.dtype = nl::float32}));
    return out;
  });
  const std::string msg = test::user_error_of([&] { k(nki::Tensor({8, 2, 4}, DType::fp8_e4m3)); });
  CHECK(msg ==
        fmt::format("transpose_double_row ({}:{}): err_unsupported_perf_mode: isa::nc_matmul with is_transpose: "
                    "transpose mode has no perf_mode double_row",
                    kFile, line));
}
