/** \file nl::load_transpose2d and isa::dma_transpose: transposes done by the DMA, 2-D to 4-D, their errors and cost. */
#include "lang_support.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {
/** Host: the row-major tensor of `shape` permuted so result axis i is source axis perm[i]. */
std::vector<double> permuted(const std::vector<float>& x, const nki::Shape& shape, const std::vector<int>& perm) {
  nki::Shape out(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) out[i] = shape[static_cast<std::size_t>(perm[i])];
  const std::vector<std::int64_t> st = nki::row_major_strides(shape);
  std::vector<double> r(x.size());
  std::vector<std::int64_t> c(out.size(), 0);
  for (std::size_t flat = 0; flat < r.size(); ++flat) {
    std::int64_t src = 0;
    for (std::size_t i = 0; i < c.size(); ++i) src += c[i] * st[static_cast<std::size_t>(perm[i])];
    r[flat] = x[static_cast<std::size_t>(src)];
    for (std::size_t d = c.size(); d-- > 0;) {
      if (++c[d] < out[d]) break;
      c[d] = 0;
    }
  }
  return r;
}
}  // namespace

TEST_CASE("nl::load_transpose2d - an HBM window loaded transposed, converted on request") {
  const nki::Kernel k = nki::jit("load_transpose2d", [](nl::tensor a) {
    auto o1 = nl::ndarray({96, 48}, nl::bfloat16, nl::shared_hbm, "o1");
    auto o2 = nl::ndarray({16, 8}, nl::float32, nl::shared_hbm, "o2");
    nl::store(o1.all(), nl::load_transpose2d(a.all()));
    nl::store(o2.all(), nl::load_transpose2d(a[nl::ds(4, 8), nl::ds(10, 16)], nl::float32));
    return std::make_tuple(o1, o2);
  });
  const std::vector<float> x = lt::as_dtype(test::random_floats(48 * 96, 21), DType::bf16);
  std::vector<float> win;
  for (int i = 4; i < 12; ++i)
    for (int j = 10; j < 26; ++j) win.push_back(x[static_cast<std::size_t>(i * 96 + j)]);
  lt::check_both(k, lt::no_grid(), {lt::make({48, 96}, DType::bf16, x)},
                 {permuted(x, {48, 96}, {1, 0}), permuted(win, {8, 16}, {1, 0})}, "load_transpose2d");
}

TEST_CASE("isa::dma_transpose - 2-D from SBUF with a hardware DGE, 3-D and 4-D from HBM") {
  const nki::Kernel k = nki::jit("dma_transpose", [](nl::tensor a, nl::tensor b, nl::tensor c) {
    auto o1 = nl::ndarray({100, 16}, nl::bfloat16, nl::shared_hbm, "o1");
    auto o2 = nl::ndarray({32, 8, 4}, nl::float32, nl::shared_hbm, "o2");
    auto o3 = nl::ndarray({5, 3, 4, 2}, nl::float16, nl::shared_hbm, "o3");
    auto s = nl::ndarray({16, 100}, nl::bfloat16, nl::sbuf, "s");
    auto t1 = nl::ndarray({100, 16}, nl::bfloat16, nl::sbuf, "t1");
    auto t2 = nl::ndarray({32, 8, 4}, nl::float32, nl::sbuf, "t2");
    auto t3 = nl::ndarray({5, 3, 4, 2}, nl::float16, nl::sbuf, "t3");
    s.all() = nl::load(a.all());
    isa::dma_transpose(t1.all(), s.all(), {1, 0}, {.dge_mode = isa::dge_mode::hwdge});
    isa::dma_transpose(t2.all(), b.all());
    isa::dma_transpose(t3.all(), c.all(), {3, 1, 2, 0});
    nl::store(o1.all(), t1);
    nl::store(o2.all(), t2);
    nl::store(o3.all(), t3);
    return std::make_tuple(o1, o2, o3);
  });
  const std::vector<float> a = lt::as_dtype(test::random_floats(16 * 100, 22), DType::bf16);
  const std::vector<float> b = test::random_floats(4 * 8 * 32, 23);
  const std::vector<float> c = lt::as_dtype(test::random_floats(2 * 3 * 4 * 5, 24), DType::fp16);
  lt::check_both(k, lt::no_grid(),
                 {lt::make({16, 100}, DType::bf16, a), lt::make({4, 8, 32}, DType::fp32, b),
                  lt::make({2, 3, 4, 5}, DType::fp16, c)},
                 {permuted(a, {16, 100}, {1, 0}), permuted(b, {4, 8, 32}, {2, 1, 0}), permuted(c, {2, 3, 4, 5}, {3, 1, 2, 0})},
                 "dma_transpose");
}

namespace {
const char* kFile = "tests/language/dma_transpose_test.cpp";

template <class F>
std::string misuse(F body) {
  const nki::Kernel k = nki::jit("transpose_misuse", [&](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    body(a);
    nl::store(out.all(), nl::load(a.all()));
    return out;
  });
  return test::user_error_of([&] { k(lt::make({8, 16}, DType::fp32, test::random_floats(128, 5))); });
}
}  // namespace

TEST_CASE("isa::dma_transpose and nl::load_transpose2d - misuse names NKI's error") {
  int line = 0;
  std::string e = misuse([&](nl::tensor a) {
    auto t = nl::ndarray({16, 8}, nl::float32, nl::sbuf, "t");
    line = __LINE__ + 1;
    isa::dma_transpose(t.all(), a.all(), {0, 1});
  });
  CHECK(e == fmt::format("transpose_misuse ({}:{}): err_unsupported_transpose_axes: isa::dma_transpose: axes (0, 1) are not "
                         "supported for a 2-D source; the supported axes are (1, 0)", kFile, line));
  e = misuse([&](nl::tensor a) {
    auto t = nl::ndarray({16, 8}, nl::bfloat16, nl::sbuf, "t");
    line = __LINE__ + 1;
    isa::dma_transpose(t.all(), a.all());
  });
  CHECK(e == fmt::format("transpose_misuse ({}:{}): err_unsupported_dtype: isa::dma_transpose: source dtype fp32 and "
                         "destination dtype bf16 differ; a DMA transpose does not convert", kFile, line));
  e = misuse([&](nl::tensor a) {
    auto t = nl::ndarray({16, 8}, nl::float32, nl::sbuf, "t");
    line = __LINE__ + 1;
    isa::dma_transpose(t.all(), a.all(), {}, {.dge_mode = isa::dge_mode::hwdge});
  });
  CHECK(e == fmt::format("transpose_misuse ({}:{}): err_unsupported_dtype: isa::dma_transpose: a hardware DGE transpose "
                         "moves 2-byte elements; the source is fp32", kFile, line));
  e = misuse([&](nl::tensor a) {
    auto t = nl::ndarray({16, 8}, nl::float32, nl::sbuf, "t");
    line = __LINE__ + 1;
    isa::dma_transpose(t.all(), a.all(), {}, {.dge_mode = isa::dge_mode::swdge});
  });
  CHECK(e == fmt::format("transpose_misuse ({}:{}): err_unsupported_dge_mode: isa::dma_transpose: dge_mode swdge is not "
                         "supported for a direct transpose; use unknown or hwdge", kFile, line));
  e = misuse([&](nl::tensor a) {
    auto t = nl::ndarray({16, 8}, nl::float32, nl::sbuf, "t");
    line = __LINE__ + 1;
    isa::dma_transpose(t.all(), a.all(), {}, {.oob_mode = isa::oob_mode::skip});
  });
  CHECK(e == fmt::format("transpose_misuse ({}:{}): err_unsupported_oob_mode: isa::dma_transpose: oob_mode.skip needs an "
                         "indirect source; this one is affine", kFile, line));
  e = misuse([&](nl::tensor a) {
    line = __LINE__ + 1;
    isa::dma_transpose(a.all(), a.all());
  });
  CHECK(e == fmt::format("transpose_misuse ({}:{}): err_unsupported_memory: isa::dma_transpose: the destination tensor in0 "
                         "is in hbm_input; a DMA transpose writes SBUF", kFile, line));
  e = misuse([&](nl::tensor a) {
    auto t = nl::ndarray({8, 16}, nl::float32, nl::sbuf, "t");
    t.all() = nl::load(a.all());
    line = __LINE__ + 1;
    (void)nl::load_transpose2d(t.all());
  });
  CHECK(e == fmt::format("transpose_misuse ({}:{}): err_unsupported_memory: nl::load_transpose2d reads HBM; tensor t is in "
                         "sbuf", kFile, line));
}

TEST_CASE("isa::dma_transpose cost - one strided DMA, no Tensor engine transpose") {
  const nki::Kernel k = nki::jit("dma_transpose_cost", [](nl::tensor a) {
    auto o = nl::ndarray({128, 64}, nl::bfloat16, nl::shared_hbm, "o");
    auto t = nl::ndarray({128, 64}, nl::bfloat16, nl::sbuf, "t");
    isa::dma_transpose(t.all(), a.all());
    nl::store(o.all(), t);
    return o;
  });
  const auto ir = k.trace({{64, 128}}, {DType::bf16}, nki::GridSpec{})->ir;
  const nki::sim::ProfileReport r = nki::sim::estimate(*ir, {{0, {{}}}}, nki::sim::target_spec("trn2"), false);
  const auto& eng = r.cores.at(0).engines;
  CHECK(eng[static_cast<std::size_t>(nki::sim::Engine::dma)].instructions == 2);
  CHECK(eng[static_cast<std::size_t>(nki::sim::Engine::tensor)].instructions == 0);
  nki::sim::Instruction in;
  bool found = false;
  for (std::size_t i = 0; i < ir->body.size(); ++i) {
    if (!nki::sim::instruction_of(*ir, i, nki::sim::target_spec("trn2"), in) || !in.what.ends_with("transpose")) continue;
    found = true;
    CHECK(in.engine == nki::sim::Engine::dma);
    // Element-wise descriptors: 1/8 of a queue, halved as a strided transfer, for the whole tile.
    CHECK(in.duration_us == doctest::Approx(1.3 + 128 * 64 * 2 / (23e3 * 0.125 * 0.5)));
  }
  CHECK(found);
}
