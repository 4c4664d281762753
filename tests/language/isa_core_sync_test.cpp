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

nki::LaunchResult run_checked(const nki::Kernel& k, const std::vector<nki::Tensor>& args) {
  nki::LaunchOptions o;
  o.checked = true;
  return k.launch(nc2()).with(o).run(args);
}

/**
 * Instance c (on NC c) copies row block c of a into `shared`; then, after the barrier when
 * `barrier`, stores 2 * a[1 - c, 0] into element [1 - c, 0]: NC0 into its own block, NC1 into
 * NC0's, which NC0 wrote before the barrier.
 */
nki::Kernel rewrite_after_barrier(bool barrier, int& phase1, int& phase2) {
  return nki::jit(barrier ? "rewrite_after_barrier" : "rewrite_without_barrier", [barrier, &phase1, &phase2](nl::tensor a) {
    auto shared = nl::ndarray({128, 32}, a.dtype(), nl::shared_hbm, "shared");
    auto ip = nl::arange(64)[nl::_, nl::newaxis];
    auto jf = nl::arange(32)[nl::newaxis, nl::_];
    auto row = nl::program_id(0) * 64 + ip;
    phase1 = __LINE__ + 1;
    nl::store(shared[row, jf], nl::load(a[row, jf]));  // (64, 32)
    if (barrier) isa::core_barrier(shared, {0, 1});
    auto other = 1 - nl::program_id(0);
    phase2 = __LINE__ + 1;
    nl::store(shared[nl::ds(other, 1), nl::ds(0, 1)], nl::load(a[nl::ds(other, 1), nl::ds(0, 1)]) * 2.0);
    return shared;
  });
}

}  // namespace

TEST_CASE("isa::core_barrier - each core writes its half of a shared tensor, after the barrier reads the other half") {
  // Instance c (on NC c) copies rows [64c, 64c + 64) of a into `shared`, waits at the barrier, then
  // copies the other core's half out: each core reads what the other wrote.
  const nki::Kernel k = nki::jit("barrier_halves", [](nl::tensor a) {
    auto shared = nl::ndarray({128, 32}, a.dtype(), nl::shared_hbm, "shared");
    auto out = nl::ndarray({2, 64, 32}, a.dtype(), nl::shared_hbm, "out");
    auto ip = nl::arange(64)[nl::_, nl::newaxis];
    auto jf = nl::arange(32)[nl::newaxis, nl::_];
    auto row = nl::program_id(0) * 64 + ip;
    nl::store(shared[row, jf], nl::load(a[row, jf]));  // (64, 32)
    isa::core_barrier(shared, {0, 1});
    auto theirs = (1 - nl::program_id(0)) * 64 + ip;
    nl::store(out[nl::program_id(0), ip, jf], nl::load(shared[theirs, jf]));  // (64, 32)
    return out;
  });
  for (std::uint32_t seed : {31u, 41u}) {
    CAPTURE(seed);
    const std::vector<float> av = test::random_floats(128 * 32, seed);
    const nki::Tensor a = lt::make({128, 32}, DType::fp32, av);
    std::vector<double> want;
    for (int c = 0; c < 2; ++c)
      for (int r = 0; r < 64; ++r)
        for (int j = 0; j < 32; ++j) want.push_back(av[static_cast<std::size_t>(((1 - c) * 64 + r) * 32 + j)]);
    lt::check_both(k, nc2(), {a}, want, "core_barrier");
    // Checked mode: every element read after the barrier was written before it, by the other core.
    lt::check_exact(run_checked(k, {a}).outputs.at(0), want, "core_barrier, checked");
  }
}

TEST_CASE("isa::core_barrier - with two instances per core the i-th instance of NC0 meets the i-th of NC1") {
  // Grid [nc(2), 2]: NC c runs instances (c, 0) then (c, 1). Each writes its block, then reads the
  // block of the same j on the other core, written before the barrier it meets.
  const nki::Kernel k = nki::jit("barrier_pairs", [](nl::tensor a) {
    auto shared = nl::ndarray({2, 2, 16, 8}, a.dtype(), nl::shared_hbm, "shared");
    auto out = nl::ndarray({2, 2, 16, 8}, a.dtype(), nl::shared_hbm, "out");
    auto ip = nl::arange(16)[nl::_, nl::newaxis];
    auto jf = nl::arange(8)[nl::newaxis, nl::_];
    auto c = nl::program_id(0), j = nl::program_id(1);
    nl::store(shared[c, j, ip, jf], nl::load(a[c, j, ip, jf]));  // (16, 8)
    isa::core_barrier(shared, {0, 1});
    nl::store(out[c, j, ip, jf], nl::load(shared[1 - c, j, ip, jf]));
    return out;
  });
  const std::vector<float> av = test::random_floats(2 * 2 * 16 * 8, 43);
  const nki::Tensor a = lt::make({2, 2, 16, 8}, DType::fp32, av);
  std::vector<double> want;
  for (int c = 0; c < 2; ++c)
    for (int e = 0; e < 2 * 16 * 8; ++e) want.push_back(av[static_cast<std::size_t>((1 - c) * 2 * 16 * 8 + e)]);
  const nki::GridSpec grid{{nki::GridAxis(std::vector<nki::GridFactor>{{2, true}}), nki::GridAxis(2)}};
  lt::check_both(k, grid, {a}, want, "core_barrier, two instances per core");
  nki::LaunchOptions o;
  o.checked = true;
  lt::check_exact(k.launch(grid).with(o).run({a}).outputs.at(0), want, "core_barrier, two instances per core, checked");
}

TEST_CASE("isa::core_barrier - checked mode takes writes it orders as legal, and reports them without it") {
  int phase1 = 0, phase2 = 0;
  const std::vector<float> av = test::random_floats(128 * 32, 37);
  const nki::Tensor a = lt::make({128, 32}, DType::fp32, av);
  std::vector<double> want(av.begin(), av.end());
  want[0] = 2.0 * av[0];    // by NC1, after the barrier
  want[32] = 2.0 * av[32];  // by NC0 into its own block
  const nki::Kernel ordered = rewrite_after_barrier(true, phase1, phase2);
  lt::check_both(ordered, nc2(), {a}, want, "ordered by the barrier");
  lt::check_exact(run_checked(ordered, {a}).outputs.at(0), want, "ordered by the barrier, checked");
  // The same writes without the barrier: NC1's element [0, 0] may land before or after NC0's.
  const nki::Kernel racing = rewrite_after_barrier(false, phase1, phase2);
  const std::string race = test::user_error_of([&] { (void)run_checked(racing, {a}); });
  CHECK(race ==
        fmt::format("rewrite_without_barrier ({0}:{2}): err_instances_write_same_element: element [0,0] of tensor shared "
                    "[128,32] is written by instance [0] ({0}:{1}) and by instance [1] ({0}:{2})",
                    kFile, phase1, phase2));
}

TEST_CASE("isa::sendrecv - the two cores swap SBUF tiles, ranks from program_id, both DMA engines") {
  const auto swap = [](isa::dma_engine engine) {
    return nki::jit("swap_tiles", [engine](nl::tensor a) {
      auto out = nl::ndarray({2, 128, 16}, a.dtype(), nl::shared_hbm, "out");
      auto ip = nl::arange(128)[nl::_, nl::newaxis];
      auto jf = nl::arange(16)[nl::newaxis, nl::_];
      auto mine = nl::ndarray({128, 16}, a.dtype(), nl::sbuf, "mine");
      auto theirs = nl::ndarray({128, 16}, a.dtype(), nl::sbuf, "theirs");
      mine[ip, jf] = nl::load(a[nl::program_id(0), ip, jf]);  // (128, 16)
      auto other = 1 - nl::program_id(0);                     // NKI's (program_id + 1) % 2
      isa::sendrecv(mine, theirs, other, other, 0, {.dma_engine = engine});
      nl::store(out[nl::program_id(0), ip, jf], nl::copy(theirs[ip, jf]));
      return out;
    });
  };
  for (isa::dma_engine engine : {isa::dma_engine::dma, isa::dma_engine::gpsimd_dma}) {
    for (DType dt : {DType::bf16, DType::fp32}) {
      CAPTURE(static_cast<int>(engine));
      CAPTURE(nki::dtype_name(dt));
      const nki::Tensor a = lt::make({2, 128, 16}, dt, test::random_floats(2 * 128 * 16, 32));
      const std::vector<double> in = lt::values_of(a);
      std::vector<double> want;
      for (int c = 0; c < 2; ++c)
        for (int e = 0; e < 128 * 16; ++e) want.push_back(in[static_cast<std::size_t>((1 - c) * 128 * 16 + e)]);
      const nki::Kernel k = swap(engine);
      lt::check_both(k, nc2(), {a}, want, "sendrecv");
      lt::check_exact(run_checked(k, {a}).outputs.at(0), want, "sendrecv, checked");
    }
  }
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
  const std::string one_core = test::user_error_of([&] { (void)barrier.launch(lt::grid1(2)).run({a}); });
  CHECK(one_core == fmt::format("lonely_barrier ({}:{}): err_core_sync_cores: isa::core_barrier meets NeuronCores 0 and 1 "
                                "of the logical core, but the launch runs instances on NC0; launch the grid over both "
                                "cores (nc(2))",
                                kFile, line));
  // trn1: NeuronCore-v2 has no logical core of two.
  const nki::sim::Device trn1("trn1", 2);
  const nki::Tensor a1 = nki::Tensor::from_floats({8, 8}, DType::fp32, test::random_floats(64, 34), trn1);
  const std::string v2 = test::user_error_of([&] { (void)barrier.launch(nc2()).run({a1}); });
  CHECK(v2 == fmt::format("lonely_barrier ({}:{}): err_unsupported_nc_version: isa::core_barrier needs NeuronCore-v3 or "
                          "newer (trn2, trn3): a logical core of two NeuronCores; the target is gen2",
                          kFile, line));
  // A world launch's rank is one core.
  const nki::sim::Device four("trn2", 4);
  const nki::Tensor a4 = nki::Tensor::from_floats({8, 8}, DType::fp32, test::random_floats(64, 35), four);
  const std::string world = test::user_error_of([&] {
    (void)nki::WorldLaunch(barrier.launch({}), nki::Mesh::iota({4}, {"x"})).run({a4});
  });
  CHECK(world == fmt::format("lonely_barrier ({}:{}): err_core_sync_in_world_launch: isa::core_barrier meets the two "
                             "NeuronCores of a logical core, and a world launch's rank is one NeuronCore; launch the "
                             "kernel without a mesh, its grid over nc(2)",
                             kFile, line));
  // Both cores send to NC0: NC1 receives from NC0, which sends to itself.
  const nki::Kernel unpaired = nki::jit("unpaired", [&line](nl::tensor x) {
    auto out = nl::ndarray({2, 8, 8}, x.dtype(), nl::shared_hbm, "out");
    auto s = nl::ndarray({8, 8}, x.dtype(), nl::sbuf, "s");
    auto d = nl::ndarray({8, 8}, x.dtype(), nl::sbuf, "d");
    auto ip = nl::arange(8)[nl::_, nl::newaxis];
    auto jf = nl::arange(8)[nl::newaxis, nl::_];
    s[ip, jf] = nl::load(x.all());
    line = __LINE__ + 1;
    isa::sendrecv(s, d, 0, 1 - nl::program_id(0), 0);
    nl::store(out[nl::program_id(0), ip, jf], nl::copy(d[ip, jf]));
    return out;
  });
  for (nki::Executor ex : lt::executors) {
    CAPTURE(nki::executor_name(ex));
    const std::string e = test::user_error_of([&] { (void)lt::run_on(unpaired, nc2(), ex, {a}); });
    CHECK(e == fmt::format("unpaired ({}:{}): err_invalid_source_target_pairs: isa::sendrecv: NC1 receives from NC0, "
                           "which sends to NC0; each core receives from the core that sends to it",
                           kFile, line));
  }
}

namespace {

/** The error of a kernel over nc(2) that copies its argument out, then runs `body` (which sets `line`). */
std::string misuse(const char* name, const std::function<void(nl::tensor)>& body) {
  const nki::Tensor a = lt::make({8, 8}, DType::fp32, test::random_floats(64, 38));
  const nki::Kernel k = nki::jit(name, [&body](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nl::store(out.all(), nl::load(x.all()));
    body(x);
    return out;
  });
  return test::user_error_of([&] { (void)k.launch(nc2()).run({a}); });
}

/** A sendrecv of an SBUF `s` (fp32 `src_shape`) into `d` (or into s itself), sending to core `to - program_id`. */
std::string sendrecv_misuse(const char* name, int& line, const nki::Shape& dst_shape, DType dst_dtype, bool same, int to,
                            isa::dma_engine engine, const nki::Shape& src_shape = {8, 8}) {
  return misuse(name, [&](nl::tensor) {
    auto s = nl::ndarray(src_shape, nl::float32, nl::sbuf, "s");
    auto d = nl::ndarray(dst_shape, dst_dtype, nl::sbuf, "d");
    line = __LINE__ + 1;
    isa::sendrecv(s, same ? s : d, to - nl::program_id(0), 1 - nl::program_id(0), 3, {.dma_engine = engine});
  });
}

}  // namespace

TEST_CASE("isa::core_barrier and isa::sendrecv - misuse names the error") {
  int line = 0;
  const auto at = [&](const char* name, const std::string& rest) {
    return fmt::format("{} ({}:{}): {}", name, kFile, line, rest);
  };
  std::string e = misuse("barrier_cores", [&](nl::tensor x) {
    line = __LINE__ + 1;
    isa::core_barrier(x, {1, 0});
  });
  CHECK(e == at("barrier_cores", "err_unsupported_cores: isa::core_barrier: cores (1, 0); only (0, 1), the two cores "
                                 "of a logical core, are supported"));
  e = misuse("barrier_sbuf", [&](nl::tensor) {
    auto s = nl::ndarray({8, 8}, nl::float32, nl::sbuf, "s");
    line = __LINE__ + 1;
    isa::core_barrier(s, {0, 1});
  });
  CHECK(e == at("barrier_sbuf", "err_unsupported_memory: isa::core_barrier: data s is in sbuf; it is the shared HBM "
                                "tensor the cores write and read"));
  e = misuse("sendrecv_hbm", [&](nl::tensor x) {
    auto d = nl::ndarray({8, 8}, nl::float32, nl::sbuf, "d");
    line = __LINE__ + 1;
    isa::sendrecv(x, d, 1 - nl::program_id(0), 1 - nl::program_id(0), 0);
  });
  CHECK(e == at("sendrecv_hbm", "err_unsupported_memory: isa::sendrecv: in0 is in hbm_input; src and dst are SBUF tensors"));
  e = sendrecv_misuse("sendrecv_shape", line, {8, 4}, DType::fp32, false, 1, isa::dma_engine::dma);
  CHECK(e == at("sendrecv_shape", "err_collective_shape_mismatch: isa::sendrecv: src s is fp32 [8,8] and dst d is "
                                  "fp32 [8,4]; a tile goes into a dst of its shape and dtype"));
  e = sendrecv_misuse("sendrecv_dtype", line, {8, 8}, DType::bf16, false, 1, isa::dma_engine::dma);
  CHECK(e == at("sendrecv_dtype", "err_collective_shape_mismatch: isa::sendrecv: src s is fp32 [8,8] and dst d is "
                                  "bf16 [8,8]; a tile goes into a dst of its shape and dtype"));
  e = sendrecv_misuse("sendrecv_same", line, {8, 8}, DType::fp32, true, 1, isa::dma_engine::dma);
  CHECK(e == at("sendrecv_same", "err_collective_buffers: isa::sendrecv: s is both src and dst"));
  e = sendrecv_misuse("sendrecv_rank", line, {8, 8}, DType::fp32, false, 2, isa::dma_engine::dma);
  CHECK(e == at("sendrecv_rank", "err_invalid_source_target_pairs: isa::sendrecv: send_to_rank -pid0 + 2 and "
                                 "recv_from_rank -pid0 + 1; each is 0 or 1 (a core of the logical core) for every "
                                 "instance: a constant or an expression of the program ids"));
  // gpsimd_dma: 1024 bytes per partition of 32-bit data; 257 fp32 are 1028.
  e = sendrecv_misuse("sendrecv_gpsimd", line, {8, 257}, DType::fp32, false, 1, isa::dma_engine::gpsimd_dma, {8, 257});
  CHECK(e == at("sendrecv_gpsimd", "err_size_of_dimension_exceed_arch_limit: isa::sendrecv with gpsimd_dma: src s holds "
                                   "1028 bytes per partition; GpSimd's DMA takes at most 1024 for fp32"));
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
    CAPTURE(nki::executor_name(ex));
    const std::string e = test::user_error_of([&] { (void)lt::run_on(k, nc2(), ex, {n, a}); });
    CHECK(e == fmt::format("uneven_barriers ({0}:{1}): err_collective_mismatch: NC0 is at core_barrier ({0}:{1}) in "
                           "instance [0] but NC1 has finished its instances; both cores of the logical core make the "
                           "same core_barriers and sendrecvs in the same order, or they would wait forever",
                           kFile, line));
  }
}

TEST_CASE("isa::core_barrier - a core that fails while the other waits at the barrier stops both with its error") {
  // NC1 loops forever (its flag is 1) and stops at the iteration limit; NC0 waits at the barrier.
  int line = 0;
  const nki::Kernel k = nki::jit("fails_before_barrier", [&line](nl::tensor flag, nl::tensor a) {
    auto shared = nl::ndarray({2, 8}, a.dtype(), nl::shared_hbm, "shared");
    auto go = isa::register_alloc();
    isa::register_load(go, flag[nl::ds(nl::program_id(0), 1), nl::ds(0, 1)]);
    line = __LINE__ + 1;
    nl::while_loop(go, [&](isa::VirtualRegister v) { return v; });
    nl::store(shared[nl::ds(nl::program_id(0), 1), nl::ds(0, 8)], nl::load(a[nl::ds(nl::program_id(0), 1), nl::ds(0, 8)]));
    isa::core_barrier(shared, {0, 1});
    return shared;
  });
  const nki::Tensor flag = lt::make({2, 1}, DType::int32, {0, 1});
  const nki::Tensor a = lt::make({2, 8}, DType::fp32, test::random_floats(16, 39));
  for (nki::Executor ex : lt::executors) {
    CAPTURE(nki::executor_name(ex));
    const std::string e = test::user_error_of([&] { (void)lt::run_on(k, nc2(), ex, {flag, a}); });
    CHECK(e == fmt::format("fails_before_barrier ({}:{}): err_while_loop_limit: nl::while_loop ran 1048576 iterations in "
                           "instance [1] and its condition is still non-zero; a loop that never ends is stopped here",
                           kFile, line));
  }
}
