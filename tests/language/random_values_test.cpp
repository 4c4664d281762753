/**
 * \file nl::rand, isa::rng and isa::rand2: the exact bits of the generator against a host
 * implementation on both executors (per call, instance, loop iteration and partition), and
 * the statistics of the uniform values.
 */
#include "lang_support.h"
#include "random_host.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

/** Host values of one [p, f] generator call of each stream in `streams`, stacked by rows. */
std::vector<double> host_uniform(rh::Key k, std::uint64_t call, const std::vector<std::uint32_t>& streams,
                                 std::int64_t p, std::int64_t f, int nbits) {
  std::vector<double> out;
  for (std::uint32_t s : streams)
    for (std::int64_t i = 0; i < p * f; ++i) out.push_back(rh::uniform(rh::bits(k, call, s, static_cast<std::uint32_t>(i)), nbits));
  return out;
}

}  // namespace

TEST_CASE("nl::rand: the generator's exact values per call, instance, loop iteration and dtype") {
  // Grid of 2; calls 0 and 1 at the top level (stream = program id), call 2 in a loop of 2
  // (stream = program id * 2 + iteration).
  const nki::Kernel k = nki::jit("rand_values", [](nl::tensor like) {
    const std::int64_t p = like.shape()[0] / 2, f = like.shape()[1];
    auto o1 = nl::ndarray({2 * p, f}, nl::float32, nl::shared_hbm, "o1");
    auto o2 = nl::ndarray({2 * p, f}, nl::bfloat16, nl::shared_hbm, "o2");
    auto o3 = nl::ndarray({4 * p, f}, nl::float32, nl::shared_hbm, "o3");
    auto ip = nl::arange(p)[nl::_, nl::newaxis];
    auto jf = nl::arange(f)[nl::newaxis, nl::_];
    auto pid = nl::program_id(0);
    nl::store(o1[pid * p + ip, jf], nl::rand({p, f}, nl::float32));  // (p, f)
    nl::store(o2[pid * p + ip, jf], nl::rand({p, f}, nl::bfloat16));
    for (auto i : nl::affine_range(2)) nl::store(o3[(pid * 2 + i) * p + ip, jf], nl::rand({p, f}, nl::float32));
    return std::make_tuple(o1, o2, o3);
  });
  for (auto [p, f] : {std::pair<std::int64_t, std::int64_t>{128, 64}, {7, 5}}) {
    CAPTURE(p);
    CAPTURE(f);
    auto like = nki::Tensor::from_floats({2 * p, f}, DType::fp32, std::vector<float>(static_cast<std::size_t>(2 * p * f)));
    const rh::Key key = rh::vector_builtin();
    lt::check_both(k, lt::grid1(2), {like},
                   {host_uniform(key, 0, {0, 1}, p, f, 24), host_uniform(key, 1, {0, 1}, p, f, 8),
                    host_uniform(key, 2, {0, 1, 2, 3}, p, f, 24)},
                   "rand");
  }
}

TEST_CASE("nl::rand: 64K fp32 uniforms have mean 1/2 and variance 1/12 within 1%, all at least 0 and below 1") {
  const nki::Kernel k = nki::jit("rand_stats", []() {
    auto o = nl::ndarray({128, 512}, nl::float32, nl::shared_hbm, "o");
    nl::store(o.all(), nl::rand({128, 512}, nl::float32));
    return o;
  });
  for (nki::Executor ex : lt::executors) {
    const auto v = lt::values_of(lt::run_on(k, lt::no_grid(), ex, {}).outputs.at(0));
    REQUIRE(v.size() == 65536);
    double sum = 0, lo = 1, hi = 0;
    for (double x : v) {
      sum += x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    const double mean = sum / static_cast<double>(v.size());
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    const double var = ss / static_cast<double>(v.size());
    CHECK(std::fabs(mean - 0.5) < 0.005);
    CHECK(std::fabs(var - 1.0 / 12.0) < 0.01 / 12.0);
    CHECK(lo >= 0.0);
    CHECK(hi < 1.0);
  }
}

TEST_CASE("isa::rng: 32 random bits truncated to the integer dtype, Vector and GpSimd generators apart") {
  const nki::Kernel k = nki::jit("rng_bits", []() {
    auto o1 = nl::ndarray({64, 48}, nl::uint32, nl::shared_hbm, "o1");
    auto o2 = nl::ndarray({64, 48}, nl::int32, nl::shared_hbm, "o2");
    auto o3 = nl::ndarray({64, 48}, nl::uint8, nl::shared_hbm, "o3");
    auto o4 = nl::ndarray({64, 48}, nl::int16, nl::shared_hbm, "o4");
    auto o5 = nl::ndarray({64, 48}, nl::uint32, nl::shared_hbm, "o5");
    nl::store(o1.all(), isa::rng({64, 48}));                                            // Vector call 0
    nl::store(o2.all(), isa::rng({64, 48}, {.dtype = nl::int32}));                     // Vector call 1
    nl::store(o3.all(), isa::rng({64, 48}, {.dtype = nl::uint8}));                     // Vector call 2
    nl::store(o4.all(), isa::rng({64, 48}, {.dtype = nl::int16, .engine = isa::gpsimd_engine}));  // GpSimd call 0
    nl::store(o5.all(), isa::rng({64, 48}, {.engine = isa::gpsimd_engine}));          // GpSimd call 1
    return std::make_tuple(o1, o2, o3, o4, o5);
  });
  const std::int64_t n = 64 * 48;
  std::vector<std::vector<double>> want(5);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto pos = static_cast<std::uint32_t>(i);
    want[0].push_back(rh::bits(rh::vector_builtin(), 0, 0, pos));
    want[1].push_back(static_cast<std::int32_t>(rh::bits(rh::vector_builtin(), 1, 0, pos)));
    want[2].push_back(rh::bits(rh::vector_builtin(), 2, 0, pos) & 0xFFu);
    want[3].push_back(static_cast<std::int16_t>(rh::bits(rh::gpsimd_builtin(), 0, 0, pos) & 0xFFFFu));
    want[4].push_back(rh::bits(rh::gpsimd_builtin(), 1, 0, pos));
  }
  const auto outs = lt::check_both(k, lt::no_grid(), {}, want, "rng");
  // The two engines' first calls differ (own keys), and every bit is used: each of the 32 bits is set about half the time.
  const auto v = lt::values_of(outs[0]);
  std::int64_t same = 0;
  for (std::int64_t i = 0; i < n; ++i) same += want[0][static_cast<std::size_t>(i)] == want[4][static_cast<std::size_t>(i)];
  CHECK(same < 4);
  for (int b = 0; b < 32; ++b) {
    std::int64_t ones = 0;
    for (double x : v) ones += (static_cast<std::uint32_t>(x) >> b) & 1u;
    CHECK_MESSAGE(std::abs(static_cast<double>(ones) / static_cast<double>(n) - 0.5) < 0.05, "bit " << b);
  }
}

TEST_CASE("isa::rand2: uniform fp32 from min up to max, scalars or [P, 1] tiles, rounded to the dtype") {
  const nki::Kernel k = nki::jit("rand2_values", [](nl::tensor lo, nl::tensor hi) {
    const std::int64_t p = lo.shape()[0];
    auto o1 = nl::ndarray({p, 256}, nl::float32, nl::shared_hbm, "o1");
    auto o2 = nl::ndarray({p, 256}, nl::bfloat16, nl::shared_hbm, "o2");
    nl::store(o1.all(), isa::rand2({p, 256}, -2.0, 3.0));
    nl::store(o2.all(), isa::rand2({p, 256}, nl::load(lo.all()), nl::load(hi.all()), {.dtype = nl::bfloat16}));
    return std::make_tuple(o1, o2);
  });
  const std::int64_t p = 128;
  std::vector<float> lov(p), hiv(p);
  for (std::int64_t i = 0; i < p; ++i) {
    lov[static_cast<std::size_t>(i)] = -1.0f - 0.25f * static_cast<float>(i);
    hiv[static_cast<std::size_t>(i)] = 0.5f + 0.125f * static_cast<float>(i);
  }
  auto lo = lt::make({p, 1}, DType::fp32, lov);
  auto hi = lt::make({p, 1}, DType::fp32, hiv);
  std::vector<double> w1, w2;
  for (std::int64_t r = 0; r < p; ++r)
    for (std::int64_t c = 0; c < 256; ++c) {
      const auto pos = static_cast<std::uint32_t>(r * 256 + c);
      const auto u0 = static_cast<float>(rh::uniform(rh::bits(rh::vector_builtin(), 0, 0, pos)));
      w1.push_back(lt::fadd(lt::fmul(u0, 5.0f), -2.0f));
      const auto u1 = static_cast<float>(rh::uniform(rh::bits(rh::vector_builtin(), 1, 0, pos)));
      const float l = lov[static_cast<std::size_t>(r)], h = hiv[static_cast<std::size_t>(r)];
      w2.push_back(lt::fadd(lt::fmul(u1, h - l), l));
    }
  const auto outs = lt::check_both(k, lt::no_grid(), {lo, hi}, {w1, w2}, "rand2");
  const auto v = lt::values_of(outs[0]);
  double sum = 0;
  for (double x : v) {
    CHECK(x >= -2.0);
    CHECK(x < 3.0);
    sum += x;
  }
  CHECK(std::fabs(sum / static_cast<double>(v.size()) - 0.5) < 0.05);
}
