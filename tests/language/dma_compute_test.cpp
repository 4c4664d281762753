/** \file isa::dma_compute: sources summed by the DMA engines in fp32, rounded once into dst; errors; cost. */
#include "lang_support.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

TEST_CASE("isa::dma_compute - HBM and SBUF sources of mixed dtypes summed left to right in fp32 into HBM and SBUF") {
  const nki::Kernel k = nki::jit("dma_compute", [](nl::tensor a, nl::tensor b, nl::tensor c) {
    auto o1 = nl::ndarray(a.shape(), nl::bfloat16, nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "o2");
    auto sb = nl::ndarray(a.shape(), nl::float32, nl::sbuf, "sb");
    auto acc = nl::ndarray(a.shape(), nl::float32, nl::sbuf, "acc");
    sb.all() = nl::load(b.all());
    isa::dma_compute(o1.all(), {a.all(), sb.all(), c.all()}, nl::add);
    isa::dma_compute(acc.all(), {c.all(), a.all()}, nl::add, {.scales = {1.0, 1.0}});
    nl::store(o2.all(), acc);
    return std::make_tuple(o1, o2);
  });
  const std::int64_t p = 64, f = 48;
  const auto n = static_cast<std::size_t>(p * f);
  const std::vector<float> a = lt::as_dtype(test::random_floats(n, 41), DType::bf16);
  const std::vector<float> b = test::random_floats(n, 42);
  const std::vector<float> c = lt::as_dtype(test::random_floats(n, 43), DType::fp16);
  std::vector<double> w1(n), w2(n);
  for (std::size_t i = 0; i < n; ++i) {
    w1[i] = lt::fadd(lt::fadd(a[i], b[i]), c[i]);
    w2[i] = lt::fadd(c[i], a[i]);
  }
  lt::check_both(k, lt::no_grid(),
                 {lt::make({p, f}, DType::bf16, a), lt::make({p, f}, DType::fp32, b), lt::make({p, f}, DType::fp16, c)},
                 {w1, w2}, "dma_compute");
}

namespace {
const char* kFile = "tests/language/dma_compute_test.cpp";

template <class F>
std::string misuse(F body) {
  const nki::Kernel k = nki::jit("compute_misuse", [&](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    body(a, out);
    return out;
  });
  return test::user_error_of([&] { k(lt::make({8, 16}, DType::fp32, test::random_floats(128, 5))); });
}
}  // namespace

TEST_CASE("isa::dma_compute - misuse names NKI's error") {
  int line = 0;
  std::string e = misuse([&](nl::tensor a, nl::tensor out) {
    line = __LINE__ + 1;
    isa::dma_compute(out.all(), {a.all(), a.all()}, nl::multiply);
  });
  CHECK(e == fmt::format("compute_misuse ({}:{}): err_unsupported_reduction_op: isa::dma_compute: reduce_op multiply is not "
                         "supported; the DMA engines reduce with nl::add only", kFile, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    line = __LINE__ + 1;
    isa::dma_compute(out.all(), {a.all(), a.all()}, nl::add, {.scales = {1.0, 2.0}});
  });
  CHECK(e == fmt::format("compute_misuse ({}:{}): err_unsupported_scale: isa::dma_compute: scale 2 is not supported; every "
                         "scale must be 1.0", kFile, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    line = __LINE__ + 1;
    isa::dma_compute(out.all(), std::vector<nl::access>(17, a.all()), nl::add);
  });
  CHECK(e == fmt::format("compute_misuse ({}:{}): err_invalid_shape: isa::dma_compute: 17 source tensors; it takes 1 to 16",
                         kFile, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    line = __LINE__ + 1;
    isa::dma_compute(out.all(), {a.all(), a[nl::ds(0, 4), nl::_]}, nl::add);
  });
  CHECK(e == fmt::format("compute_misuse ({}:{}): err_store_shape_mismatch: isa::dma_compute: source 1 has shape [4,16]; "
                         "source 0 has [8,16]", kFile, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    line = __LINE__ + 1;
    isa::dma_compute(out.all(), {a.all()}, nl::add, {.unique_indices = false});
  });
  CHECK(e == fmt::format("compute_misuse ({}:{}): err_unsupported_unique_indices: isa::dma_compute: unique_indices=False is "
                         "not supported", kFile, line));
}

TEST_CASE("isa::dma_compute cost - one DMA reading every source, no compute engine") {
  const nki::Kernel k = nki::jit("dma_compute_cost", [](nl::tensor a, nl::tensor b) {
    auto o = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o");
    isa::dma_compute(o.all(), {a.all(), b.all()}, nl::add);
    return o;
  });
  const auto ir = k.trace({{128, 512}, {128, 512}}, {DType::fp32, DType::fp32}, nki::GridSpec{})->ir;
  const nki::sim::ProfileReport r = nki::sim::estimate(*ir, {{0, {{}}}}, nki::sim::target_spec("trn2"), false);
  const auto& eng = r.cores.at(0).engines;
  CHECK(eng[static_cast<std::size_t>(nki::sim::Engine::dma)].instructions == 1);
  CHECK(eng[static_cast<std::size_t>(nki::sim::Engine::vector)].instructions == 0);
  CHECK(eng[static_cast<std::size_t>(nki::sim::Engine::scalar)].instructions == 0);
  CHECK(r.dma_bytes == 2 * 128 * 512 * 4);
}
