/** \file The cost model runs a dynamic loop for its trip count when registers holding constants give it, else once. */
#include "test_support.h"
#include "nki/profile.h"
#include "nki/simulator/cost_model.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::sim::Engine;

namespace {

enum class Loop { static_range, fori_constant, fori_from_data, while_moves };

/** acc += x, `trips` times, in the loop form `form`; x is [128, 256] fp32, n a [1, 1] int32 bound. */
nki::Kernel adder(Loop form, std::int64_t trips) {
  return nki::jit(fmt::format("cost_loop_{}_{}", static_cast<int>(form), trips), [form, trips](nl::tensor x, nl::tensor n) {
    auto out = nl::ndarray(x.shape(), nl::float32, nl::shared_hbm, "out");
    auto acc = nl::zeros(x.shape(), nl::float32, nl::sbuf, "acc");
    auto xt = nl::load(x.all());
    auto body = [&] { acc.all() = nl::add(acc.all(), xt); };
    switch (form) {
      case Loop::static_range:
        for (auto i : nl::sequential_range(trips)) (void)i, body();
        break;
      case Loop::fori_constant: {
        auto hi = isa::register_alloc();
        isa::register_move(hi, trips);
        nl::fori_loop(0, hi, [&](isa::VirtualRegister) { body(); });
        break;
      }
      case Loop::fori_from_data: {
        auto hi = isa::register_alloc();
        isa::register_load(hi, n);
        nl::fori_loop(0, hi, [&](isa::VirtualRegister) { body(); });
        break;
      }
      case Loop::while_moves: {  // cond = trips, then the body counts down through a chain of known moves
        auto cond = isa::register_alloc(trips);
        nl::while_loop(cond, [&](isa::VirtualRegister) {
          body();
          auto next = isa::register_alloc(0);
          return next;
        });
        break;
      }
    }
    nl::store(out.all(), acc);
    return out;
  });
}

nki::sim::ProfileReport profile(Loop form, std::int64_t trips) {
  return nki::profile(adder(form, trips).launch(nki::GridSpec{}),
                      {{{128, 256}, nki::DType::fp32}, {{1, 1}, nki::DType::int32}}, "trn2");
}

std::int64_t vector_instructions(const nki::sim::ProfileReport& r) {
  return r.cores.at(0).engines[static_cast<std::size_t>(Engine::vector)].instructions;
}

}  // namespace

TEST_CASE("cost of a dynamic loop - its trip count from registers holding constants, one iteration from data") {
  for (std::int64_t t : {0, 1, 4}) {
    CAPTURE(t);
    const auto fixed = profile(Loop::static_range, std::max<std::int64_t>(t, 1));
    const auto dynamic = profile(Loop::fori_constant, t);
    // The same adds, run t times: the instruction count and the time of a static loop of t iterations.
    CHECK(vector_instructions(dynamic) == (t == 0 ? vector_instructions(fixed) - 1 : vector_instructions(fixed)));
    if (t > 0) CHECK(dynamic.latency_us == doctest::Approx(fixed.latency_us).epsilon(1e-12));
  }
  // A bound read from an input (no data in the estimate): one iteration.
  CHECK(vector_instructions(profile(Loop::fori_from_data, 4)) == vector_instructions(profile(Loop::static_range, 1)));
  // A while_loop whose condition is known: init 3, then 0 after the first iteration.
  CHECK(vector_instructions(profile(Loop::while_moves, 3)) == vector_instructions(profile(Loop::static_range, 1)));
  CHECK(vector_instructions(profile(Loop::while_moves, 0)) == vector_instructions(profile(Loop::static_range, 1)) - 1);
}
