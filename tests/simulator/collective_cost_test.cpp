/**
 * \file The cost of in-kernel collectives: ring steps of DMA transfers over all of a core's DMA
 * queues, within a chip at the DMA (or HBM) bandwidth, across chips at the NeuronLink share;
 * exact latencies from the documented constants, and the collective on every core's timeline.
 */
#include "test_support.h"

#include "nki/profile.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
namespace nc = nki::collectives;
using nki::DType;
using nki::sim::CollectiveShape;
using nki::sim::CoreWork;
using nki::sim::Engine;

namespace {

constexpr double kEps = 1e-12;
// trn2 (docs/reference.md, "Targets"): DMA fixed cost 1.3 us; 16 queues x 23 GB/s = 368 GB/s
// per core; HBM 2900 GB/s and NeuronLink 1280 GB/s per chip, split among the busy cores.
constexpr double kFixed = 1.3;
constexpr double kTrn2Dma = 16 * 23e3;  // bytes per us
constexpr double kTrn2Hbm = 2900e3, kTrn2Link = 1280e3;

int all_reduce_line = 0;  // the line of nc::all_reduce in all_reduce_kernel, for the timeline checks

/** out = the group's x summed, in HBM. */
nki::Kernel all_reduce_kernel() {
  return nki::jit("ring_all_reduce", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    all_reduce_line = __LINE__; nc::all_reduce({x}, {out}, {}, nl::add);
    return out;
  });
}

/** out = the group's g srcs concatenated along dim 0. */
nki::Kernel all_gather_kernel(std::int64_t g) {
  return nki::jit("ring_all_gather", [g](nl::tensor x) {
    auto out = nl::ndarray({x.shape()[0] * g, x.shape()[1]}, x.dtype(), nl::shared_hbm, "out");
    nc::all_gather({x}, {out}, {}, 0);
    return out;
  });
}

/** The kernel's IR for [rows, cols] fp32 input in a world of `world` ranks. */
std::shared_ptr<const nki::ir::KernelIR> ir_of(const nki::Kernel& k, nki::Shape shape, int world) {
  return k.trace({std::move(shape)}, {DType::fp32}, nki::GridSpec{}, 3, world)->ir;
}

/** `cores` cores of one chip, one instance each, core c running rank c in a group of `group`. */
std::vector<CoreWork> chip_cores(int cores, CollectiveShape group) {
  std::vector<CoreWork> work;
  for (int c = 0; c < cores; ++c) work.push_back({c, {std::vector<std::int64_t>{}}, c, 0, {group}});
  return work;
}

std::vector<nki::sim::Event> events_named(const nki::sim::ProfileReport& r, const nki::sim::CoreProfile& c,
                                          const std::string& op) {
  std::vector<nki::sim::Event> out;
  for (const nki::sim::Event& e : c.events)
    if (r.ops[e.op] == op) out.push_back(e);
  return out;
}

}  // namespace

TEST_CASE("collective cost - all_reduce of 8 ranks on one chip: 14 ring steps of an eighth, at the core's HBM share") {
  // x [256, 1024] fp32 = 1048576 bytes; a ring all-reduce of G = 8 is 2(G-1) = 14 steps of
  // 1048576 / 8 = 131072 bytes. All 8 cores busy: HBM 2900 / 8 = 362.5 GB/s per core, below
  // the DMA queues' 368 GB/s, so each step is 1.3 + 131072 / 362.5e3 us.
  const auto ir = ir_of(all_reduce_kernel(), {256, 1024}, 8);
  const auto r = nki::sim::estimate(*ir, chip_cores(8, {8, 1}), nki::sim::target_spec("trn2"), false);
  const double step = kFixed + 131072.0 / (kTrn2Hbm / 8);
  REQUIRE(r.cores.size() == 8);
  for (const auto& c : r.cores) {
    CHECK(c.latency_us == doctest::Approx(14 * step).epsilon(kEps));
    CHECK(c.dma_bytes == 14 * 131072);
    const auto& dma = c.engines[static_cast<int>(Engine::dma)];
    CHECK(dma.instructions == 1);
    CHECK(dma.utilization == doctest::Approx(1.0).epsilon(kEps));  // it holds every DMA queue throughout
    CHECK(c.engines[static_cast<int>(Engine::vector)].instructions == 0);  // the DMA engines reduce
  }
  CHECK(r.latency_us == doctest::Approx(14 * 1.3 + 14 * 131072.0 / 362.5e3).epsilon(kEps));  // 23.262091 us
}

TEST_CASE("collective cost - the same group of 8 spread over 4 chips: every step at the core's NeuronLink share") {
  // This chip's 8 cores each in a group of 8 on 4 chips: each ring step crosses a link, and
  // the chip's 1280 GB/s split 8 ways is 160 GB/s, below the 368 of the DMA queues: each
  // step is 1.3 + 131072 / 160e3 = 2.1192 us, 14 of them 29.6688 us.
  const auto ir = ir_of(all_reduce_kernel(), {256, 1024}, 8);
  const auto& trn2 = nki::sim::target_spec("trn2");
  const auto one_chip = nki::sim::estimate(*ir, chip_cores(8, {8, 1}), trn2, false);
  const auto four_chips = nki::sim::estimate(*ir, chip_cores(8, {8, 4}), trn2, false);
  CHECK(four_chips.latency_us == doctest::Approx(14 * (kFixed + 131072.0 / (kTrn2Link / 8))).epsilon(kEps));
  CHECK(four_chips.latency_us == doctest::Approx(29.6688).epsilon(kEps));
  CHECK(four_chips.latency_us > one_chip.latency_us);
  CHECK(four_chips.dma_bytes == one_chip.dma_bytes);  // the same bytes, over a slower path
}

TEST_CASE("collective cost - all_gather: G-1 steps of the src, so a larger group costs more") {
  // src [128, 1024] fp32 = 524288 bytes. One busy core: HBM 2900 GB/s, so the DMA queues'
  // 368 GB/s bind: each step is 1.3 + 524288 / 368e3 = 2.724696 us.
  const auto& trn2 = nki::sim::target_spec("trn2");
  const double step = kFixed + 524288.0 / kTrn2Dma;
  double last = 0;
  for (int g : {2, 4, 8}) {
    CAPTURE(g);
    const auto ir = ir_of(all_gather_kernel(g), {128, 1024}, g);
    const auto r = nki::sim::estimate(*ir, chip_cores(1, {g, 1}), trn2, false);
    CHECK(r.latency_us == doctest::Approx((g - 1) * step).epsilon(kEps));
    CHECK(r.dma_bytes == (g - 1) * 524288);
    CHECK(r.latency_us > last);
    last = r.latency_us;
  }
}

TEST_CASE("collective cost - across trn1 chips the NeuronLink-v2 share binds (384 GB/s, below 16 x 27 GB/s)") {
  // One busy trn1 core, a group of 2 on 2 chips: one step of 524288 bytes at min(432, 384) GB/s.
  const auto ir = ir_of(all_gather_kernel(2), {128, 1024}, 2);
  const auto r = nki::sim::estimate(*ir, chip_cores(1, {2, 2}), nki::sim::target_spec("trn1"), false);
  CHECK(r.latency_us == doctest::Approx(1.3 + 524288.0 / 384e3).epsilon(kEps));  // 2.665333 us
  const auto local = nki::sim::estimate(*ir, chip_cores(1, {2, 1}), nki::sim::target_spec("trn1"), false);
  CHECK(local.latency_us == doctest::Approx(1.3 + 524288.0 / (16 * 27e3)).epsilon(kEps));  // 2.513630 us
}

TEST_CASE("collective cost - reduce_scatter, all_to_all and the permutes: their step counts and bytes") {
  const auto& trn2 = nki::sim::target_spec("trn2");
  const double step = kFixed + 524288.0 / kTrn2Dma;  // one busy core: the DMA queues bind
  // reduce_scatter of [512, 1024] fp32 over 4: G-1 = 3 steps of the dst, [128, 1024] = 524288 bytes.
  const nki::Kernel rs = nki::jit("ring_reduce_scatter", [](nl::tensor x) {
    auto out = nl::ndarray({x.shape()[0] / 4, x.shape()[1]}, x.dtype(), nl::shared_hbm, "out");
    nc::reduce_scatter({x}, {out}, {}, 0, nl::add);
    return out;
  });
  CHECK(nki::sim::estimate(*ir_of(rs, {512, 1024}, 4), chip_cores(1, {4, 1}), trn2, false).latency_us ==
        doctest::Approx(3 * step).epsilon(kEps));
  // all_to_all of [512, 1024] fp32 over 4: 3 steps of src / 4 = 524288 bytes.
  const nki::Kernel a2a = nki::jit("ring_all_to_all", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nc::all_to_all({x}, {out}, {}, 0);
    return out;
  });
  CHECK(nki::sim::estimate(*ir_of(a2a, {512, 1024}, 4), chip_cores(1, {4, 1}), trn2, false).latency_us ==
        doctest::Approx(3 * step).epsilon(kEps));
  // collective_permute of [128, 1024] fp32: one step of the src for a rank that sends or receives.
  const nki::Kernel swap = nki::jit("pair_swap", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nc::collective_permute({x}, {out}, {{0, 1}, {1, 0}});
    return out;
  });
  const auto swap_ir = ir_of(swap, {128, 1024}, 3);
  CHECK(nki::sim::estimate(*swap_ir, chip_cores(1, {2, 1}), trn2, false).latency_us ==
        doctest::Approx(step).epsilon(kEps));
  // Rank 2 is in no pair: it moves nothing, so the permute is no instruction there.
  const auto idle = nki::sim::estimate(*swap_ir, {{2, {std::vector<std::int64_t>{}}, 2, 0, {{1, 1}}}}, trn2, false);
  CHECK(idle.latency_us == 0.0);
  CHECK(idle.instructions == 0);
  // collective_permute_implicit over a ring of 4: one step of the src.
  const nki::Kernel ring = nki::jit("ring_shift", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nc::collective_permute_implicit({{x}}, {{out}}, {});
    return out;
  });
  CHECK(nki::sim::estimate(*ir_of(ring, {128, 1024}, 4), chip_cores(1, {4, 1}), trn2, false).latency_us ==
        doctest::Approx(step).epsilon(kEps));
}

TEST_CASE("collective cost - a group of one (a plain launch) is one local copy of the bytes") {
  // nki::profile runs a world of one rank: dst = src, one transfer of 1048576 bytes on the one
  // busy core at 368 GB/s: 1.3 + 1048576 / 368e3 = 4.149391 us.
  const auto r = nki::profile(all_reduce_kernel().launch({}), {{{256, 1024}, DType::fp32}}, "trn2");
  REQUIRE(r.cores.size() == 1);
  CHECK(r.latency_us == doctest::Approx(kFixed + 1048576.0 / kTrn2Dma).epsilon(kEps));
  CHECK(r.dma_bytes == 1048576);
  CHECK(r.instructions == 1);
  // The same op priced alone (sim::instruction_of) is that group of one.
  const auto ir = ir_of(all_reduce_kernel(), {256, 1024}, 1);
  for (std::size_t i = 0; i < ir->body.size(); ++i) {
    if (!std::holds_alternative<nki::ir::CollectiveOp>(ir->body[i])) continue;
    nki::sim::Instruction in;
    REQUIRE(nki::sim::instruction_of(*ir, i, nki::sim::target_spec("trn2"), in));
    CHECK(in.engine == Engine::dma);
    CHECK(in.dma_bytes == 1048576);
    CHECK(in.duration_us == doctest::Approx(kFixed + 1048576.0 / kTrn2Dma).epsilon(kEps));
  }
}

TEST_CASE("collective cost - the collective is on every core's timeline, on each DMA queue, with its name and line") {
  const auto ir = ir_of(all_reduce_kernel(), {256, 1024}, 8);
  const auto r = nki::sim::estimate(*ir, chip_cores(8, {8, 1}), nki::sim::target_spec("trn2"), true);
  REQUIRE(r.cores.size() == 8);
  for (const auto& c : r.cores) {
    CAPTURE(c.nc);
    const auto events = events_named(r, c, "all_reduce");
    REQUIRE(events.size() == 16);  // one per DMA queue it holds
    for (int q = 0; q < 16; ++q) {
      CHECK(events[static_cast<std::size_t>(q)].queue == 4 + q);
      CHECK(events[static_cast<std::size_t>(q)].start_us == 0.0);
      CHECK(events[static_cast<std::size_t>(q)].end_us == doctest::Approx(c.latency_us).epsilon(kEps));
    }
    const nki::SourceLoc& loc = r.op_locs[events[0].op];
    CHECK(loc.line == all_reduce_line);
    CHECK(loc.file.ends_with("collective_cost_test.cpp"));
  }
  const std::string trace = nki::sim::chrome_trace_json(r);
  CHECK(trace.find("\"name\":\"all_reduce\"") != std::string::npos);
  CHECK(trace.find(fmt::format("collective_cost_test.cpp:{}", all_reduce_line)) != std::string::npos);
}

TEST_CASE("collective cost - it waits for its srcs to be written, and readers of its dsts wait for it") {
  const auto& trn2 = nki::sim::target_spec("trn2");
  constexpr std::int64_t P = 128, F = 1024;
  // SBUF: mine = load(x) (one DMA queue: 524288 bytes, 4096 per partition, 1.3 + 524288 / 23e3 us),
  // then an all_reduce of 2 ranks (2 steps of 262144 bytes at 368 GB/s), then a Vector copy of sum.
  const nki::Kernel sbuf = nki::jit("sbuf_ring_all_reduce", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    auto ip = nl::arange(P)[nl::_, nl::newaxis];
    auto jf = nl::arange(F)[nl::newaxis, nl::_];
    auto mine = nl::ndarray({P, F}, DType::fp32, nl::sbuf, "mine");
    auto sum = nl::ndarray({P, F}, DType::fp32, nl::sbuf, "sum");
    mine[ip, jf] = nl::load(x[ip, jf]);
    nc::all_reduce({mine}, {sum}, {}, nl::add);
    nl::store(out[ip, jf], nl::copy(sum[ip, jf]));
    return out;
  });
  const auto r = nki::sim::estimate(*ir_of(sbuf, {P, F}, 2), chip_cores(1, {2, 1}), trn2, true);
  const auto& c = r.cores.at(0);
  const auto load = events_named(r, c, "load").at(0);
  const auto ar = events_named(r, c, "all_reduce").at(0);
  const double load_end = kFixed + 524288.0 / 23e3;
  CHECK(load.end_us == doctest::Approx(load_end).epsilon(kEps));
  CHECK(ar.start_us == doctest::Approx(load_end).epsilon(kEps));
  CHECK(ar.end_us == doctest::Approx(load_end + 2 * (kFixed + 262144.0 / kTrn2Dma)).epsilon(kEps));
  const nki::sim::Event* copy = nullptr;
  for (const auto& e : c.events)
    if (e.queue == static_cast<int>(Engine::vector)) copy = &e;
  REQUIRE(copy != nullptr);
  CHECK(copy->start_us == doctest::Approx(ar.end_us + 100 / 960.0).epsilon(kEps));  // semaphore wait, 0.96 GHz

  // HBM: a load of the dst starts when the collective ends.
  const nki::Kernel hbm = nki::jit("hbm_ring_all_reduce", [](nl::tensor x) {
    auto sum = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "sum");
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nc::all_reduce({x}, {sum}, {}, nl::add);
    auto ip = nl::arange(P)[nl::_, nl::newaxis];
    auto jf = nl::arange(F)[nl::newaxis, nl::_];
    nl::store(out[ip, jf], nl::load(sum[ip, jf]));
    return out;
  });
  const auto h = nki::sim::estimate(*ir_of(hbm, {P, F}, 2), chip_cores(1, {2, 1}), trn2, true);
  const auto& hc = h.cores.at(0);
  const auto har = events_named(h, hc, "all_reduce").at(0);
  CHECK(har.end_us == doctest::Approx(2 * (kFixed + 262144.0 / kTrn2Dma)).epsilon(kEps));
  // (its bytes move after the fixed cost)
  CHECK(events_named(h, hc, "load").at(0).start_us == doctest::Approx(har.end_us + kFixed).epsilon(kEps));
}
