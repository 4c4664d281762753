/** \file The scheduler sees a placed array's shared blocks: a write into a reused buffer waits for the reads of the block it replaces. */
#include "test_support.h"

#include "nki/simulator/cost_model.h"

namespace nl = nki::language;
namespace ncc = nki::compiler;

namespace {

/** buf[0] = t * 2; e = exp(buf[0]); buf[1] = t * 3; with `tiles` physical blocks of buf. */
nki::sim::ProfileReport reuse_profile(std::int64_t tiles) {
  const nki::Kernel k = nki::jit("placed_reuse", [tiles](nl::tensor a) {
    auto out = nl::ndarray({128, 512}, nl::float32, nl::shared_hbm, "out");
    auto buf = nl::ndarray({2, nl::par_dim(128), 512}, nl::float32,
                           ncc::sbuf::mod_alloc({.base_addr = 0, .num_free_tiles = {tiles}}), "buf");
    auto t = nl::load(a.all());  // (128, 512)
    buf[0, nl::_, nl::_] = t * 2.0f;
    auto e = nl::exp(buf[0, nl::_, nl::_]);
    buf[1, nl::_, nl::_] = t * 3.0f;
    nl::store(out.all(), e + buf[1, nl::_, nl::_]);
    return out;
  });
  return nki::profile(k.launch({}), {{{128, 512}, nki::DType::fp32}}, "trn2");
}

const nki::sim::Event& nth_event(const nki::sim::ProfileReport& r, const std::string& op, int nth) {
  for (const nki::sim::Event& e : r.cores.at(0).events)
    if (r.ops[e.op] == op && nth-- == 0) return e;
  FAIL("no event " << op);
  static nki::sim::Event none;
  return none;
}

}  // namespace

TEST_CASE("cost model - with one physical block the write of block 1 waits for the exp reading block 0, with two it does not") {
  const auto shared = reuse_profile(1), apart = reuse_profile(2);
  // One block: the Vector write of buf[1] (the second multiply) waits for the Scalar exp that
  // reads buf[0] in the same memory, plus 100 Vector cycles of semaphore latency (0.96 GHz).
  const nki::sim::Event& exp_shared = nth_event(shared, "exp", 0);
  CHECK(nth_event(shared, "multiply", 1).start_us == doctest::Approx(exp_shared.end_us + 100 / 960.0).epsilon(1e-12));
  // Two blocks: it follows the first multiply on the Vector queue, while the exp still runs.
  const nki::sim::Event& second_apart = nth_event(apart, "multiply", 1);
  CHECK(second_apart.start_us == doctest::Approx(nth_event(apart, "multiply", 0).end_us).epsilon(1e-12));
  CHECK(second_apart.start_us < nth_event(apart, "exp", 0).end_us);
}
