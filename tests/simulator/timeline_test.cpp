/** \file The scheduler: dependencies wait (with the 100-cycle semaphore latency), independent engines overlap, HBM is shared. */
#include "test_support.h"

#include "nki/kernels.h"
#include "nki/simulator/cost_model.h"

namespace nl = nki::language;

namespace {

const nki::sim::Event& event_of(const nki::sim::ProfileReport& r, const std::string& op, int nth = 0) {
  for (const nki::sim::Event& e : r.cores.at(0).events)
    if (r.ops[e.op] == op && nth-- == 0) return e;
  FAIL("no event " << op);
  static nki::sim::Event none;
  return none;
}

constexpr double kEps = 1e-12;
/** One [128, 512] bf16 DMA on trn1: 1.3 us + 131072 B at a quarter of 27 GB/s. */
const double kDma128x512 = 1.3 + 131072.0 / (27e3 * 0.25);

}  // namespace

TEST_CASE("timeline - tensor_add, one instance on trn1: two loads in parallel, the add, then the store") {
  const nki::Kernel& k = nki::kernels::tensor_add();
  const auto r = nki::profile(k[1, 1], {{{128, 512}, nki::DType::bf16}, {{128, 512}, nki::DType::bf16}}, "trn1");
  REQUIRE(r.cores.size() == 1);
  const auto& la = event_of(r, "load", 0);
  const auto& lb = event_of(r, "load", 1);
  const auto& add = event_of(r, "add");
  const auto& st = event_of(r, "store");
  CHECK(la.queue == 4);  // DMA queue 0
  CHECK(lb.queue == 5);  // DMA queue 1: the loads run side by side
  // A DMA event is the interval its bytes move: after the 1.3 us fixed cost from when it was ready.
  CHECK(la.start_us == doctest::Approx(1.3).epsilon(kEps));
  CHECK(lb.start_us == doctest::Approx(1.3).epsilon(kEps));
  CHECK(la.end_us == doctest::Approx(kDma128x512).epsilon(kEps));
  CHECK(lb.end_us == doctest::Approx(kDma128x512).epsilon(kEps));
  // The add waits for both loads plus 100 Vector cycles of semaphore latency, and takes 512 + 60 cycles.
  CHECK(add.start_us == doctest::Approx(kDma128x512 + 100 / 1120.0).epsilon(kEps));
  CHECK(add.end_us == doctest::Approx(kDma128x512 + 672 / 1120.0).epsilon(kEps));
  CHECK(st.start_us == doctest::Approx(add.end_us + 1.3).epsilon(kEps));
  CHECK(r.latency_us == doctest::Approx(2 * kDma128x512 + 672 / 1120.0).epsilon(kEps));
  CHECK(r.dma_bytes == 3 * 131072);
  CHECK(r.instructions == 4);
  CHECK(r.flops == 0);
  CHECK(r.cores[0].engines[static_cast<int>(nki::sim::Engine::vector)].busy_us == doctest::Approx(572 / 1120.0).epsilon(kEps));
}

TEST_CASE("timeline - Scalar and Vector work on the same input overlap, a chain on one engine does not") {
  const nki::Kernel k = nki::jit("fan_out", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    auto t = nl::load(a.all());  // (128, 512) bf16
    auto e = nl::exp(nl::exp(t));  // Scalar, Scalar
    auto m = t * 3.0f;             // Vector, independent of e
    nl::store(out.all(), e + m);
    return out;
  });
  const auto r = nki::profile(k.launch({}), {{{128, 512}, nki::DType::bf16}}, "trn2");
  const auto& load = event_of(r, "load");
  const auto& e1 = event_of(r, "exp", 0);
  const auto& e2 = event_of(r, "exp", 1);
  const auto& mul = event_of(r, "multiply");
  CHECK(e1.start_us == doctest::Approx(load.end_us + 100 / 1200.0).epsilon(kEps));
  CHECK(mul.start_us == doctest::Approx(load.end_us + 100 / 960.0).epsilon(kEps));
  CHECK(mul.start_us < e1.end_us);  // concurrent engines
  CHECK(e2.start_us == doctest::Approx(e1.end_us).epsilon(kEps));  // same queue: no semaphore wait
  CHECK(e2.end_us == doctest::Approx(e1.end_us + 572 / 1200.0).epsilon(kEps));
}

TEST_CASE("timeline - on NeuronCore-v2 Vector and GpSimd share the SBUF port, on trn2 they overlap") {
  // A memset (Vector) and an iota (GpSimd) that need nothing: both could start at 0.
  const nki::Kernel k = nki::jit("vector_and_gpsimd", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    auto z = nl::zeros({nl::par_dim(128), 512}, nl::float32, nl::sbuf, "z");
    auto i = nki::isa::iota(nl::arange(128)[nl::_, nl::newaxis] * 512 + nl::arange(512)[nl::newaxis, nl::_], nl::float32);
    nl::store(out.all(), z.all() + i);
    return out;
  });
  for (const char* target : {"trn1", "trn2"}) {
    CAPTURE(target);
    const auto r = nki::profile(k.launch({}), {{{128, 512}, nki::DType::fp32}}, target);
    const auto& memset = event_of(r, "memset");
    const auto& iota = event_of(r, "iota");
    CHECK(memset.start_us == 0.0);
    if (std::string(target) == "trn1") CHECK(iota.start_us == memset.end_us);
    else CHECK(iota.start_us == 0.0);
  }
}

TEST_CASE("timeline - the cores of a chip share its HBM bandwidth") {
  // Each instance copies a [128, 2048] fp32 tile (1 MiB, 8 KiB per partition: full queue speed).
  // 16 instances on one core of trn1 stream through all 820 GB/s; with 16 more on the second core
  // each core gets 410 GB/s, and the same work per core takes longer (the stores wait on the shared pipe).
  const nki::Kernel k = nki::jit("wide_copy", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto rows = nl::ds(nl::program_id(0) * 128, 128);
    nl::store(out[rows, nl::_], nl::load(a[rows, nl::_]));
    return out;
  });
  const auto one = nki::profile(k[16], {{{16 * 128, 2048}, nki::DType::fp32}}, "trn1");
  const auto two = nki::profile(k[nl::spmd_dim(16, nl::nc(2))], {{{32 * 128, 2048}, nki::DType::fp32}}, "trn1");
  REQUIRE(one.cores.size() == 1);
  REQUIRE(two.cores.size() == 2);
  CHECK(two.cores[0].dma_bytes == one.cores[0].dma_bytes);
  CHECK(two.cores[0].latency_us == doctest::Approx(two.cores[1].latency_us).epsilon(kEps));
  CHECK(two.cores[0].latency_us > one.cores[0].latency_us);
}
