/** \file isa::dma_copy from an indirect source (NKI's vector_offset): rows gathered by an index tile, oob_mode, errors, cost. */
#include "lang_support.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

TEST_CASE("isa::dma_copy indirect - rows of an HBM tensor chosen by a uint32 index tile, random, seeded") {
  // data [200, 24] bf16; 64 partitions each gather the row its index names, into SBUF and then
  // HBM; a second copy gathers columns 8..15 of the rows into fp32 directly in HBM.
  const nki::Kernel k = nki::jit("indirect_gather", [](nl::tensor data, nl::tensor idx) {
    auto o1 = nl::ndarray({64, 24}, nl::bfloat16, nl::shared_hbm, "o1");
    auto o2 = nl::ndarray({64, 8}, nl::float32, nl::shared_hbm, "o2");
    auto b = nl::ndarray({64, 24}, nl::bfloat16, nl::sbuf, "b");
    auto i = nl::load(idx.all());
    isa::dma_copy(b.all(), isa::indirect(data[nl::ds(0, 64), nl::_], i));
    isa::dma_copy(o1.all(), b.all());
    isa::dma_copy(o2.all(), isa::indirect(data[nl::ds(0, 64), nl::ds(8, 8)], i));
    return std::make_tuple(o1, o2);
  });
  for (std::uint32_t seed : {5u, 6u}) {
    CAPTURE(seed);
    const std::vector<float> data = lt::as_dtype(test::random_floats(200 * 24, 60 + seed), DType::bf16);
    const std::vector<float> idx = lt::random_ints(64, 70 + seed, 0, 199);
    std::vector<double> w1, w2;
    for (int p = 0; p < 64; ++p) {
      const auto row = static_cast<std::size_t>(idx[static_cast<std::size_t>(p)]);
      for (std::size_t j = 0; j < 24; ++j) w1.push_back(data[row * 24 + j]);
      for (std::size_t j = 8; j < 16; ++j) w2.push_back(data[row * 24 + j]);
    }
    lt::check_both(k, lt::no_grid(), {lt::make({200, 24}, DType::bf16, data), lt::make({64, 1}, DType::uint32, idx)},
                   {w1, w2}, "indirect gather");
  }
}

TEST_CASE("isa::dma_copy indirect - oob_mode skip leaves the partition, error stops the kernel in both executors") {
  const nki::Kernel skip = nki::jit("indirect_skip", [](nl::tensor data, nl::tensor idx) {
    auto o = nl::ndarray({8, 4}, nl::float32, nl::shared_hbm, "o");
    auto b = nl::ndarray({8, 4}, nl::float32, nl::sbuf, "b");
    isa::memset(b.all(), -1.0);
    isa::dma_copy(b.all(), isa::indirect(data[nl::ds(0, 8), nl::_], nl::load(idx.all())), {.oob_mode = isa::oob_mode::skip});
    nl::store(o.all(), b);
    return o;
  });
  const std::vector<float> data = test::random_floats(10 * 4, 90);
  const std::vector<float> idx = {3, 10, 0, 9, 4000000000.0f, 7, 12, 1};
  std::vector<double> want;
  for (float r : idx)
    for (std::size_t j = 0; j < 4; ++j) want.push_back(r < 10 ? data[static_cast<std::size_t>(r) * 4 + j] : -1.0);
  const std::vector<nki::Tensor> args = {lt::make({10, 4}, DType::fp32, data), lt::make({8, 1}, DType::uint32, idx)};
  lt::check_both(skip, lt::no_grid(), args, want, "indirect skip");

  int line = 0;
  const nki::Kernel error = nki::jit("indirect_error", [&](nl::tensor d, nl::tensor i) {
    auto o = nl::ndarray({8, 4}, nl::float32, nl::shared_hbm, "o");
    line = __LINE__ + 1;
    isa::dma_copy(o.all(), isa::indirect(d[nl::ds(0, 8), nl::_], nl::load(i.all())));
    return o;
  });
  for (int mode = 0; mode < 3; ++mode) {  // compiled, reference, checked
    CAPTURE(mode);
    const nki::LaunchOptions opts{mode == 0 ? nki::Executor::halide : nki::Executor::reference, nullptr, mode == 2};
    const std::string e = test::user_error_of([&] { (void)error.launch(lt::no_grid()).with(opts).run(args); });
    CHECK(e == fmt::format("indirect_error (tests/language/indirect_dma_test.cpp:{}): err_tensor_access_out_of_bound: an "
                           "indirect access of tensor in0 takes index 10 on dimension 0, outside [0, 10) (oob_mode.error; "
                           "oob_mode.skip skips such rows)",
                           line));
  }
}

TEST_CASE("isa::dma_copy indirect - misuse names NKI's error") {
  const char* file = "tests/language/indirect_dma_test.cpp";
  int line = 0;
  auto misuse = [](auto body) {
    const nki::Kernel k = nki::jit("indirect_misuse", [&](nl::tensor a) {
      auto out = nl::ndarray({8, 16}, nl::float32, nl::shared_hbm, "out");
      body(a, out);
      return out;
    });
    return test::user_error_of([&] { k(lt::make({8, 16}, DType::fp32, test::random_floats(128, 5))); });
  };
  std::string e = misuse([&](nl::tensor a, nl::tensor out) {
    auto x = nl::load(a.all());
    line = __LINE__ + 1;
    isa::dma_copy(out.all(), isa::indirect(a.all(), x[nl::_, nl::ds(0, 1)]));
  });
  CHECK(e == fmt::format("indirect_misuse ({}:{}): err_unsupported_dtype: isa::dma_copy: the index tile is fp32; it must "
                         "hold integers", file, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    auto i = nl::copy(nl::load(a.all()), {.dtype = nl::uint32});
    line = __LINE__ + 1;
    isa::dma_copy(out.all(), isa::indirect(a.all(), i));
  });
  CHECK(e == fmt::format("indirect_misuse ({}:{}): err_invalid_shape: isa::dma_copy: the index tile is [8,16]; a vector "
                         "offset is one row index per partition, [8, 1]", file, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    auto s = nl::ndarray({8, 16}, nl::float32, nl::sbuf, "s");
    s.all() = nl::load(a.all());
    auto i = nl::copy(nl::load(a[nl::_, nl::ds(0, 1)]), {.dtype = nl::uint32});
    line = __LINE__ + 1;
    isa::dma_copy(out.all(), isa::indirect(s.all(), i));
  });
  CHECK(e == fmt::format("indirect_misuse ({}:{}): err_unsupported_memory: isa::dma_copy: the indirectly indexed tensor s "
                         "is in sbuf; it must be in HBM", file, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    auto i = nl::copy(nl::load(a[nl::_, nl::ds(0, 1)]), {.dtype = nl::uint32});
    line = __LINE__ + 1;
    isa::dma_copy(out.all(), isa::indirect(a.all(), i), {.dge_mode = isa::dge_mode::hwdge});
  });
  CHECK(e == fmt::format("indirect_misuse ({}:{}): err_unsupported_dge_mode: isa::dma_copy: an indirect source needs "
                         "dge_mode swdge (or unknown); got hwdge", file, line));
}

TEST_CASE("isa::dma_copy indirect cost - one DMA, its descriptors written by GpSimd (software DGE)") {
  const nki::Kernel k = nki::jit("indirect_cost", [](nl::tensor data, nl::tensor idx) {
    auto o = nl::ndarray({128, 64}, nl::float32, nl::shared_hbm, "o");
    isa::dma_copy(o.all(), isa::indirect(data[nl::ds(0, 128), nl::_], nl::load(idx.all())));
    return o;
  });
  const auto ir = k.trace({{1000, 64}, {128, 1}}, {DType::fp32, DType::uint32}, nki::GridSpec{})->ir;
  const nki::sim::ProfileReport r = nki::sim::estimate(*ir, {{0, {{}}}}, nki::sim::target_spec("trn2"), false);
  const auto& eng = r.cores.at(0).engines;
  CHECK(eng[static_cast<std::size_t>(nki::sim::Engine::dma)].instructions == 2);  // the index load, the gather
  CHECK(eng[static_cast<std::size_t>(nki::sim::Engine::gpsimd)].instructions == 1);
}
