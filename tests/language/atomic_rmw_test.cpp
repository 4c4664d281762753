/** \file nl::atomic_rmw (NKI's original API): rows of HBM updated by an index tile, duplicates and instances accumulating, checked-mode races, errors, cost. */
#include "lang_support.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

/** Random multiples of `unit` in [-8, 8] * unit / ... (exact in fp32, and their sums exact in double). */
std::vector<float> random_steps(std::size_t n, std::uint32_t seed, float unit) {
  std::vector<float> v = lt::random_ints(n, seed, -64, 64);
  for (float& x : v) x *= unit;
  return v;
}

/** The host: table (rows x cols, every element `init`) += value row p at row idx[p], summed exactly in double. */
std::vector<double> host_accumulate(std::size_t rows, std::size_t cols, double init, const std::vector<float>& values,
                                    const std::vector<float>& idx) {
  std::vector<double> want(rows * cols, init);
  for (std::size_t p = 0; p < idx.size(); ++p)
    for (std::size_t j = 0; j < cols; ++j) want[static_cast<std::size_t>(idx[p]) * cols + j] += values[p * cols + j];
  return want;
}

}  // namespace

TEST_CASE("nl::atomic_rmw - duplicate rows in one index tile all accumulate, random with duplicates, seeded") {
  // 64 partitions add their rows into a table of 12 rows (so most rows are hit several times),
  // in the values' dtype; the window's 64 rows are more than the table's: only its start counts.
  const nki::Kernel k = nki::jit("atomic_duplicates", [](nl::tensor values, nl::tensor idx) {
    auto table = nl::full({12, 16}, 0.5, values.dtype(), nl::shared_hbm, "table");
    auto v = nl::load(values.all());  // (64, 16)
    nl::atomic_rmw(isa::indirect(table[nl::ds(0, 64), nl::_], nl::load(idx.all())), v, nl::add);
    return table;
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    for (std::uint32_t seed : {1u, 2u}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(seed);
      const std::vector<float> values = random_steps(64 * 16, 10 + seed, 0.125f);  // exact in bf16 too
      const std::vector<float> idx = lt::random_ints(64, 20 + seed, 0, 11);
      const std::vector<nki::Tensor> args = {lt::make({64, 16}, dt, values), lt::make({64, 1}, DType::int32, idx)};
      const std::vector<double> want = host_accumulate(12, 16, 0.5, values, idx);
      lt::check_both(k, lt::no_grid(), args, want, "atomic duplicates");
      const nki::LaunchResult checked = k.launch(lt::no_grid()).with({nki::Executor::reference, nullptr, true}).run(args);
      lt::check_exact(checked.outputs.at(0), want, "atomic duplicates [checked]");
    }
  }
}

TEST_CASE("nl::atomic_rmw - the updates sum exactly and round once to dst's dtype") {
  // fp32: 2^24 + 40 x 0.5 is 2^24 + 20 (adding 0.5 to 2^24 one at a time in fp32 would stay at
  // 2^24). bf16: 1 + 32 x 2^-9 is 1.0625 (one at a time in bf16, 1 + 2^-9 rounds back to 1).
  const nki::Kernel k = nki::jit("atomic_round_once", [](nl::tensor values, nl::tensor idx, nl::tensor start) {
    auto table = nl::ndarray({2, 4}, values.dtype(), nl::shared_hbm, "table");
    nl::store(table.all(), nl::load(start.all()));
    nl::atomic_rmw(isa::indirect(table[nl::ds(0, 40), nl::_], nl::load(idx.all())), nl::load(values.all()), nl::add);
    return table;
  });
  struct Case {
    DType dt;
    float start, step;
    double want;
  };
  for (const Case& c : {Case{DType::fp32, 16777216.0f, 0.5f, 16777236.0}, Case{DType::bf16, 1.0f, 0.001953125f, 1.0625}}) {
    CAPTURE(nki::dtype_name(c.dt));
    // partitions 0..31 add `step` to row 0 (40 partitions for fp32); row 1 gets one step from each of the others
    const int into_row0 = c.dt == DType::fp32 ? 40 : 32;
    std::vector<float> idx(40);
    for (int p = 0; p < 40; ++p) idx[static_cast<std::size_t>(p)] = p < into_row0 ? 0.0f : 1.0f;
    const std::vector<float> values(40 * 4, c.step);
    const std::vector<float> start(2 * 4, c.start);
    std::vector<double> want(8, c.want);
    for (std::size_t j = 4; j < 8; ++j) want[j] = static_cast<double>(c.start) + (40 - into_row0) * static_cast<double>(c.step);
    lt::check_both(k, lt::no_grid(),
                   {lt::make({40, 4}, c.dt, values), lt::make({40, 1}, DType::uint32, idx), lt::make({2, 4}, c.dt, start)},
                   want, "atomic round once");
  }
}

TEST_CASE("nl::atomic_rmw - nc(2) x 2 instances accumulate into shared rows, the same result in both executors") {
  // Each of 4 instances (two per core, the cores at the same time) adds its 32 rows of values
  // into a table of 10 rows. Odd partitions carry multiples of 2^17, even ones multiples of 2^-6:
  // summed one at a time in fp32 the result would depend on the order the cores' updates land.
  const nki::Kernel k = nki::jit("atomic_grid", [](nl::tensor values, nl::tensor idx) {
    auto table = nl::full({10, 8}, 0.25, nl::float32, nl::shared_hbm, "table");
    auto ip = nl::program_id(0) * 32 + nl::arange(32)[nl::_, nl::newaxis];
    auto v = nl::load(values[ip, nl::arange(8)[nl::newaxis, nl::_]]);  // (32, 8)
    auto i = nl::load(idx[ip, nl::arange(1)[nl::newaxis, nl::_]]);    // (32, 1)
    nl::atomic_rmw(isa::indirect(table[nl::ds(0, 32), nl::_], i), v, nl::add);
    return table;
  });
  for (std::uint32_t seed : {3u, 4u, 5u}) {
    CAPTURE(seed);
    std::vector<float> values = lt::random_ints(128 * 8, 30 + seed, -100, 100);
    for (std::size_t x = 0; x < values.size(); ++x) values[x] *= (x / 8) % 2 == 1 ? 131072.0f : 0.015625f;
    const std::vector<float> idx = lt::random_ints(128, 40 + seed, 0, 9);
    const std::vector<nki::Tensor> args = {lt::make({128, 8}, DType::fp32, values), lt::make({128, 1}, DType::int32, idx)};
    const std::vector<double> want = host_accumulate(10, 8, 0.25, values, idx);
    const nki::GridSpec grid{{nl::nc(2) * 2}};
    for (int run = 0; run < 3; ++run) lt::check_both(k, grid, args, want, fmt::format("atomic nc(2)*2 run {}", run));
    const nki::LaunchResult checked = k.launch(grid).with({nki::Executor::reference, nullptr, true}).run(args);
    lt::check_exact(checked.outputs.at(0), want, "atomic nc(2)*2 [checked]");
  }
}

TEST_CASE("nl::atomic_rmw - a mask leaves its off partitions out") {
  const nki::Kernel k = nki::jit("atomic_masked", [](nl::tensor values, nl::tensor idx) {
    auto table = nl::zeros({4, 8}, nl::float32, nl::shared_hbm, "table");
    auto ip = nl::arange(16)[nl::_, nl::newaxis];
    nl::atomic_rmw(isa::indirect(table[nl::ds(0, 16), nl::_], nl::load(idx.all())), nl::load(values.all()), nl::add,
                   {.mask = ip < 10});
    return table;
  });
  const std::vector<float> values = random_steps(16 * 8, 7, 0.25f);
  const std::vector<float> idx = lt::random_ints(16, 8, 0, 3);
  const std::vector<float> kept_idx(idx.begin(), idx.begin() + 10);
  lt::check_both(k, lt::no_grid(), {lt::make({16, 8}, DType::fp32, values), lt::make({16, 1}, DType::int32, idx)},
                 host_accumulate(4, 8, 0.0, values, kept_idx), "atomic masked");
}

TEST_CASE("nl::atomic_rmw - checked mode: atomic updates by several instances are no race, a plain store or load of the element by another instance is") {
  // Two instances on one core (instance 0 runs first); each updates row pid + 1 + idx[0] atomically.
  const char* file = "tests/language/atomic_rmw_test.cpp";
  const std::vector<nki::Tensor> args = {lt::make({1, 4}, DType::fp32, {1, 2, 3, 4}), lt::make({1, 1}, DType::int32, {0})};
  const nki::LaunchOptions checked{nki::Executor::reference, nullptr, true};
  int store_line = 0, atomic_line = 0, load_line = 0;
  auto pid = [] { return nl::program_id(0); };
  // Instance 0 updates row 1 atomically; instance 1 then stores row 1 plainly.
  const nki::Kernel store_race = nki::jit("atomic_store_race", [&](nl::tensor values, nl::tensor idx) {
    auto table = nl::zeros({4, 4}, nl::float32, nl::shared_hbm, "table");
    auto v = nl::load(values.all());
    atomic_line = __LINE__ + 1;
    nl::atomic_rmw(isa::indirect(table[nl::ds(pid() + 1, 1), nl::_], nl::load(idx.all())), v, nl::add);
    store_line = __LINE__ + 1;
    nl::store(table[nl::ds(pid(), 1), nl::_], v);
    return table;
  });
  std::string e = test::user_error_of([&] { (void)store_race.launch(lt::grid1(2)).with(checked).run(args); });
  CHECK(e == fmt::format("atomic_store_race ({}:{}): err_instances_write_same_element: element [1,0] of tensor table [4,4] "
                         "is written by instance [0] ({}:{}) and by instance [1] ({}:{})",
                         file, store_line, file, atomic_line, file, store_line));
  // Instance 1 reads row 1, which instance 0 updated atomically: the read finds the update.
  const nki::Kernel read_after = nki::jit("atomic_read_race", [&](nl::tensor values, nl::tensor idx) {
    auto table = nl::zeros({4, 4}, nl::float32, nl::shared_hbm, "table");
    auto copy = nl::ndarray({2, 4}, nl::float32, nl::shared_hbm, "copy");
    atomic_line = __LINE__ + 1;
    nl::atomic_rmw(isa::indirect(table[nl::ds(pid() + 1, 1), nl::_], nl::load(idx.all())), nl::load(values.all()), nl::add);
    load_line = __LINE__ + 1;
    auto row = nl::load(table[nl::ds(pid(), 1), nl::_]);
    nl::store(copy[nl::ds(pid(), 1), nl::_], row);
    return std::make_tuple(table, copy);
  });
  e = test::user_error_of([&] { (void)read_after.launch(lt::grid1(2)).with(checked).run(args); });
  CHECK(e == fmt::format("atomic_read_race ({}:{}): err_instances_write_same_element: element [1,0] of tensor table [4,4] "
                         "is updated by nl::atomic_rmw in instance [0] ({}:{}) and read by instance [1] ({}:{}): the value "
                         "read depends on when the update lands",
                         file, load_line, file, atomic_line, file, load_line));
  // Instance 0 reads row 2 (instance 1 reads row 3), then instance 1 updates row 2: the update finds the read.
  const nki::Kernel read_before = nki::jit("atomic_read_before", [&](nl::tensor values, nl::tensor idx) {
    auto table = nl::zeros({4, 4}, nl::float32, nl::shared_hbm, "table");
    auto copy = nl::ndarray({2, 4}, nl::float32, nl::shared_hbm, "copy");
    load_line = __LINE__ + 1;
    auto row = nl::load(table[nl::ds(pid() + 2, 1), nl::_]);
    nl::store(copy[nl::ds(pid(), 1), nl::_], row);
    atomic_line = __LINE__ + 1;
    nl::atomic_rmw(isa::indirect(table[nl::ds(pid() + 1, 1), nl::_], nl::load(idx.all())), nl::load(values.all()), nl::add);
    return std::make_tuple(table, copy);
  });
  e = test::user_error_of([&] { (void)read_before.launch(lt::grid1(2)).with(checked).run(args); });
  CHECK(e == fmt::format("atomic_read_before ({}:{}): err_instances_write_same_element: element [2,0] of tensor table [4,4] "
                         "is updated by nl::atomic_rmw in instance [1] ({}:{}) and read by instance [0] ({}:{}): the value "
                         "read depends on when the update lands",
                         file, atomic_line, file, atomic_line, file, load_line));
  // Both instances (one per core) update row 1: no race, the sum of both.
  const nki::Kernel both = nki::jit("atomic_both", [](nl::tensor values, nl::tensor idx) {
    auto table = nl::zeros({2, 4}, nl::float32, nl::shared_hbm, "table");
    nl::atomic_rmw(isa::indirect(table[nl::ds(1, 1), nl::_], nl::load(idx.all())), nl::load(values.all()), nl::add);
    return table;
  });
  for (int run = 0; run < 3; ++run) {
    const nki::LaunchResult r = both.launch(nki::GridSpec{{nki::GridAxis(std::vector<nki::GridFactor>{{2, true}})}}).with(checked).run(args);
    lt::check_exact(r.outputs.at(0), {0, 0, 0, 0, 2, 4, 6, 8}, "atomic both [checked]");
  }
}

TEST_CASE("nl::atomic_rmw - misuse names NKI's error") {
  const char* file = "tests/language/atomic_rmw_test.cpp";
  int line = 0;
  auto misuse = [](auto body) { return lt::misuse_error_8x16("atomic_misuse", body); };
  std::string e = misuse([&](nl::tensor a, nl::tensor out) {
    auto i = nl::copy(nl::load(a[nl::_, nl::ds(0, 1)]), {.dtype = nl::uint32});
    line = __LINE__ + 1;
    nl::atomic_rmw(isa::indirect(out.all(), i), nl::load(a.all()), nl::multiply);
  });
  CHECK(e == fmt::format("atomic_misuse ({}:{}): err_unsupported_atomic_rmw_op: nl::atomic_rmw: op multiply is not "
                         "supported; the DMA engines update atomically with nl::add only", file, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    auto i = nl::copy(nl::load(a[nl::_, nl::ds(0, 1)]), {.dtype = nl::uint32});
    line = __LINE__ + 1;
    nl::atomic_rmw(isa::indirect(out.all(), i), 1.0f, nl::add);
  });
  CHECK(e == fmt::format("atomic_misuse ({}:{}): err_scalar_only_operation: nl::atomic_rmw: value is a scalar; it must be "
                         "an SBUF tile", file, line));
  e = misuse([&](nl::tensor a, nl::tensor) {
    auto s = nl::ndarray({8, 16}, nl::float32, nl::sbuf, "s");
    auto i = nl::copy(nl::load(a[nl::_, nl::ds(0, 1)]), {.dtype = nl::uint32});
    line = __LINE__ + 1;
    nl::atomic_rmw(isa::indirect(s.all(), i), nl::load(a.all()), nl::add);
  });
  CHECK(e == fmt::format("atomic_misuse ({}:{}): err_unsupported_memory: nl::atomic_rmw: the indirectly indexed tensor s "
                         "is in sbuf; it must be in HBM", file, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    auto x = nl::load(a.all());
    line = __LINE__ + 1;
    nl::atomic_rmw(isa::indirect(out.all(), x[nl::_, nl::ds(0, 1)]), x, nl::add);
  });
  CHECK(e == fmt::format("atomic_misuse ({}:{}): err_unsupported_dtype: nl::atomic_rmw: the index tile is fp32; it must "
                         "hold integers", file, line));
  e = misuse([&](nl::tensor a, nl::tensor out) {
    auto i = nl::copy(nl::load(a[nl::_, nl::ds(0, 1)]), {.dtype = nl::uint32});
    auto p = nl::matmul(nl::load(a.all()), nl::load(a[nl::_, nl::ds(0, 8)]), true);  // in PSUM
    line = __LINE__ + 1;
    nl::atomic_rmw(isa::indirect(out[nl::_, nl::ds(0, 8)], i), p, nl::add);
  });
  CHECK(e == fmt::format("atomic_misuse ({}:{}): err_unsupported_memory: nl::atomic_rmw: value is in psum; it must be an "
                         "SBUF tile", file, line));
}

TEST_CASE("nl::atomic_rmw cost - a read and a write of the rows by one DMA, descriptors written by GpSimd") {
  auto profile = [](bool atomic) {
    const nki::Kernel k = nki::jit(atomic ? "atomic_cost" : "atomic_cost_scatter", [atomic](nl::tensor v, nl::tensor idx) {
      auto o = nl::zeros({1000, 64}, nl::float32, nl::shared_hbm, "o");
      auto dst = isa::indirect(o[nl::ds(0, 128), nl::_], nl::load(idx.all()));
      auto x = nl::load(v.all());
      if (atomic) nl::atomic_rmw(dst, x, nl::add);
      else isa::dma_copy(dst, x);
      return o;
    });
    const auto ir = k.trace({{128, 64}, {128, 1}}, {DType::fp32, DType::uint32}, nki::GridSpec{})->ir;
    return nki::sim::estimate(*ir, {{0, {{}}}}, nki::sim::target_spec("trn2"), false);
  };
  const nki::sim::ProfileReport a = profile(true), s = profile(false);
  const auto& eng = a.cores.at(0).engines;
  CHECK(eng[static_cast<std::size_t>(nki::sim::Engine::dma)].instructions == 3);  // the index and value loads, the update
  CHECK(eng[static_cast<std::size_t>(nki::sim::Engine::gpsimd)].instructions == 1);
  // the update moves the rows twice: 128 x 64 fp32 read and written, the loads 128 x 4 and 128 x 64 x 4 bytes
  CHECK(a.dma_bytes == 128 * 4 + 128 * 64 * 4 + 2 * 128 * 64 * 4);
  CHECK(s.dma_bytes == 128 * 4 + 128 * 64 * 4 + 128 * 64 * 4);
  CHECK(a.cores.at(0).engines[static_cast<std::size_t>(nki::sim::Engine::dma)].busy_us >
        s.cores.at(0).engines[static_cast<std::size_t>(nki::sim::Engine::dma)].busy_us);
}
