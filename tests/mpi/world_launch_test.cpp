/**
 * \file World launches across MPI processes: an 8-rank mesh split over the processes, each
 * holding only its ranks' shards; every collective kind with groups that cross processes, bit for
 * bit the host's and both executors'; ranks at different collectives and a failing rank fail
 * every process, without a hang.
 */
#include <algorithm>
#include <cstring>
#include <functional>

#include "mpi_support.h"
#include "nki/nki.h"
#include "nki/sharding.h"
#include "nki/world_launch.h"

namespace {

namespace nl = nki::language;
namespace nc = nki::collectives;
using nki::DType;

constexpr int kWorld = 8;
constexpr std::int64_t kRows = 8, kCols = 16;  // each rank's shard

/** The value at (global row, col) of the test input: the same formula on every process. */
float at(std::int64_t row, std::int64_t col) { return static_cast<float>((row * 37 + col * 11) % 97) * 0.125f - 6.0f; }

struct World {
  int processes = nki::communicator().ranks();
  int local = kWorld / processes;
  int first = nki::communicator().rank() * local;
  nki::sim::Device device{"trn2", local};
  nki::Mesh mesh = nki::Mesh::iota({kWorld}, {"x"});
  nki::PartitionSpec rows = nki::PartitionSpec::parse("('x', None)");

  /** This process's shards of the [8 * kRows, kCols] input: rank r holds rows [r * kRows, (r + 1) * kRows). */
  nki::ShardedTensor input(DType dt) const {
    std::vector<nki::Tensor> shards;
    for (int r = first; r < first + local; ++r) {
      std::vector<float> v;
      for (std::int64_t i = 0; i < kRows; ++i)
        for (std::int64_t j = 0; j < kCols; ++j) v.push_back(at(r * kRows + i, j));
      shards.push_back(nki::Tensor::from_floats({kRows, kCols}, dt, v, device));
    }
    return nki::ShardedTensor::from_local_shards({kWorld * kRows, kCols}, dt, mesh, rows, first, std::move(shards));
  }
  nki::WorldResult run(const nki::Kernel& k, nki::Executor ex, const std::vector<nki::WorldArg>& args) const {
    return nki::WorldLaunch(k.launch({}).with({.executor = ex}), mesh, {{rows}}).run(args);
  }
};

/** The input as the kernel sees it: rank r's element (i, j), rounded to `dt`. */
double in(DType dt, int r, std::int64_t i, std::int64_t j) { return nki::round_to_dtype(at(r * kRows + i, j), dt); }

float sum_in_order(const std::vector<double>& xs) {
  float acc = static_cast<float>(xs.front());
  for (std::size_t i = 1; i < xs.size(); ++i) {
    volatile float s = acc + static_cast<float>(xs[i]);
    acc = s;
  }
  return acc;
}

/** Each local rank's output (want(rank, flat index) of its shard) matches exactly, on both executors, the same bytes. */
template <class Want>
void check(const World& w, const nki::Kernel& k, DType dt, std::int64_t out_elements, Want want) {
  const nki::ShardedTensor x = w.input(dt);
  const nki::WorldResult h = w.run(k, nki::Executor::halide, {x});
  const nki::WorldResult r = w.run(k, nki::Executor::reference, {x});
  for (int rank = w.first; rank < w.first + w.local; ++rank) {
    CAPTURE(rank);
    const nki::Tensor& a = h.outputs[0].shard(rank);
    const nki::Tensor& b = r.outputs[0].shard(rank);
    REQUIRE(a.elements() == out_elements);
    CHECK(std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.bytes())) == 0);
    const std::vector<double> got = a.to_values();
    std::int64_t bad = 0;
    for (std::int64_t e = 0; e < out_elements; ++e)
      bad += got[static_cast<std::size_t>(e)] != nki::round_to_dtype(want(rank, e), dt) ? 1 : 0;
    CHECK(bad == 0);
  }
}

}  // namespace

TEST_CASE("world launch over MPI: all_reduce, all_gather, reduce_scatter, all_to_all and permutes across processes") {
  mpi_test::SharedCache cache;
  const World w;
  for (int g : {1, 2, 4, 8}) {
    CAPTURE(g);
    std::vector<std::vector<int>> groups;
    for (int base = 0; base < kWorld; base += g) {
      groups.emplace_back();
      for (int r = base; r < base + g; ++r) groups.back().push_back(r);
    }
    const DType dt = DType::bf16;
    const nki::Kernel ar = nki::jit("mpi_all_reduce", [groups](nl::tensor x) {
      auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
      nc::all_reduce({x}, {out}, {.groups = groups}, nl::add);
      return out;
    });
    check(w, ar, dt, kRows * kCols, [&](int rank, std::int64_t e) {
      std::vector<double> xs;
      for (int m = rank / g * g; m < rank / g * g + g; ++m) xs.push_back(in(dt, m, e / kCols, e % kCols));
      return static_cast<double>(sum_in_order(xs));
    });
    const nki::Kernel ag = nki::jit("mpi_all_gather", [groups, g](nl::tensor x) {
      auto out = nl::ndarray({kRows * g, kCols}, x.dtype(), nl::shared_hbm, "out");
      nc::all_gather({x}, {out}, {.groups = groups}, 0);
      return out;
    });
    check(w, ag, dt, g * kRows * kCols, [&](int rank, std::int64_t e) {
      const int m = rank / g * g + static_cast<int>(e / (kRows * kCols));
      const std::int64_t f = e % (kRows * kCols);
      return in(dt, m, f / kCols, f % kCols);
    });
    const nki::Kernel rs = nki::jit("mpi_reduce_scatter", [groups, g](nl::tensor x) {
      auto out = nl::ndarray({kRows / g, kCols}, x.dtype(), nl::shared_hbm, "out");
      nc::reduce_scatter({x}, {out}, {.groups = groups}, 0, nl::add);
      return out;
    });
    check(w, rs, dt, kRows / g * kCols, [&](int rank, std::int64_t e) {
      const std::int64_t row = rank % g * (kRows / g) + e / kCols;
      std::vector<double> xs;
      for (int m = rank / g * g; m < rank / g * g + g; ++m) xs.push_back(in(dt, m, row, e % kCols));
      return static_cast<double>(sum_in_order(xs));
    });
    const nki::Kernel a2a = nki::jit("mpi_all_to_all", [groups](nl::tensor x) {
      auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
      nc::all_to_all({x}, {out}, {.groups = groups}, 0);
      return out;
    });
    check(w, a2a, dt, kRows * kCols, [&](int rank, std::int64_t e) {
      const std::int64_t part = kRows / g, q = e / (part * kCols), row = rank % g * part + e % (part * kCols) / kCols;
      return in(dt, rank / g * g + static_cast<int>(q), row, e % kCols);
    });
    const nki::Kernel ring = nki::jit("mpi_ring", [groups](nl::tensor x) {
      auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
      nc::collective_permute_implicit({{x}}, {{out}}, {.groups = groups});
      return out;
    });
    check(w, ring, dt, kRows * kCols, [&](int rank, std::int64_t e) {
      const int base = rank / g * g;
      return in(dt, base + (rank - base + g - 1) % g, e / kCols, e % kCols);
    });
  }
  const std::vector<std::pair<int, int>> pairs = {{0, 7}, {7, 0}, {1, 4}, {4, 5}, {5, 1}, {6, 6}};
  const nki::Kernel perm = nki::jit("mpi_permute", [pairs](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nl::store(out.all(), nl::load(x.all()) * 0.0);  // what a rank no pair targets keeps
    nc::collective_permute({x}, {out}, pairs);
    return out;
  });
  check(w, perm, DType::fp32, kRows * kCols, [&](int rank, std::int64_t e) {
    for (auto [s, t] : pairs)
      if (t == rank) return in(DType::fp32, s, e / kCols, e % kCols);
    return 0.0;
  });
}

TEST_CASE("world launch over MPI: ranks at different collectives fail every process with err_collective_mismatch") {
  mpi_test::SharedCache cache;
  const World w;
  // Rank 7 (the last process's) makes one all_reduce more than the others.
  std::vector<double> counts(kWorld, 1.0);
  counts[7] = 2.0;
  std::vector<nki::Tensor> mine;
  for (int r = w.first; r < w.first + w.local; ++r)
    mine.push_back(nki::Tensor::from_values(w.device, {1, 1}, DType::int32, std::vector<double>{counts[static_cast<std::size_t>(r)]}));
  const nki::ShardedTensor n = nki::ShardedTensor::from_local_shards({kWorld, 1}, DType::int32, w.mesh, w.rows, w.first, mine);
  const nki::Kernel k = nki::jit("mpi_diverging", [](nl::tensor trips, nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    auto t = nki::isa::register_alloc();
    nki::isa::register_load(t, trips);
    nl::fori_loop(0, t, [&](const nki::isa::VirtualRegister&) { nc::all_reduce({x}, {out}, {}, nl::add); });
    return out;
  });
  const nki::ShardedTensor x = w.input(DType::fp32);
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    const std::string msg = test::user_error_of([&] {
      (void)nki::WorldLaunch(k.launch({}).with({.executor = ex}), w.mesh, {{w.rows}}).run({n, x});
    });
    CHECK(msg.find("err_collective_mismatch") != std::string::npos);
  }
}

TEST_CASE("world launch over MPI: a rank that fails on one process stops every process") {
  mpi_test::SharedCache cache;
  const World w;
  std::vector<nki::Tensor> mine;
  for (int r = w.first; r < w.first + w.local; ++r)
    mine.push_back(nki::Tensor::from_values(w.device, {1, 1}, DType::uint32, std::vector<double>{r == 6 ? 99.0 : 0.0}));
  const nki::ShardedTensor idx = nki::ShardedTensor::from_local_shards({kWorld, 1}, DType::uint32, w.mesh, w.rows, w.first, mine);
  const nki::Kernel k = nki::jit("mpi_failing", [](nl::tensor i, nl::tensor x) {
    auto row = nl::ndarray({1, kCols}, x.dtype(), nl::shared_hbm, "row");
    auto out = nl::ndarray({1, kCols}, x.dtype(), nl::shared_hbm, "out");
    nki::isa::dma_copy(row.all(), nki::isa::indirect(x[nl::ds(0, 1), nl::_], nl::load(i.all())));
    nc::all_reduce({row}, {out}, {}, nl::add);
    return out;
  });
  const nki::ShardedTensor x = w.input(DType::fp32);
  const std::string msg = test::user_error_of([&] {
    (void)nki::WorldLaunch(k.launch({}).with({.executor = nki::Executor::reference}), w.mesh, {{w.rows}}).run({idx, x});
  });
  const bool holds_six = w.first <= 6 && 6 < w.first + w.local;
  CHECK(msg.find(holds_six ? "err_tensor_access_out_of_bound" : "err_rank_failed: rank 6 failed: ") != std::string::npos);
}

TEST_CASE("world launch over MPI: all_gather_v, all_to_all_v and the ring reduce across processes") {
  mpi_test::SharedCache cache;
  const World w;
  const nki::PartitionSpec flat = nki::PartitionSpec::parse("('x',)");
  constexpr std::int64_t kSrc = 32, kSlot = 8;
  // This process's shards of a per-rank tensor of `shape` whose element (r, i) is value(r, i) (i flat).
  auto local = [&](DType dt, nki::Shape shape, const std::function<double(int, std::int64_t)>& value) {
    std::vector<nki::Tensor> shards;
    for (int r = w.first; r < w.first + w.local; ++r) {
      std::vector<double> v;
      for (std::int64_t i = 0; i < nki::shape_elements(shape); ++i) v.push_back(value(r, i));
      shards.push_back(nki::Tensor::from_values(w.device, shape, dt, v));
    }
    nki::Shape global = shape;
    global[0] *= kWorld;
    const nki::PartitionSpec spec = shape.size() == 1 ? flat : w.rows;
    return nki::ShardedTensor::from_local_shards(global, dt, w.mesh, spec, w.first, std::move(shards));
  };
  auto src = [](int r, std::int64_t i) { return static_cast<double>(r * 100 + i); };
  const nki::ShardedTensor x = local(DType::fp32, {kSrc}, src);
  auto run = [&](const nki::Kernel& k, nki::Executor ex, const std::vector<nki::WorldArg>& args) {
    return nki::WorldLaunch(k.launch({}).with({.executor = ex}), w.mesh, {{flat}}).run(args);
  };
  const nki::Kernel gather_v = nki::jit("mpi_all_gather_v", [](nl::tensor s, nl::tensor m) {
    auto out = nl::ndarray({kWorld * kSlot}, s.dtype(), nl::shared_hbm, "out");
    nc::all_gather_v({s}, {out}, {}, m);
    return out;
  });
  const nki::Kernel a2a_v = nki::jit("mpi_all_to_all_v", [](nl::tensor s, nl::tensor m) {
    auto out = nl::ndarray({kWorld * 4}, s.dtype(), nl::shared_hbm, "out");
    nc::all_to_all_v({s}, {out}, {}, m);
    return out;
  });
  const nki::Kernel ring = nki::jit("mpi_ring_reduce", [](nl::tensor s, nl::tensor t) {
    auto out = nl::ndarray(s.shape(), s.dtype(), nl::shared_hbm, "out");
    nc::collective_permute_implicit_reduce({{s}}, {{t}}, {{out}}, {}, nl::maximum);
    return out;
  });
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    // all_gather_v: rank r sends r % 4 + 1 elements from element r (metadata [3, 8]: row 0 and row 1, column 0).
    const nki::ShardedTensor gm = local(DType::uint32, {3, kWorld}, [](int r, std::int64_t i) {
      return i == 0 ? r % 4 + 1 : i == kWorld ? r : 0;
    });
    const nki::WorldResult g = run(gather_v, ex, {x, gm});
    for (int rank = w.first; rank < w.first + w.local; ++rank) {
      const std::vector<double> got = g.outputs[0].shard(rank).to_values(), m = gm.shard(rank).to_values();
      for (int q = 0; q < kWorld; ++q) {
        for (int i = 0; i < kSlot; ++i)
          CHECK(got[static_cast<std::size_t>(q * kSlot + i)] == (i < q % 4 + 1 ? src(q, q + i) : 0.0));
        CHECK(m[static_cast<std::size_t>(2 * kWorld + q)] == q % 4 + 1);
      }
    }
    // all_to_all_v: rank q sends rank p (q + p) % 4 + 1 elements from element 4p.
    const nki::ShardedTensor am = local(DType::uint32, {3, kWorld}, [](int q, std::int64_t i) {
      const std::int64_t row = i / kWorld, p = i % kWorld;
      return row == 0 ? (q + p) % 4 + 1 : row == 1 ? 4 * p : 0;
    });
    const nki::WorldResult a = run(a2a_v, ex, {x, am});
    for (int p = w.first; p < w.first + w.local; ++p) {
      const std::vector<double> got = a.outputs[0].shard(p).to_values();
      for (int q = 0; q < kWorld; ++q)
        for (int i = 0; i < 4; ++i)
          CHECK(got[static_cast<std::size_t>(q * 4 + i)] == (i < (q + p) % 4 + 1 ? src(q, 4 * p + i) : 0.0));
    }
    // The ring over all eight: max of the predecessor's two srcs.
    const nki::ShardedTensor y = local(DType::fp32, {kSrc}, [](int r, std::int64_t i) { return static_cast<double>((r * 7 + i * 3) % 50); });
    const nki::WorldResult rr = run(ring, ex, {x, y});
    for (int rank = w.first; rank < w.first + w.local; ++rank) {
      const std::vector<double> got = rr.outputs[0].shard(rank).to_values();
      const int from = (rank + kWorld - 1) % kWorld;
      for (std::int64_t i = 0; i < kSrc; ++i)
        CHECK(got[static_cast<std::size_t>(i)] == std::max(src(from, i), static_cast<double>((from * 7 + i * 3) % 50)));
    }
  }
}

TEST_CASE("world launch over MPI: an argument one process gets wrong fails every process before anything runs") {
  mpi_test::SharedCache cache;
  const World w;
  const nki::Kernel k = nki::jit("mpi_bad_argument", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nc::all_reduce({x}, {out}, {}, nl::add);
    return out;
  });
  const nki::ShardedTensor good = w.input(DType::fp32);
  const nki::sim::Device elsewhere("trn2", w.local);  // another device: its HBM is not the launch's
  const nki::Tensor stray = nki::Tensor::from_floats({kRows, kCols}, DType::fp32, std::vector<float>(kRows * kCols, 1.0f), elsewhere);
  const bool me = nki::communicator().rank() == 1;
  const std::string msg = test::user_error_of([&] {
    nki::LaunchOptions o;
    o.device = &w.device;
    (void)nki::WorldLaunch(k.launch({}).with(o), w.mesh, {{w.rows}}).run({me ? nki::WorldArg(stray) : nki::WorldArg(good)});
  });
  CHECK(msg == (me ? std::string("mpi_bad_argument: err_argument_device: argument 0 lives on another device than the launch")
                   : fmt::format("err_rank_failed: rank 1 of {} failed: mpi_bad_argument: err_argument_device: argument 0 "
                                 "lives on another device than the launch",
                                 nki::communicator().ranks())));
}
