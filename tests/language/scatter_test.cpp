/** \file isa::dma_copy to an indirect destination (NKI's vector_offset on dst): rows scattered by an index tile, oob_mode, duplicates, errors, cost. */
#include "lang_support.h"
#include "nki/ir/passes.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

/** `n` distinct rows of [0, rows), shuffled (seeded). */
std::vector<float> distinct_rows(std::size_t n, std::size_t rows, std::uint32_t seed) {
  std::vector<float> all(rows);
  for (std::size_t r = 0; r < rows; ++r) all[r] = static_cast<float>(r);
  std::mt19937 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(n);
  return all;
}

}  // namespace

TEST_CASE("isa::dma_copy scatter - partitions go to the rows a uint32 index tile names, random, seeded") {
  // 64 partitions of data [64, 24] fp32 go to distinct rows of o1 [200, 24] bf16 (from an SBUF
  // tile: fp32 -> bf16 on the way) and their columns 8..15 to o2 [200, 8] fp32 (straight from HBM).
  const nki::Kernel k = nki::jit("scatter_rows", [](nl::tensor data, nl::tensor idx) {
    auto o1 = nl::full({200, 24}, -1.0, nl::bfloat16, nl::shared_hbm, "o1");
    auto o2 = nl::full({200, 8}, -2.0, nl::float32, nl::shared_hbm, "o2");
    auto i = nl::load(idx.all());
    auto x = nl::load(data.all());  // (64, 24)
    isa::dma_copy(isa::indirect(o1[nl::ds(0, 64), nl::_], i), x);
    isa::dma_copy(isa::indirect(o2[nl::ds(0, 64), nl::_], i), data[nl::_, nl::ds(8, 8)]);
    return std::make_tuple(o1, o2);
  });
  for (std::uint32_t seed : {5u, 6u}) {
    CAPTURE(seed);
    const std::vector<float> data = test::random_floats(64 * 24, 60 + seed);
    const std::vector<float> idx = distinct_rows(64, 200, 70 + seed);
    std::vector<double> w1(200 * 24, -1.0), w2(200 * 8, -2.0);
    for (std::size_t p = 0; p < 64; ++p) {
      const auto row = static_cast<std::size_t>(idx[p]);
      for (std::size_t j = 0; j < 24; ++j) w1[row * 24 + j] = data[p * 24 + j];
      for (std::size_t j = 0; j < 8; ++j) w2[row * 8 + j] = data[p * 24 + 8 + j];
    }
    lt::check_both(k, lt::no_grid(), {lt::make({64, 24}, DType::fp32, data), lt::make({64, 1}, DType::uint32, idx)},
                   {w1, w2}, "scatter");
  }
}

TEST_CASE("isa::dma_copy scatter - the window's row start from the program id, nc(2) x 2 instances") {
  // Instance pid scatters its 16 rows of data into rows pid * 16 + idx[pid * 16 + p] of out.
  const nki::Kernel k = nki::jit("scatter_grid", [](nl::tensor data, nl::tensor idx) {
    auto out = nl::ndarray({64, 8}, nl::float32, nl::shared_hbm, "out");
    auto ip = nl::program_id(0) * 16 + nl::arange(16)[nl::_, nl::newaxis];
    auto i = nl::load(idx[ip, nl::arange(1)[nl::newaxis, nl::_]]);
    auto x = nl::load(data[ip, nl::arange(8)[nl::newaxis, nl::_]]);  // (16, 8)
    isa::dma_copy(isa::indirect(out[ip, nl::arange(8)[nl::newaxis, nl::_]], i), x);
    return out;
  });
  const std::vector<float> data = test::random_floats(64 * 8, 31);
  std::vector<float> idx;
  for (std::uint32_t pid = 0; pid < 4; ++pid)
    for (float r : distinct_rows(16, 16, 40 + pid)) idx.push_back(r);
  std::vector<double> want(64 * 8);
  for (std::size_t q = 0; q < 64; ++q) {
    const std::size_t row = q / 16 * 16 + static_cast<std::size_t>(idx[q]);
    for (std::size_t j = 0; j < 8; ++j) want[row * 8 + j] = data[q * 8 + j];
  }
  const std::vector<nki::Tensor> args = {lt::make({64, 8}, DType::fp32, data), lt::make({64, 1}, DType::int32, idx)};
  const nki::GridSpec grid{{nl::nc(2) * 2}};
  lt::check_both(k, grid, args, want, "scatter nc(2)*2");
  const nki::LaunchResult checked = k.launch(grid).with({nki::Executor::reference, nullptr, true}).run(args);
  lt::check_exact(checked.outputs.at(0), want, "scatter nc(2)*2 [checked]");
}

TEST_CASE("isa::dma_copy scatter - duplicate rows: the last partition's data stays, checked mode names both partitions") {
  int line = 0;
  const nki::Kernel k = nki::jit("scatter_duplicates", [&](nl::tensor data, nl::tensor idx) {
    auto out = nl::zeros({8, 4}, nl::float32, nl::shared_hbm, "out");
    line = __LINE__ + 1;
    isa::dma_copy(isa::indirect(out[nl::ds(0, 8), nl::_], nl::load(idx.all())), data.all());
    return out;
  });
  const std::vector<float> data = test::random_floats(8 * 4, 12);
  const std::vector<float> idx = {2, 5, 2, 0, 1, 5, 2, 3};  // row 2: partitions 0, 2, 6; row 5: 1, 5
  std::vector<double> want(8 * 4, 0.0);
  for (std::size_t p = 0; p < 8; ++p)
    for (std::size_t j = 0; j < 4; ++j) want[static_cast<std::size_t>(idx[p]) * 4 + j] = data[p * 4 + j];
  const std::vector<nki::Tensor> args = {lt::make({8, 4}, DType::fp32, data), lt::make({8, 1}, DType::uint32, idx)};
  lt::check_both(k, lt::no_grid(), args, want, "scatter duplicates");
  const std::string e =
      test::user_error_of([&] { (void)k.launch(lt::no_grid()).with({nki::Executor::reference, nullptr, true}).run(args); });
  CHECK(e == fmt::format("scatter_duplicates (tests/language/scatter_test.cpp:{}): err_unexpected_output_dependencies: "
                         "partitions 0 and 2 of one scatter both write element [2,0] of tensor out [8,4]: the last "
                         "partition's value stays; give each partition its own row, or use nl::atomic_rmw to accumulate",
                         line));
}

TEST_CASE("isa::dma_copy scatter - oob_mode skip writes nothing for the row, error stops the kernel in both executors") {
  const nki::Kernel skip = nki::jit("scatter_skip", [](nl::tensor data, nl::tensor idx) {
    auto out = nl::full({10, 4}, 7.0, nl::float32, nl::shared_hbm, "out");
    isa::dma_copy(isa::indirect(out[nl::ds(2, 8), nl::_], nl::load(idx.all())), data.all(),
                  {.oob_mode = isa::oob_mode::skip});
    return out;
  });
  const std::vector<float> data = test::random_floats(8 * 4, 91);
  // the window starts at row 2: offsets 3, 7 land on rows 5 and 9; 8, 9 and 4e9 fall outside
  const std::vector<float> idx = {3, 8, 0, 7, 4000000000.0f, 1, 9, 4};
  std::vector<double> want(10 * 4, 7.0);
  for (std::size_t p = 0; p < 8; ++p) {
    const double row = 2.0 + idx[p];
    if (row >= 10) continue;
    for (std::size_t j = 0; j < 4; ++j) want[static_cast<std::size_t>(row) * 4 + j] = data[p * 4 + j];
  }
  const std::vector<nki::Tensor> args = {lt::make({8, 4}, DType::fp32, data), lt::make({8, 1}, DType::uint32, idx)};
  lt::check_both(skip, lt::no_grid(), args, want, "scatter skip");

  int line = 0;
  const nki::Kernel error = nki::jit("scatter_error", [&](nl::tensor d, nl::tensor i) {
    auto out = nl::full({10, 4}, 7.0, nl::float32, nl::shared_hbm, "out");
    line = __LINE__ + 1;
    isa::dma_copy(isa::indirect(out[nl::ds(2, 8), nl::_], nl::load(i.all())), d.all());
    return out;
  });
  for (int mode = 0; mode < 3; ++mode) {  // compiled, reference, checked
    CAPTURE(mode);
    const nki::LaunchOptions opts{mode == 0 ? nki::Executor::halide : nki::Executor::reference, nullptr, mode == 2};
    const std::string e = test::user_error_of([&] { (void)error.launch(lt::no_grid()).with(opts).run(args); });
    CHECK(e == fmt::format("scatter_error (tests/language/scatter_test.cpp:{}): err_tensor_access_out_of_bound: an "
                           "indirect access of tensor out takes index 10 on dimension 0, outside [0, 10) (oob_mode.error; "
                           "oob_mode.skip skips such rows)",
                           line));
  }
}

TEST_CASE("isa::dma_copy scatter - misuse names NKI's error") {
  const char* file = "tests/language/scatter_test.cpp";
  int line = 0;
  auto misuse = [](auto body) { return lt::misuse_error_8x16("scatter_misuse", body); };
  std::string e = misuse([&](nl::tensor a, nl::tensor out) {
    auto i = nl::copy(nl::load(a[nl::_, nl::ds(0, 1)]), {.dtype = nl::uint32});
    line = __LINE__ + 1;
    isa::dma_copy(isa::indirect(out.all(), i), a.all(), {.dge_mode = isa::dge_mode::hwdge});
  });
  CHECK(e == fmt::format("scatter_misuse ({}:{}): err_unsupported_dge_mode: isa::dma_copy: an indirect destination needs "
                         "dge_mode swdge (or unknown); got hwdge", file, line));
  e = misuse([&](nl::tensor a, nl::tensor) {
    auto s = nl::ndarray({8, 16}, nl::float32, nl::sbuf, "s");
    auto i = nl::copy(nl::load(a[nl::_, nl::ds(0, 1)]), {.dtype = nl::uint32});
    line = __LINE__ + 1;
    isa::dma_copy(isa::indirect(s.all(), i), a.all());
  });
  CHECK(e == fmt::format("scatter_misuse ({}:{}): err_unsupported_memory: isa::dma_copy: the indirectly indexed tensor s "
                         "is in sbuf; it must be in HBM", file, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    auto x = nl::load(a.all());
    line = __LINE__ + 1;
    isa::dma_copy(isa::indirect(out.all(), x[nl::_, nl::ds(0, 1)]), x);
  });
  CHECK(e == fmt::format("scatter_misuse ({}:{}): err_unsupported_dtype: isa::dma_copy: the index tile is fp32; it must "
                         "hold integers", file, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    auto i = nl::copy(nl::load(a.all()), {.dtype = nl::uint32});
    line = __LINE__ + 1;
    isa::dma_copy(isa::indirect(out.all(), i), a.all());
  });
  CHECK(e == fmt::format("scatter_misuse ({}:{}): err_invalid_shape: isa::dma_copy: the index tile is [8,16]; a vector "
                         "offset is one row index per partition, [8, 1]", file, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    auto i = nl::copy(nl::load(a[nl::_, nl::ds(0, 1)]), {.dtype = nl::uint32});
    line = __LINE__ + 1;
    isa::dma_copy(isa::indirect(out.all(), i, 1), a.all());
  });
  CHECK(e == fmt::format("scatter_misuse ({}:{}): err_unsupported_indirect_dim: isa::dma_copy: indirect_dim 1; a vector "
                         "offset indexes dimension 0, one row per partition", file, line));
}

TEST_CASE("isa::dma_copy scatter cost - one DMA, its descriptors written by GpSimd (software DGE)") {
  const nki::Kernel k = nki::jit("scatter_cost", [](nl::tensor data, nl::tensor idx) {
    auto o = nl::zeros({1000, 64}, nl::float32, nl::shared_hbm, "o");
    isa::dma_copy(isa::indirect(o[nl::ds(0, 128), nl::_], nl::load(idx.all())), data.all());
    return o;
  });
  const auto ir = k.trace({{128, 64}, {128, 1}}, {DType::fp32, DType::uint32}, nki::GridSpec{})->ir;
  const nki::sim::ProfileReport r = nki::sim::estimate(*ir, {{0, {{}}}}, nki::sim::target_spec("trn2"), false);
  const auto& eng = r.cores.at(0).engines;
  CHECK(eng[static_cast<std::size_t>(nki::sim::Engine::dma)].instructions == 2);  // the index load, the scatter
  CHECK(eng[static_cast<std::size_t>(nki::sim::Engine::gpsimd)].instructions == 1);
}

TEST_CASE("isa::dma_copy scatter and nl::atomic_rmw - the IR's store carries the index tile") {
  const nki::Kernel k = nki::jit("scatter_ir", [](nl::tensor data, nl::tensor idx) {
    auto o = nl::zeros({100, 8}, nl::float32, nl::shared_hbm, "o");
    auto i = nl::load(idx.all());
    auto x = nl::load(data.all());
    isa::dma_copy(isa::indirect(o[nl::ds(4, 16), nl::_], i), x, {.oob_mode = isa::oob_mode::skip});
    nl::atomic_rmw(isa::indirect(o[nl::ds(0, 16), nl::_], i), x, nl::add);
    return o;
  });
  const std::string text = nki::ir::print(*k.trace({{16, 8}, {16, 1}}, {DType::fp32, DType::int32}, nki::GridSpec{})->ir);
  CAPTURE(text);
  CHECK(text.find("  store %o[4, i1] indirect(dim 0 += %t0), %t1\n") != std::string::npos);
  CHECK(text.find("  atomic_add %o[0, i1] indirect(dim 0 += %t0 oob_error), %t1\n") != std::string::npos);
}
