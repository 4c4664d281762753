/** \file nl::copy with a dtype, load with a dtype, and stores rounding into the output dtype. */
#include "lang_support.h"

namespace nl = nki::language;
using lt::rd;
using nki::DType;

namespace {

/** Values with ties, overflow, negatives, NaN and infinities, then random ones. */
std::vector<float> tricky(std::size_t n, std::uint32_t seed) {
  auto v = test::random_floats(n, seed, -300.0f, 300.0f);
  const float inf = std::numeric_limits<float>::infinity();
  const float s[] = {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 127.5f, 128.0f, 255.5f, 256.0f, -129.0f, 70000.0f, -70000.0f,
                     1.0f + 1.0f / 256, 1.0f + 3.0f / 256, 240.0f, 248.0f, 1e-3f, -0.0f, inf, -inf, lt::qnan(),
                     3.0e9f, -3.0e9f, 65519.0f, 65520.0f, 57344.0f, 61440.0f};
  for (std::size_t i = 0; i < std::size(s) && i < n; ++i) v[i] = s[i];
  return v;
}

}  // namespace

TEST_CASE("nl::copy converts an fp32 tile to every dtype with round to nearest even and saturation") {
  const DType targets[] = {DType::fp32, DType::bf16,  DType::fp16,  DType::fp8_e4m3, DType::fp8_e5m2, DType::int8,
                           DType::int16, DType::int32, DType::uint8, DType::uint16,   DType::uint32,   DType::boolean};
  for (DType to : targets) {
    CAPTURE(nki::dtype_name(to));
    const nki::Kernel k = nki::jit("copy_to", [to](nl::tensor a) {
      auto out = nl::ndarray(a.shape(), to, nl::shared_hbm, "out");
      auto c = nl::copy(nl::load(a.all()), {.dtype = to});
      CHECK(c.dtype() == to);
      nl::store(out.all(), c);
      return out;
    });
    auto a = lt::make({128, 4}, DType::fp32, tricky(512, 71));
    const auto av = a.to_floats();
    std::vector<double> want(av.size());
    for (std::size_t x = 0; x < av.size(); ++x) want[x] = nki::round_to_dtype(av[x], to);
    lt::check_both(k, lt::no_grid(), {a}, want, "copy_to");
  }
}

TEST_CASE("a load with dtype converts while loading, a store rounds into the output dtype") {
  // o1 (bf16 output) = load(a, dtype=fp16) stored; o2 (int8 output) = load(a) stored (fp32 tile rounded at the store).
  const nki::Kernel k = nki::jit("load_store_convert", [](nl::tensor a) {
    auto o1 = nl::ndarray(a.shape(), nl::bfloat16, nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), nl::int8, nl::shared_hbm, "o2");
    auto h = nl::load(a.all(), {.dtype = nl::float16});
    CHECK(h.dtype() == DType::fp16);
    nl::store(o1.all(), h);
    nl::store(o2.all(), nl::load(a.all()));
    return std::make_tuple(o1, o2);
  });
  for (nki::Shape s : {nki::Shape{128, 8}, nki::Shape{3, 11}}) {
    CAPTURE(nki::shape_str(s));
    const auto n = static_cast<std::size_t>(s[0] * s[1]);
    auto a = lt::make(s, DType::fp32, tricky(n, 72));
    const auto av = a.to_floats();
    std::vector<double> w1(n), w2(n);
    for (std::size_t x = 0; x < n; ++x) {
      w1[x] = nki::round_to_dtype(nki::round_to_dtype(av[x], DType::fp16), DType::bf16);
      w2[x] = nki::round_to_dtype(av[x], DType::int8);
    }
    lt::check_both(k, lt::no_grid(), {a}, w1.size() ? std::vector<std::vector<double>>{w1, w2}
                                                     : std::vector<std::vector<double>>{},
                   "load_store_convert");
  }
}

TEST_CASE("integer and fp8 inputs pass through copy to fp32 exactly") {
  for (DType from : {DType::int8, DType::int32, DType::uint8, DType::uint16, DType::boolean, DType::fp8_e4m3,
                     DType::fp8_e5m2}) {
    CAPTURE(nki::dtype_name(from));
    const nki::Kernel k = nki::jit("copy_from", [](nl::tensor a) {
      auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
      nl::store(out.all(), nl::copy(nl::load(a.all()), {.dtype = nl::float32}));
      return out;
    });
    auto a = lt::make({64, 6}, from, lt::random_ints(64 * 6, 73, -120, 120));
    const auto av = lt::values_of(a);
    lt::check_both(k, lt::no_grid(), {a}, av, "copy_from");
  }
}

TEST_CASE("copy from PSUM to SBUF in a narrower dtype rounds once") {
  const nki::Kernel k = nki::jit("psum_copy", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::bfloat16, nl::shared_hbm, "out");
    auto ps = nl::ndarray(a.shape(), nl::float32, nl::psum, "ps");
    ps[nl::_, nl::_] = nl::load(a.all()) * 3.0f;
    nl::store(out.all(), nl::copy(ps.all(), {.dtype = nl::bfloat16}));
    return out;
  });
  auto a = lt::make({128, 64}, DType::fp32, test::random_floats(128 * 64, 74));
  const auto av = a.to_floats();
  std::vector<double> want(av.size());
  for (std::size_t x = 0; x < av.size(); ++x) want[x] = rd(av[x] * 3.0f, DType::bf16);
  lt::check_both(k, lt::no_grid(), {a}, want, "psum_copy");
}
