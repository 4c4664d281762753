/** \file isa::nc_n_gather and nl::gather_flattened: per-partition gathers by index tiles, out-of-bound indices, errors, cost. */
#include "lang_support.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {
/** Host: out[p, j] = data[p, flat idx[p, j]] (data's free dimensions flattened). */
std::vector<double> host_gather(const std::vector<float>& data, std::int64_t per_partition, const std::vector<float>& idx,
                                std::int64_t n) {
  std::vector<double> out(idx.size());
  for (std::size_t i = 0; i < idx.size(); ++i) {
    const std::int64_t p = static_cast<std::int64_t>(i) / n;
    out[i] = data[static_cast<std::size_t>(p * per_partition + static_cast<std::int64_t>(idx[i]))];
  }
  return out;
}
}  // namespace

TEST_CASE("isa::nc_n_gather and nl::gather_flattened - random indices over 3-D data, seeded") {
  // data [P, 4, 16] bf16 (64 elements per partition); indices [P, 40]: uint32 for nc_n_gather,
  // int32 for gather_flattened (converted to fp32 there).
  const nki::Kernel k = nki::jit("gathers", [](nl::tensor d, nl::tensor iu, nl::tensor ii) {
    auto o1 = nl::ndarray(iu.shape(), d.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(ii.shape(), nl::float32, nl::shared_hbm, "o2");
    auto data = nl::load(d.all());
    nl::store(o1.all(), isa::nc_n_gather(data, nl::load(iu.all())));
    nl::store(o2.all(), nl::gather_flattened(data, nl::load(ii.all()), 0, nl::float32));
    return std::make_tuple(o1, o2);
  });
  const std::int64_t p = 96, per = 64, n = 40;
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    const std::vector<float> data = lt::as_dtype(test::random_floats(static_cast<std::size_t>(p * per), 100 + seed), DType::bf16);
    const std::vector<float> iu = lt::random_ints(static_cast<std::size_t>(p * n), 200 + seed, 0, static_cast<int>(per - 1));
    const std::vector<float> ii = lt::random_ints(static_cast<std::size_t>(p * n), 300 + seed, 0, static_cast<int>(per - 1));
    lt::check_both(k, lt::no_grid(),
                   {lt::make({p, 4, 16}, DType::bf16, data), lt::make({p, n}, DType::uint32, iu), lt::make({p, n}, DType::int32, ii)},
                   {host_gather(data, per, iu, n), host_gather(data, per, ii, n)}, "gathers");
  }
}

TEST_CASE("isa::nc_n_gather - an index past the partition's elements is err_tensor_access_out_of_bound in both executors and checked mode") {
  int line = 0;
  const nki::Kernel k = nki::jit("gather_oob", [&](nl::tensor d, nl::tensor i) {
    auto o = nl::ndarray(i.shape(), d.dtype(), nl::shared_hbm, "o");
    line = __LINE__ + 1;
    nl::store(o.all(), isa::nc_n_gather(nl::load(d.all()), nl::load(i.all())));
    return o;
  });
  std::vector<float> idx = lt::random_ints(8 * 4, 9, 0, 31);
  idx[13] = 32;
  const std::vector<nki::Tensor> args = {lt::make({8, 32}, DType::fp32, test::random_floats(8 * 32, 8)),
                                         lt::make({8, 4}, DType::uint32, idx)};
  for (int mode = 0; mode < 3; ++mode) {  // compiled, reference, checked
    CAPTURE(mode);
    const nki::LaunchOptions opts{mode == 0 ? nki::Executor::halide : nki::Executor::reference, nullptr, mode == 2};
    const std::string e = test::user_error_of([&] { (void)k.launch(lt::no_grid()).with(opts).run(args); });
    CHECK(e == fmt::format("gather_oob (tests/language/gather_test.cpp:{}): err_tensor_access_out_of_bound: "
                           "isa::nc_n_gather: index 32 is outside [0, 32), the elements of a partition of the data "
                           "(oob_mode.error; oob_mode.skip leaves such elements unchanged)",
                           line));
  }
}

namespace {
const char* kFile = "tests/language/gather_test.cpp";

template <class F>
std::string misuse(F body) {
  const nki::Kernel k = nki::jit("gather_misuse", [&](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    nl::store(out.all(), body(nl::load(a.all())));
    return out;
  });
  return test::user_error_of([&] { k(lt::make({8, 16}, DType::fp32, test::random_floats(128, 5))); });
}
}  // namespace

TEST_CASE("isa::nc_n_gather and nl::gather_flattened - misuse names NKI's error") {
  int line = 0;
  std::string e = misuse([&](nl::tile x) {
    line = __LINE__ + 1;
    return isa::nc_n_gather(x, x);
  });
  CHECK(e == fmt::format("gather_misuse ({}:{}): err_unsupported_dtype: isa::nc_n_gather: indices are fp32; the "
                         "instruction takes uint32 indices", kFile, line));
  e = misuse([&](nl::tile x) {
    auto i = nl::copy(x[nl::ds(0, 4), nl::_], {.dtype = nl::uint32});
    line = __LINE__ + 1;
    return isa::nc_n_gather(x, i);
  });
  CHECK(e == fmt::format("gather_misuse ({}:{}): err_num_partition_mismatch: isa::nc_n_gather: data has 8 partitions and "
                         "indices 4; they must be equal", kFile, line));
  e = misuse([&](nl::tile x) {
    auto ps = nl::copy(x, {.dtype = nl::float32});
    auto m = nl::matmul(x, x, true);
    line = __LINE__ + 1;
    return isa::nc_n_gather(m, nl::copy(ps, {.dtype = nl::uint32}));
  });
  CHECK(e.find("err_unsupported_memory: isa::nc_n_gather: data is in PSUM; GpSimd reads SBUF only") != std::string::npos);
  e = misuse([&](nl::tile x) {
    line = __LINE__ + 1;
    return nl::gather_flattened(x, nl::copy(x, {.dtype = nl::int32}), 1);
  });
  CHECK(e == fmt::format("gather_misuse ({}:{}): err_unsupported_gather_axis: nl::gather_flattened: axis 1 is not "
                         "supported; the gather runs along the flattened free dimensions of each partition (axis 0)",
                         kFile, line));
  e = misuse([&](nl::tile x) {
    line = __LINE__ + 1;
    return nl::gather_flattened(x, x);
  });
  CHECK(e == fmt::format("gather_misuse ({}:{}): err_unsupported_dtype: nl::gather_flattened: indices are fp32; they "
                         "must be integers", kFile, line));
}

TEST_CASE("isa::nc_n_gather cost - GpSimd, one instruction group per 512 elements of a partition") {
  const nki::Kernel k = nki::jit("gather_cost", [](nl::tensor d, nl::tensor i) {
    auto o = nl::ndarray(i.shape(), d.dtype(), nl::shared_hbm, "o");
    nl::store(o.all(), isa::nc_n_gather(nl::load(d.all()), nl::load(i.all())));
    return o;
  });
  const auto ir = k.trace({{128, 64}, {128, 1000}}, {DType::fp32, DType::uint32}, nki::GridSpec{})->ir;
  bool found = false;
  for (std::size_t at = 0; at < ir->body.size(); ++at) {
    if (!std::holds_alternative<nki::ir::GatherOp>(ir->body[at])) continue;
    nki::sim::Instruction in;
    REQUIRE(nki::sim::instruction_of(*ir, at, nki::sim::target_spec("trn2"), in));
    CHECK(in.engine == nki::sim::Engine::gpsimd);
    CHECK(in.cycles == 2 * nki::sim::gpsimd_cycles(0) + 1000 + nki::sim::kAccessBubbleCycles);
    found = true;
  }
  CHECK(found);
}
