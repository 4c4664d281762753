/**
 * \file isa::core_barrier and isa::sendrecv in the cost model: the barrier is one semaphore wait on
 * the engine that runs it (the others go on), sendrecv a DMA transfer, or a GpSimd instruction
 * with gpsimd_dma.
 */
#include "test_support.h"

#include "nki/profile.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::sim::Engine;

namespace {

constexpr double kEps = 1e-12;

const nki::sim::Event& event_of(const nki::sim::ProfileReport& r, int core, const std::string& op) {
  for (const nki::sim::Event& e : r.cores.at(static_cast<std::size_t>(core)).events)
    if (r.ops[e.op] == op) return e;
  FAIL("no event " << op);
  static nki::sim::Event none;
  return none;
}

/** Each core stores its half of a into `shared`, meets the other at the barrier on `engine`, then reads the whole. */
nki::Kernel halves(isa::engine engine) {
  return nki::jit("barrier_halves_cost", [engine](nl::tensor a) {
    auto shared = nl::ndarray({128, 512}, nl::float32, nl::shared_hbm, "shared");
    auto out = nl::ndarray({2, 64, 512}, nl::float32, nl::shared_hbm, "out");
    auto ip = nl::arange(64)[nl::_, nl::newaxis];
    auto jf = nl::arange(512)[nl::newaxis, nl::_];
    auto row = nl::program_id(0) * 64 + ip;
    auto t = nl::load(a[row, jf]);  // (64, 512)
    nl::store(shared[row, jf], t);
    isa::core_barrier(shared, {0, 1}, {.engine = engine});
    auto m = t * 3.0f;  // Vector: needs nothing the barrier orders
    auto other = nl::load(shared[(1 - nl::program_id(0)) * 64 + ip, jf]);
    nl::store(out[nl::program_id(0), ip, jf], other + m);
    return out;
  });
}

}  // namespace

TEST_CASE("core_barrier cost - 100 cycles on GpSimd after the data's writes, later reads wait, Vector goes on") {
  const auto r = nki::profile(halves(isa::gpsimd_engine)[nl::nc(2)], {{{128, 512}, nki::DType::fp32}}, "trn2");
  REQUIRE(r.cores.size() == 2);
  for (int c = 0; c < 2; ++c) {
    CAPTURE(c);
    const auto& store = event_of(r, c, "store");
    const auto& barrier = event_of(r, c, "core_barrier");
    const auto& mul = event_of(r, c, "multiply");
    CHECK(barrier.queue == static_cast<int>(Engine::gpsimd));
    CHECK(barrier.start_us == doctest::Approx(store.end_us).epsilon(kEps));  // once this core's half is written
    CHECK(barrier.end_us == doctest::Approx(store.end_us + 100 / 1200.0).epsilon(kEps));  // GpSimd at 1.2 GHz
    CHECK(mul.start_us < barrier.start_us);  // another engine: not blocked
    // The read of the other core's half waits for the barrier.
    bool after = false;
    for (const nki::sim::Event& e : r.cores[static_cast<std::size_t>(c)].events)
      if (r.ops[e.op] == "load" && e.start_us >= barrier.end_us) after = true;
    CHECK(after);
    CHECK(r.cores[static_cast<std::size_t>(c)].engines[static_cast<int>(Engine::gpsimd)].instructions == 1);
  }
}

TEST_CASE("core_barrier cost - engine = vector blocks the Vector queue: the multiply after it waits") {
  const auto r = nki::profile(halves(isa::vector_engine)[nl::nc(2)], {{{128, 512}, nki::DType::fp32}}, "trn2");
  REQUIRE(r.cores.size() == 2);
  const auto& barrier = event_of(r, 0, "core_barrier");
  const auto& mul = event_of(r, 0, "multiply");
  CHECK(barrier.queue == static_cast<int>(Engine::vector));
  CHECK(barrier.end_us - barrier.start_us == doctest::Approx(100 / 960.0).epsilon(kEps));  // Vector at 0.96 GHz
  CHECK(mul.start_us >= barrier.end_us);
  CHECK(r.cores[0].engines[static_cast<int>(Engine::gpsimd)].instructions == 0);
}

TEST_CASE("sendrecv cost - one DMA transfer of the tile, or 150 + N GpSimd cycles with gpsimd_dma") {
  const auto swap = [](isa::dma_engine engine) {
    return nki::jit("swap_cost", [engine](nl::tensor a) {
      auto out = nl::ndarray({2, 128, 256}, nl::float32, nl::shared_hbm, "out");
      auto ip = nl::arange(128)[nl::_, nl::newaxis];
      auto jf = nl::arange(256)[nl::newaxis, nl::_];
      auto mine = nl::ndarray({128, 256}, nl::float32, nl::sbuf, "mine");
      auto theirs = nl::ndarray({128, 256}, nl::float32, nl::sbuf, "theirs");
      mine[ip, jf] = nl::load(a[nl::program_id(0), ip, jf]);
      isa::sendrecv(mine, theirs, 1 - nl::program_id(0), 1 - nl::program_id(0), 0, {.dma_engine = engine});
      nl::store(out[nl::program_id(0), ip, jf], nl::copy(theirs[ip, jf]));
      return out;
    });
  };
  const nki::sim::TargetSpec& trn2 = nki::sim::target_spec("trn2");
  auto instruction = [&](isa::dma_engine engine) {
    const auto ir = swap(engine).trace({{2, 128, 256}}, {nki::DType::fp32}, nki::GridSpec{{nki::GridAxis(std::vector<nki::GridFactor>{{2, true}})}})->ir;
    for (std::size_t i = 0; i < ir->body.size(); ++i) {
      nki::sim::Instruction in;
      if (std::holds_alternative<nki::ir::CollectiveOp>(ir->body[i]) && nki::sim::instruction_of(*ir, i, trn2, in)) return in;
    }
    FAIL("no sendrecv instruction");
    return nki::sim::Instruction{};
  };
  const nki::sim::Instruction dma = instruction(isa::dma_engine::dma);
  CHECK(dma.engine == Engine::dma);
  CHECK(dma.dma_bytes == 128 * 256 * 4);
  // 1.3 us + 131072 B over 16 queues x 23 GB/s, at e = 1024 B per partition / 4096 = 1/4.
  CHECK(dma.duration_us == doctest::Approx(1.3 + 131072.0 / (368e3 * 0.25)).epsilon(1e-9));
  const nki::sim::Instruction gpsimd = instruction(isa::dma_engine::gpsimd_dma);
  CHECK(gpsimd.engine == Engine::gpsimd);
  CHECK(gpsimd.cycles == 150 + 256);
  CHECK(gpsimd.dma_bytes == 0);
  // Scheduled: the transfer starts once src is loaded, and the copy of dst after it ends.
  const auto r = nki::profile(swap(isa::dma_engine::gpsimd_dma)[nl::nc(2)], {{{2, 128, 256}, nki::DType::fp32}}, "trn2");
  const auto& load = event_of(r, 1, "load");
  const auto& send = event_of(r, 1, "sendrecv");
  const auto& copy = event_of(r, 1, "copy");
  CHECK(send.queue == static_cast<int>(Engine::gpsimd));
  CHECK(send.start_us == doctest::Approx(load.end_us).epsilon(kEps));
  CHECK(send.end_us == doctest::Approx(load.end_us + 406 / 1200.0).epsilon(kEps));
  CHECK(copy.start_us >= send.end_us);
}
