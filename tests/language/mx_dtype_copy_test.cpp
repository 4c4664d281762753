/** \file tf32, fp8_e4m3fn and fp8_e8m0fnu in kernels: conversions in both executors, and packed words kept as they are. */
#include "lang_support.h"

namespace nl = nki::language;
using nki::DType;

namespace {

/** Ties, saturation points, negatives, NaN and infinities, then random values over a wide range. */
std::vector<float> tricky(std::size_t n, std::uint32_t seed) {
  auto v = test::random_floats(n, seed, -600.0f, 600.0f);
  const float inf = std::numeric_limits<float>::infinity();
  const float s[] = {448.0f, 463.0f, 464.0f, 480.0f, -500.0f, 1.0625f, 1.1875f, 1.5f, 3.0f, 0.75f, 1e-3f, 0.0f,
                     -0.0f, -1.0f, inf, -inf, lt::qnan(), 1e30f, 1e-40f, 3.0e38f, 1.0f + 1.0f / 2048,
                     1.0f + 3.0f / 2048, 6.0f, 2.5f};
  for (std::size_t i = 0; i < std::size(s) && i < n; ++i) v[i] = s[i];
  for (std::size_t i = std::size(s); i < n; i += 3) v[i] = std::ldexp(v[i], static_cast<int>(i % 40) - 20);
  return v;
}

}  // namespace

TEST_CASE("nl::copy converts fp32 to tf32, fp8_e4m3fn and fp8_e8m0fnu alike in both executors") {
  for (DType to : {DType::tf32, DType::fp8_e4m3fn, DType::fp8_e8m0fnu}) {
    CAPTURE(nki::dtype_name(to));
    const nki::Kernel k = nki::jit("copy_to_mx", [to](nl::tensor a) {
      auto out = nl::ndarray(a.shape(), to, nl::shared_hbm, "out");
      auto c = nl::copy(nl::load(a.all()), {.dtype = to});
      CHECK(c.dtype() == to);
      nl::store(out.all(), c);
      return out;
    });
    auto a = lt::make({64, 8}, DType::fp32, tricky(512, 91));
    const auto av = a.to_floats();
    std::vector<double> want(av.size());
    for (std::size_t x = 0; x < av.size(); ++x) want[x] = nki::round_to_dtype(av[x], to);
    lt::check_both(k, lt::no_grid(), {a}, want, "copy_to_mx");
  }
}

TEST_CASE("tf32, fp8_e4m3fn and fp8_e8m0fnu inputs widen exactly and compute in fp32") {
  for (DType from : {DType::tf32, DType::fp8_e4m3fn, DType::fp8_e8m0fnu}) {
    CAPTURE(nki::dtype_name(from));
    const nki::Kernel k = nki::jit("mx_times_three", [](nl::tensor a) {
      auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
      nl::store(out.all(), nl::multiply(nl::load(a.all()), 3.0f, {.dtype = nl::float32}));
      return out;
    });
    auto a = lt::make({32, 16}, from, tricky(512, 92));
    const auto av = lt::values_of(a);
    std::vector<double> want(av.size());
    for (std::size_t x = 0; x < av.size(); ++x) want[x] = static_cast<float>(av[x]) * 3.0f;
    lt::check_both(k, lt::no_grid(), {a}, want, "mx_times_three");
  }
}

TEST_CASE("packed x4 words load, copy and store unchanged in both executors") {
  for (DType t : {DType::fp8_e5m2_x4, DType::fp8_e4m3fn_x4, DType::fp4_e2m1fn_x4}) {
    CAPTURE(nki::dtype_name(t));
    const nki::Kernel k = nki::jit("packed_copy", [](nl::tensor a) {
      auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
      nl::store(out.all(), nl::copy(nl::load(a.all())));
      return out;
    });
    std::mt19937 rng(93);
    const std::uint32_t mask = nki::dtype_bytes(t) == 4 ? 0xffffffffu : 0xffffu;
    std::vector<double> want(32 * 4);
    for (double& w : want) w = static_cast<double>(rng() & mask);
    const nki::Tensor a = nki::Tensor::from_values(nki::sim::Device::default_device(), {32, 4}, t, want);
    lt::check_both(k, lt::no_grid(), {a}, want, "packed_copy");
  }
}
