/** \file isa::dma_copy and its enums: copies between HBM and SBUF windows, the fp32 conversion, its errors, its cost. */
#include "lang_support.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

TEST_CASE("isa::dma_copy - HBM to SBUF, SBUF to SBUF, SBUF to HBM, HBM to HBM and from a tile") {
  const nki::Kernel k = nki::jit("dma_copy_paths", [](nl::tensor a) {
    auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o2");
    auto o3 = nl::ndarray({64, 32}, a.dtype(), nl::shared_hbm, "o3");
    auto b1 = nl::ndarray(a.shape(), a.dtype(), nl::sbuf, "b1");
    auto b2 = nl::ndarray(a.shape(), a.dtype(), nl::sbuf, "b2");
    isa::dma_copy(b1.all(), a.all());
    isa::dma_copy(b2.all(), b1.all(), {.dge_mode = isa::dge_mode::swdge});
    isa::dma_copy(o1.all(), b2.all(), {.priority = 2, .dge_mode = isa::dge_mode::hwdge, .engine = isa::scalar_engine});
    isa::dma_copy(o2.all(), a.all(), {.dge_mode = isa::dge_mode::none});
    // A window of a window: rows 32..95, columns 16..47 through a tile.
    isa::dma_copy(o3.all(), nl::load(a[nl::ds(32, 64), nl::ds(16, 32)]));
    return std::make_tuple(o1, o2, o3);
  });
  const std::int64_t p = 128, f = 80;
  const std::vector<float> x = lt::as_dtype(test::random_floats(static_cast<std::size_t>(p * f), 11), DType::bf16);
  const std::vector<double> whole(x.begin(), x.end());
  std::vector<double> part;
  for (std::int64_t i = 32; i < 96; ++i)
    for (std::int64_t j = 16; j < 48; ++j) part.push_back(x[static_cast<std::size_t>(i * f + j)]);
  lt::check_both(k, lt::no_grid(), {lt::make({p, f}, DType::bf16, x)}, {whole, whole, part}, "dma_copy paths");
}

TEST_CASE("isa::dma_copy - a dtype change goes through fp32, as the DMA engines convert") {
  // int32 -> bf16 via fp32: 16777217 first becomes 16777216 in fp32, then bf16 rounds that.
  const nki::Kernel k = nki::jit("dma_copy_convert", [](nl::tensor a) {
    auto o = nl::ndarray(a.shape(), nl::bfloat16, nl::shared_hbm, "o");
    auto o2 = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "o2");
    auto b = nl::ndarray(a.shape(), nl::float16, nl::sbuf, "b");
    isa::dma_copy(o.all(), a.all());
    isa::dma_copy(b.all(), a.all());
    isa::dma_copy(o2.all(), b.all());
    return std::make_tuple(o, o2);
  });
  const std::vector<std::int32_t> ints = {16777217, -16777219, 3, 70000, 65519, -5, 1 << 30, 0};
  std::vector<float> in;
  std::vector<double> w1, w2;
  for (std::int32_t v : ints) {
    const float f32 = static_cast<float>(v);
    w1.push_back(nki::round_to_dtype(f32, DType::bf16));
    w2.push_back(nki::round_to_dtype(f32, DType::fp16));
  }
  nki::Tensor t({2, 4}, DType::int32);
  std::memcpy(t.data(), ints.data(), ints.size() * 4);
  lt::check_both(k, lt::no_grid(), {t}, {w1, w2}, "dma_copy convert");
}

namespace {
const char* kFile = "tests/language/dma_copy_test.cpp";

template <class F>
std::string misuse(F body) {
  const nki::Kernel k = nki::jit("dma_misuse", [&](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    body(a, out);
    return out;
  });
  return test::user_error_of([&] { k(lt::make({8, 16}, DType::fp32, test::random_floats(128, 5))); });
}
}  // namespace

TEST_CASE("isa::dma_copy - misuse names NKI's error") {
  int line = 0;
  std::string e = misuse([&](nl::tensor a, nl::tensor out) {
    auto ps = nl::ndarray({8, 16}, nl::float32, nl::psum, "ps");
    line = __LINE__ + 1;
    isa::dma_copy(ps.all(), a.all());
    isa::dma_copy(out.all(), a.all());
  });
  CHECK(e == fmt::format("dma_misuse ({}:{}): err_unsupported_memory: isa::dma_copy: the destination tensor ps is in PSUM; "
                         "DMA moves HBM and SBUF only", kFile, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    line = __LINE__ + 1;
    isa::dma_copy(out.all(), a.all(), {.engine = isa::scalar_engine});
  });
  CHECK(e == fmt::format("dma_misuse ({}:{}): err_unsupported_engine: isa::dma_copy: engine= picks the sequencer of a "
                         "hardware DGE; it needs dge_mode=hwdge", kFile, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    line = __LINE__ + 1;
    isa::dma_copy(out.all(), a.all(), {.dge_mode = isa::dge_mode::hwdge, .engine = isa::vector_engine});
  });
  CHECK(e == fmt::format("dma_misuse ({}:{}): err_unsupported_engine: isa::dma_copy: a hardware DGE is started by the "
                         "Scalar or the Sync engine (unknown), not vector", kFile, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    line = __LINE__ + 1;
    isa::dma_copy(out.all(), a.all(), {.priority = 4});
  });
  CHECK(e == fmt::format("dma_misuse ({}:{}): err_invalid_dma_priority: isa::dma_copy: priority 4 is not a QoS level 0-3",
                         kFile, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    line = __LINE__ + 1;
    isa::dma_copy(out.all(), a[nl::ds(0, 8), nl::ds(0, 8)]);
  });
  CHECK(e == fmt::format("dma_misuse ({}:{}): err_store_shape_mismatch: store of a tile of shape [8,8] into an access of "
                         "shape [8,16]", kFile, line));
}

namespace {
/** The DMA and engine instructions of a kernel's one core: what each is and where it ran. */
nki::sim::ProfileReport profile(const nki::Kernel& k, const std::vector<nki::Tensor>& args) {
  std::vector<nki::Shape> shapes;
  std::vector<DType> dtypes;
  for (const nki::Tensor& a : args) shapes.push_back(a.shape()), dtypes.push_back(a.dtype());
  const auto ir = k.trace(shapes, dtypes, nki::GridSpec{})->ir;
  return nki::sim::estimate(*ir, {{0, {{}}}}, nki::sim::target_spec("trn2"), true);
}
}  // namespace

TEST_CASE("isa::dma_copy cost - one DMA between SBUF arrays, its descriptors on the engine dge_mode names") {
  auto kernel = [](isa::dge_mode mode) {
    return nki::jit(fmt::format("dma_copy_cost_{}", static_cast<int>(mode)), [mode](nl::tensor a) {
      auto o = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o");
      auto b1 = nl::ndarray(a.shape(), a.dtype(), nl::sbuf, "b1");
      auto b2 = nl::ndarray(a.shape(), a.dtype(), nl::sbuf, "b2");
      b1.all() = nl::load(a.all());
      isa::dma_copy(b2.all(), b1.all(),
                    {.dge_mode = mode, .engine = mode == isa::dge_mode::hwdge ? isa::scalar_engine : isa::unknown_engine});
      nl::store(o.all(), b2);
      return o;
    });
  };
  const nki::Tensor x = lt::make({128, 512}, DType::fp32, test::random_floats(128 * 512, 3));
  auto engines = [](const nki::sim::ProfileReport& r) {
    std::array<std::int64_t, 5> n{};
    for (int e = 0; e < 5; ++e) n[static_cast<std::size_t>(e)] = r.cores.at(0).engines[static_cast<std::size_t>(e)].instructions;
    return n;
  };
  const auto dma = static_cast<std::size_t>(nki::sim::Engine::dma);
  const auto gpsimd = static_cast<std::size_t>(nki::sim::Engine::gpsimd);
  const auto scalar = static_cast<std::size_t>(nki::sim::Engine::scalar);
  const auto vector = static_cast<std::size_t>(nki::sim::Engine::vector);
  const nki::sim::ProfileReport none = profile(kernel(isa::dge_mode::none), {x});
  auto n = engines(none);
  CHECK(n[dma] == 3);  // load, the copy, store: the SBUF-to-SBUF copy is a DMA, no Vector tensor_copy
  CHECK(n[vector] == 0);
  CHECK(n[gpsimd] == 0);
  CHECK(none.dma_bytes == 3 * 128 * 512 * 4);
  const nki::sim::ProfileReport sw = profile(kernel(isa::dge_mode::swdge), {x});
  n = engines(sw);
  CHECK(n[dma] == 3);
  CHECK(n[gpsimd] == 1);  // software DGE: GpSimd writes the descriptors
  const double desc_us = static_cast<double>(nki::sim::gpsimd_cycles(128)) / (nki::sim::target_spec("trn2").gpsimd_ghz * 1e3);
  CHECK(sw.cores.at(0).engines[gpsimd].busy_us == doctest::Approx(desc_us));
  CHECK(sw.latency_us > none.latency_us);
  n = engines(profile(kernel(isa::dge_mode::hwdge), {x}));
  CHECK(n[scalar] == 1);  // hardware DGE started by the Scalar engine's sequencer
  CHECK(n[gpsimd] == 0);
}
