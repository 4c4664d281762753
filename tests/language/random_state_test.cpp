/**
 * \file nl::random_seed, isa::set_rng_seed, isa::rand_set_state and isa::rand_get_state:
 * same seed same bits, another seed other bits, a state read back and set again replays
 * the values that followed it; exact bits against the host generator on both executors.
 */
#include <random>

#include "lang_support.h"
#include "random_host.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

TEST_CASE("nl::random_seed / isa::set_rng_seed: the same seed gives the same values, another seed others") {
  // Seeding restarts the call count: a and b (each right after seeding) are equal; c is call 1.
  const nki::Kernel k = nki::jit("random_seed", [](nl::tensor seed) {
    auto oa = nl::ndarray({128, 96}, nl::float32, nl::shared_hbm, "oa");
    auto ob = nl::ndarray({128, 96}, nl::float32, nl::shared_hbm, "ob");
    auto oc = nl::ndarray({128, 96}, nl::uint32, nl::shared_hbm, "oc");
    auto s = nl::load(seed.all());  // (1, 1)
    nl::random_seed(s);
    nl::store(oa.all(), nl::rand({128, 96}, nl::float32));
    isa::set_rng_seed(s);
    nl::store(ob.all(), nl::rand({128, 96}, nl::float32));
    nl::store(oc.all(), isa::rng({128, 96}));
    return std::make_tuple(oa, ob, oc);
  });
  std::vector<std::vector<double>> first;
  for (std::int64_t seed : {42, 43, -7}) {
    CAPTURE(seed);
    auto st = lt::make({1, 1}, DType::int32, {static_cast<float>(seed)});
    const rh::Key key = rh::from_seed(seed);
    std::vector<double> a, c;
    for (std::uint32_t i = 0; i < 128 * 96; ++i) {
      a.push_back(rh::uniform(rh::bits(key, 0, 0, i)));
      c.push_back(rh::bits(key, 1, 0, i));
    }
    lt::check_both(k, lt::no_grid(), {st}, {a, a, c}, "random_seed");
    if (!first.empty()) {
      std::size_t same = 0;
      for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == first[0][i];
      CHECK(same < 4);
    }
    first.push_back(a);
  }
}

TEST_CASE("isa::rand_set_state / rand_get_state: per-partition states, a state read back replays what followed") {
  // x: call 0 of the set state; g: the state after it; y: call 1; z: call 0 of g set again, = y.
  for (auto [engine, words] : {std::pair{isa::gpsimd_engine, std::int64_t{6}}, {isa::vector_engine, std::int64_t{24}}}) {
    CAPTURE(words);
    static isa::engine eng;
    eng = engine;
    const nki::Kernel k = nki::jit(fmt::format("rand_state{}", words), [](nl::tensor state) {
      const std::int64_t p = state.shape()[0], w = state.shape()[1];
      auto ox = nl::ndarray({p, 40}, nl::uint32, nl::shared_hbm, "ox");
      auto og = nl::ndarray({p, w}, nl::uint32, nl::shared_hbm, "og");
      auto oy = nl::ndarray({p, 40}, nl::uint32, nl::shared_hbm, "oy");
      auto oz = nl::ndarray({p, 40}, nl::uint32, nl::shared_hbm, "oz");
      isa::rand_set_state(nl::load(state.all()), eng);
      nl::store(ox.all(), isa::rng({p, 40}, {.engine = eng}));
      auto g = isa::rand_get_state({p, w}, eng);  // (p, w)
      nl::store(og.all(), g);
      nl::store(oy.all(), isa::rng({p, 40}, {.engine = eng}));
      isa::rand_set_state(g, eng);
      nl::store(oz.all(), isa::rng({p, 40}, {.engine = eng}));
      return std::make_tuple(ox, og, oy, oz);
    });
    const std::int64_t p = 100;
    std::mt19937 gen(77 + static_cast<unsigned>(words));
    std::vector<std::uint32_t> sv(static_cast<std::size_t>(p * words));
    for (auto& x : sv) x = static_cast<std::uint32_t>(gen());
    const std::vector<double> svd(sv.begin(), sv.end());
    auto st = nki::Tensor::from_values(nki::sim::Device::default_device(), {p, words}, DType::uint32, svd);
    std::vector<double> x, g, y;
    for (std::int64_t r = 0; r < p; ++r) {
      const rh::Key key = rh::from_state({sv.begin() + r * words, sv.begin() + (r + 1) * words});
      for (std::int64_t c = 0; c < 40; ++c) {
        const auto pos = static_cast<std::uint32_t>(r * 40 + c);
        x.push_back(rh::bits(key, 0, 0, pos));
        y.push_back(rh::bits(key, 1, 0, pos));
      }
      const rh::Key after = rh::pre(key, 1);
      for (std::int64_t j = 0; j < words; ++j) g.push_back(j == 0 ? after.k0 : j == 1 ? after.k1 : 0);
    }
    lt::check_both(k, lt::no_grid(), {st}, {x, g, y, y}, "rand_state");
  }
}
