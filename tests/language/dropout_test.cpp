/**
 * \file nl::dropout and isa::dropout: each element is zeroed where the generator's uniform value
 * is below the drop probability (a scalar or one per partition) and kept unchanged otherwise.
 */
#include "lang_support.h"
#include "random_host.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

TEST_CASE("isa::dropout / nl::dropout: exact kept elements, about 1 - rate of them, no rescaling") {
  // Calls 0..3 of the Vector generator: rate 0.3, 0 (keeps all), 1 (drops all), then nl::dropout into bf16.
  const nki::Kernel k = nki::jit("dropout_values", [](nl::tensor a) {
    auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o2");
    auto o3 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o3");
    auto o4 = nl::ndarray(a.shape(), nl::bfloat16, nl::shared_hbm, "o4");
    auto x = nl::load(a.all());
    nl::store(o1.all(), isa::dropout(x, 0.3));
    nl::store(o2.all(), isa::dropout(x, 0.0));
    nl::store(o3.all(), isa::dropout(x, 1.0));
    nl::store(o4.all(), nl::dropout(x, 0.5, {.dtype = nl::bfloat16}));
    return std::make_tuple(o1, o2, o3, o4);
  });
  const std::int64_t p = 128, f = 512;
  const auto xv = test::random_floats(static_cast<std::size_t>(p * f), 901, 1.0f, 9.0f);
  auto a = lt::make({p, f}, DType::fp32, xv);
  std::vector<std::vector<double>> want(4);
  const float rates[] = {0.3f, 0.0f, 1.0f, 0.5f};
  for (std::size_t i = 0; i < xv.size(); ++i)
    for (int c = 0; c < 4; ++c) {
      const auto u = static_cast<float>(rh::uniform(rh::bits(rh::vector_builtin(), c, 0, static_cast<std::uint32_t>(i))));
      want[static_cast<std::size_t>(c)].push_back(u >= rates[c] ? xv[i] : 0.0f);
    }
  const auto outs = lt::check_both(k, lt::no_grid(), {a}, want, "dropout");
  std::int64_t kept = 0;
  for (double v : lt::values_of(outs[0])) kept += v != 0.0;
  CHECK(std::fabs(static_cast<double>(kept) / static_cast<double>(p * f) - 0.7) < 0.007);
}

TEST_CASE("isa::dropout: per-partition probabilities [P, 1], integer data with a float32 probability tile") {
  const nki::Kernel k = nki::jit("dropout_partitions", [](nl::tensor a, nl::tensor prob) {
    auto o = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o");
    nl::store(o.all(), isa::dropout(nl::load(a.all()), nl::load(prob.all())));
    return o;
  });
  const std::int64_t p = 64, f = 1024;
  std::vector<float> probs(p);
  for (std::int64_t r = 0; r < p; ++r) probs[static_cast<std::size_t>(r)] = static_cast<float>(r) / 63.0f;
  auto pr = lt::make({p, 1}, DType::fp32, probs);
  const auto xv = lt::random_ints(static_cast<std::size_t>(p * f), 902, 1, 1000);
  auto a = lt::make({p, f}, DType::int32, xv);
  std::vector<double> want;
  for (std::int64_t r = 0; r < p; ++r)
    for (std::int64_t c = 0; c < f; ++c) {
      const auto i = static_cast<std::size_t>(r * f + c);
      const auto u = static_cast<float>(rh::uniform(rh::bits(rh::vector_builtin(), 0, 0, static_cast<std::uint32_t>(i))));
      want.push_back(u >= probs[static_cast<std::size_t>(r)] ? xv[i] : 0.0);
    }
  const auto out = lt::check_both(k, lt::no_grid(), {a, pr}, want, "dropout_partitions");
  // Partition r keeps about 1 - r / 63 of its elements.
  const auto v = lt::values_of(out[0]);
  for (std::int64_t r = 0; r < p; r += 9) {
    std::int64_t kept = 0;
    for (std::int64_t c = 0; c < f; ++c) kept += v[static_cast<std::size_t>(r * f + c)] != 0.0;
    CHECK_MESSAGE(std::fabs(static_cast<double>(kept) / f - (1.0 - probs[static_cast<std::size_t>(r)])) < 0.06, "partition " << r);
  }
}
