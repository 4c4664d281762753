/**
 * \file isa::core_barrier and isa::sendrecv: the two cores of a logical core (a grid over nc(2))
 * meeting inside a kernel, on both executors and in checked mode; what they refuse.
 */
#include "language/lang_support.h"
#include "nki/world_launch.h"

namespace {

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

const char* const kFile = "tests/language/isa_core_sync_test.cpp";

/** The grid [nc(2)]: instance c on NC c, the two cores of the logical core. */
nki::GridSpec nc2() { return nki::GridSpec{{nki::GridAxis(std::vector<nki::GridFactor>{{2, true}})}}; }

}  // namespace

TEST_CASE("isa::core_barrier - each core writes its half of a shared tensor, after the barrier both read the whole") {
  // Instance c (on NC c) copies rows [64c, 64c + 64) of a into `shared`, waits at the barrier, then
  // stores the row-reversed whole: each core reads the half the other wrote.
  const nki::Kernel k = nki::jit("barrier_halves", [](nl::tensor a) {
    auto shared = nl::ndarray({128, 32}, a.dtype(), nl::shared_hbm, "shared");
    auto out = nl::ndarray({2, 128, 32}, a.dtype(), nl::shared_hbm, "out");
    auto ip = nl::arange(64)[nl::_, nl::newaxis];
    auto jf = nl::arange(32)[nl::newaxis, nl::_];
    auto row = nl::program_id(0) * 64 + ip;
    nl::store(shared[row, jf], nl::load(a[row, jf]));
    isa::core_barrier(shared, {0, 1});
    auto iq = nl::arange(128)[nl::_, nl::newaxis];
    nl::store(out[nl::program_id(0), iq, jf], nl::load(shared[127 - iq, jf]));
    return out;
  });
  const std::vector<float> av = test::random_floats(128 * 32, 31);
  const nki::Tensor a = lt::make({128, 32}, DType::fp32, av);
  std::vector<double> want;
  for (int c = 0; c < 2; ++c)
    for (int r = 0; r < 128; ++r)
      for (int j = 0; j < 32; ++j) want.push_back(av[static_cast<std::size_t>((127 - r) * 32 + j)]);
  const nki::GridSpec grid = nc2();
  lt::check_both(k, grid, {a}, want, "core_barrier");
  nki::LaunchOptions checked;
  checked.checked = true;
  lt::check_exact(k.launch(grid).with(checked)(a), want, "core_barrier, checked");  // no read of an unwritten element
}

TEST_CASE("isa::sendrecv - the two cores swap SBUF tiles, ranks from program_id") {
  const nki::Kernel k = nki::jit("swap_tiles", [](nl::tensor a) {
    auto out = nl::ndarray({2, 128, 16}, a.dtype(), nl::shared_hbm, "out");
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(16)[nl::newaxis, nl::_];
    auto mine = nl::ndarray({128, 16}, a.dtype(), nl::sbuf, "mine");
    auto theirs = nl::ndarray({128, 16}, a.dtype(), nl::sbuf, "theirs");
    mine[ip, jf] = nl::load(a[nl::program_id(0), ip, jf]);
    auto other = 1 - nl::program_id(0);  // NKI's (program_id + 1) % 2
    isa::sendrecv(mine, theirs, other, other, 0);
    nl::store(out[nl::program_id(0), ip, jf], nl::copy(theirs[ip, jf]));
    return out;
  });
  const std::vector<float> av = test::random_floats(2 * 128 * 16, 32);
  const nki::Tensor a = lt::make({2, 128, 16}, DType::bf16, av);
  const std::vector<double> in = a.to_values();
  std::vector<double> want;
  for (int c = 0; c < 2; ++c)
    for (int e = 0; e < 128 * 16; ++e) want.push_back(in[static_cast<std::size_t>((1 - c) * 128 * 16 + e)]);
  lt::check_both(k, nc2(), {a}, want, "sendrecv");
}

TEST_CASE("isa::core_barrier and isa::sendrecv - refused off LNC=2, on one core, in a world launch, unpaired") {
  int line = 0;
  const nki::Kernel barrier = nki::jit("lonely_barrier", [&line](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    nl::store(out.all(), nl::load(a.all()));
    line = __LINE__ + 1;
    isa::core_barrier(out, {0, 1});
    return out;
  });
  const nki::Tensor a = lt::make({8, 8}, DType::fp32, test::random_floats(64, 33));
  // A grid on NC0 only: the barrier would wait for a core that runs nothing.
  CHECK(test::user_error_of([&] { (void)barrier[2](a); }) ==
        fmt::format("lonely_barrier ({}:{}): err_core_sync_cores: isa::core_barrier meets NeuronCores 0 and 1 of the "
                    "logical core, but the launch runs instances on NC0; launch the grid over both cores (nc(2))",
                    kFile, line));
  // trn1: NeuronCore-v2 has no logical core of two.
  const nki::sim::Device trn1("trn1", 2);
  const nki::Tensor a1 = nki::Tensor::from_floats({8, 8}, DType::fp32, test::random_floats(64, 34), trn1);
  CHECK(test::user_error_of([&] { (void)barrier[nl::nc(2)](a1); }) ==
        fmt::format("lonely_barrier ({}:{}): err_unsupported_nc_version: isa::core_barrier needs NeuronCore-v3 or newer "
                    "(trn2, trn3): a logical core of two NeuronCores; the target is gen2",
                    kFile, line));
  // A world launch's rank is one core.
  const nki::sim::Device four("trn2", 4);
  const nki::Tensor a4 = nki::Tensor::from_floats({8, 8}, DType::fp32, test::random_floats(64, 35), four);
  CHECK(test::user_error_of([&] {
          (void)nki::WorldLaunch(barrier.launch({}), nki::Mesh::iota({4}, {"x"})).run({a4});
        }) == fmt::format("lonely_barrier ({}:{}): err_core_sync_in_world_launch: isa::core_barrier meets the two "
                          "NeuronCores of a logical core, and a world launch's rank is one NeuronCore; launch the kernel "
                          "without a mesh, its grid over nc(2)",
                          kFile, line));
  // Both cores send to core 0: core 1 receives from core 0, which sends to itself.
  const nki::Kernel unpaired = nki::jit("unpaired", [&line](nl::tensor x) {
    auto out = nl::ndarray({2, 8, 8}, x.dtype(), nl::shared_hbm, "out");
    auto s = nl::ndarray({8, 8}, x.dtype(), nl::sbuf, "s");
    auto d = nl::ndarray({8, 8}, x.dtype(), nl::sbuf, "d");
    s[nl::arange(8)[nl::_, nl::newaxis], nl::arange(8)[nl::newaxis, nl::_]] = nl::load(x.all());
    line = __LINE__ + 1;
    isa::sendrecv(s, d, 0, 1 - nl::program_id(0), 0);
    nl::store(out[nl::program_id(0), nl::arange(8)[nl::_, nl::newaxis], nl::arange(8)[nl::newaxis, nl::_]],
              nl::copy(d[nl::arange(8)[nl::_, nl::newaxis], nl::arange(8)[nl::newaxis, nl::_]]));
    return out;
  });
  for (nki::Executor ex : lt::executors) {
    CHECK(test::user_error_of([&] { (void)unpaired.launch(nc2()).with({ex})(a); }) ==
          fmt::format("unpaired ({}:{}): err_invalid_source_target_pairs: isa::sendrecv: core 1 receives from core 0, "
                      "which sends to core 0; each core receives from the core that sends to it",
                      kFile, line));
  }
}

TEST_CASE("isa::core_barrier - a core that makes one barrier more than the other is an error, not a hang") {
  // A dynamic loop's trip count per instance, read from n: NC0 meets the barrier twice, NC1 once.
  int line = 0;
  const nki::Kernel k = nki::jit("uneven_barriers", [&line](nl::tensor n, nl::tensor a) {
    auto shared = nl::ndarray({2, 8}, a.dtype(), nl::shared_hbm, "shared");
    auto trips = isa::register_alloc();
    isa::register_load(trips, n[nl::ds(nl::program_id(0), 1), nl::ds(0, 1)]);
    nl::store(shared[nl::ds(nl::program_id(0), 1), nl::ds(0, 8)], nl::load(a[nl::ds(nl::program_id(0), 1), nl::ds(0, 8)]));
    nl::fori_loop(0, trips, [&](isa::VirtualRegister) {
      line = __LINE__ + 1;
      isa::core_barrier(shared, {0, 1});
    });
    return shared;
  });
  const nki::Tensor n = lt::make({2, 1}, DType::int32, {2, 1});
  const nki::Tensor a = lt::make({2, 8}, DType::fp32, test::random_floats(16, 36));
  for (nki::Executor ex : lt::executors) {
    CAPTURE(static_cast<int>(ex));
    CHECK(test::user_error_of([&] { (void)k.launch(nc2()).with({ex})(n, a); }) == "");
  }
}
