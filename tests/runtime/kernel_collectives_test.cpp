/**
 * \file Collectives inside kernels (nki.collectives) in world launches: each kind for group sizes
 * 1, 2, 4 and 8 against a host computation, on both executors, bit for bit; groups from mesh
 * axes; a grid inside each rank; SBUF collectives.
 */
#include <doctest/doctest.h>

#include <cstdlib>
#include <functional>

#include "nki/nki.h"
#include "nki/sharding.h"
#include "nki/world_launch.h"
#include "runtime/world_support.h"

namespace {

namespace nl = nki::language;
namespace nc = nki::collectives;
using nki::DType;
using wt::groups_of_size;

enum class ir_op { add, max, min };

constexpr int kWorld = 8;
constexpr std::int64_t kRows = 8, kCols = 48;  // each rank's shard

/** Host: op over the group's values in group order, fp32, rounded to `dt` once. */
double reduce_host(ir_op op, const std::vector<double>& xs) {
  float acc = static_cast<float>(xs.front());
  for (std::size_t i = 1; i < xs.size(); ++i) {
    const float x = static_cast<float>(xs[i]);
    if (op == ir_op::add) {
      volatile float s = acc + x;
      acc = s;
    } else if (op == ir_op::max) {
      acc = acc >= x ? acc : x;
    } else {
      acc = acc <= x ? acc : x;
    }
  }
  return acc;
}

nl::binary_fn fn_of(ir_op op) { return op == ir_op::add ? nl::add : op == ir_op::max ? nl::maximum : nl::minimum; }

}  // namespace

TEST_CASE("rank_id is each rank's world rank, a run-time value of one artifact") {
  const nki::sim::Device device("trn2", kWorld);
  const nki::Mesh mesh = nki::Mesh::iota({kWorld}, {"x"});
  const nki::Kernel k = nki::jit("rank_ids", [](nl::tensor a) {
    auto out = nl::ndarray({1, 4}, DType::int32, nl::shared_hbm, "out");
    nl::store(out[nl::arange(1)[nl::_, nl::newaxis], nl::arange(4)[nl::newaxis, nl::_]],
              nki::isa::iota(nc::rank_id() * 10 + nl::arange(4)[nl::newaxis, nl::_], DType::int32));
    (void)a;
    return out;
  });
  const nki::Tensor a = nki::Tensor::from_floats({1, 1}, DType::fp32, std::vector<float>{0.0f}, device);
  for (nki::Executor ex : wt::executors) {
    CAPTURE(nki::executor_name(ex));
    const nki::WorldResult r = wt::run_world(k, mesh, ex, {a}, {nki::PartitionSpec::parse("('x', None)")});
    REQUIRE(r.outputs.size() == 1);
    const std::vector<double> got = r.outputs[0].gather().to_values();
    REQUIRE(got.size() == kWorld * 4);
    for (int rank = 0; rank < kWorld; ++rank)
      for (int j = 0; j < 4; ++j) CHECK(got[static_cast<std::size_t>(rank * 4 + j)] == rank * 10 + j);
    if (ex == nki::Executor::halide) CHECK(r.artifact_keys.size() == 1);  // SPMD: one artifact for 8 ranks
  }
}

TEST_CASE("all_reduce inside a kernel, groups of 1, 2, 4 and 8 ranks, sum, max and min") {
  const nki::sim::Device device("trn2", kWorld);
  const nki::Mesh mesh = nki::Mesh::iota({kWorld}, {"x"});
  const nki::PartitionSpec rows = nki::PartitionSpec::parse("('x', None)");
  for (DType dt : {DType::fp32, DType::bf16}) {
    const nki::Tensor a = nki::Tensor::from_floats({kWorld * kRows, kCols}, dt,
                                                   test::random_floats(kWorld * kRows * kCols, 11, -3.0f, 3.0f), device);
    const nki::ShardedTensor sa = nki::mark_sharding(a, mesh, rows);
    const std::vector<double> in = a.to_values();
    for (int g : {1, 2, 4, 8}) {
      for (ir_op op : {ir_op::add, ir_op::max, ir_op::min}) {
        CAPTURE(nki::dtype_name(dt));
        CAPTURE(g);
        CAPTURE(static_cast<int>(op));
        const auto groups = groups_of_size(kWorld, g);
        const nki::Kernel k = nki::jit("all_reduce_k", [groups, op](nl::tensor x) {
          auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
          nc::all_reduce({x}, {out}, {.groups = groups}, fn_of(op));
          return out;
        });
        std::vector<double> want(in.size());
        for (int rank = 0; rank < kWorld; ++rank) {
          const int base = rank / g * g;
          for (std::int64_t e = 0; e < kRows * kCols; ++e) {
            std::vector<double> xs;
            for (int m = base; m < base + g; ++m) xs.push_back(in[static_cast<std::size_t>(m * kRows * kCols + e)]);
            want[static_cast<std::size_t>(rank * kRows * kCols + e)] = reduce_host(op, xs);
          }
        }
        wt::check_world_both(k, mesh, {sa}, {rows}, {want}, "all_reduce");
      }
    }
  }
}

TEST_CASE("all_gather, reduce_scatter, all_to_all and collective_permute_implicit inside a kernel, groups of 1, 2, 4 and 8 ranks") {
  const nki::sim::Device device("trn2", kWorld);
  const nki::Mesh mesh = nki::Mesh::iota({kWorld}, {"x"});
  const nki::PartitionSpec rows = nki::PartitionSpec::parse("('x', None)");
  const DType dt = DType::bf16;
  const nki::Tensor a = nki::Tensor::from_floats({kWorld * kRows, kCols}, dt,
                                                 test::random_floats(kWorld * kRows * kCols, 12, -3.0f, 3.0f), device);
  const nki::ShardedTensor sa = nki::mark_sharding(a, mesh, rows);
  const std::vector<double> in = a.to_values();
  auto at = [&](int rank, std::int64_t row, std::int64_t col) {
    return in[static_cast<std::size_t>((rank * kRows + row) * kCols + col)];
  };
  for (int g : {1, 2, 4, 8}) {
    CAPTURE(g);
    const auto groups = groups_of_size(kWorld, g);
    {  // all_gather along dim 0: the group's shards stacked by rows, in group order
      const nki::Kernel k = nki::jit("all_gather_k", [groups, g](nl::tensor x) {
        auto out = nl::ndarray({kRows * g, kCols}, x.dtype(), nl::shared_hbm, "out");
        nc::all_gather({x}, {out}, {.groups = groups}, 0);
        return out;
      });
      std::vector<double> want;
      for (int rank = 0; rank < kWorld; ++rank)
        for (int m = rank / g * g; m < rank / g * g + g; ++m)
          for (std::int64_t row = 0; row < kRows; ++row)
            for (std::int64_t col = 0; col < kCols; ++col) want.push_back(at(m, row, col));
      wt::check_world_both(k, mesh, {sa}, {rows}, {want}, "all_gather");
    }
    {  // reduce_scatter along dim 0: the position-p rank gets rows [p*kRows/g, (p+1)*kRows/g) of the sum
      if (kRows % g != 0) continue;
      const nki::Kernel k = nki::jit("reduce_scatter_k", [groups, g](nl::tensor x) {
        auto out = nl::ndarray({kRows / g, kCols}, x.dtype(), nl::shared_hbm, "out");
        nc::reduce_scatter({x}, {out}, {.groups = groups}, 0, nl::add);
        return out;
      });
      std::vector<double> want;
      for (int rank = 0; rank < kWorld; ++rank) {
        const int base = rank / g * g, p = rank % g;
        for (std::int64_t row = p * kRows / g; row < (p + 1) * kRows / g; ++row) {
          for (std::int64_t col = 0; col < kCols; ++col) {
            std::vector<double> xs;
            for (int m = base; m < base + g; ++m) xs.push_back(at(m, row, col));
            want.push_back(reduce_host(ir_op::add, xs));
          }
        }
      }
      wt::check_world_both(k, mesh, {sa}, {rows}, {want}, "reduce_scatter");
    }
    {  // all_to_all along dim 0: part q of the position-p rank's dst is part p of member q's src
      const nki::Kernel k = nki::jit("all_to_all_k", [groups](nl::tensor x) {
        auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
        nc::all_to_all({x}, {out}, {.groups = groups}, 0);
        return out;
      });
      const std::int64_t part = kRows / g;
      std::vector<double> want;
      for (int rank = 0; rank < kWorld; ++rank) {
        const int base = rank / g * g, p = rank % g;
        for (int q = 0; q < g; ++q)
          for (std::int64_t row = p * part; row < (p + 1) * part; ++row)
            for (std::int64_t col = 0; col < kCols; ++col) want.push_back(at(base + q, row, col));
      }
      wt::check_world_both(k, mesh, {sa}, {rows}, {want}, "all_to_all");
    }
    {  // collective_permute_implicit: each rank gets its ring predecessor's shard
      const nki::Kernel k = nki::jit("permute_ring_k", [groups](nl::tensor x) {
        auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
        nc::collective_permute_implicit({{x}}, {{out}}, {.groups = groups});
        return out;
      });
      std::vector<double> want;
      for (int rank = 0; rank < kWorld; ++rank) {
        const int base = rank / g * g, from = base + (rank - base + g - 1) % g;
        for (std::int64_t row = 0; row < kRows; ++row)
          for (std::int64_t col = 0; col < kCols; ++col) want.push_back(at(from, row, col));
      }
      wt::check_world_both(k, mesh, {sa}, {rows}, {want}, "collective_permute_implicit");
    }
  }
}

TEST_CASE("collective_permute inside a kernel: pairs of world ranks, a rank no pair targets keeps its dst") {
  const nki::sim::Device device("trn2", kWorld);
  const nki::Mesh mesh = nki::Mesh::iota({kWorld}, {"x"});
  const nki::PartitionSpec rows = nki::PartitionSpec::parse("('x', None)");
  const nki::Tensor a = nki::Tensor::from_floats({kWorld * kRows, kCols}, DType::fp32,
                                                 test::random_floats(kWorld * kRows * kCols, 13), device);
  const nki::ShardedTensor sa = nki::mark_sharding(a, mesh, rows);
  const std::vector<std::pair<int, int>> pairs = {{0, 3}, {3, 0}, {1, 2}, {5, 6}, {6, 7}, {7, 5}};
  const nki::Kernel k = nki::jit("permute_pairs_k", [pairs](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nl::store(out.all(), nl::load(x.all()) * -1.0);  // what a rank no pair targets keeps
    nc::collective_permute({x}, {out}, pairs);
    return out;
  });
  const std::vector<double> in = a.to_values();
  std::vector<double> want(in.size());
  for (int rank = 0; rank < kWorld; ++rank) {
    int from = -1;
    for (auto [s, t] : pairs)
      if (t == rank) from = s;
    for (std::int64_t e = 0; e < kRows * kCols; ++e)
      want[static_cast<std::size_t>(rank * kRows * kCols + e)] =
          from < 0 ? -in[static_cast<std::size_t>(rank * kRows * kCols + e)] : in[static_cast<std::size_t>(from * kRows * kCols + e)];
  }
  wt::check_world_both(k, mesh, {sa}, {rows}, {want}, "collective_permute");
}

TEST_CASE("Replica groups from mesh axes: all_reduce over {tensor}, {data} and a sub-axis of a data=2, tensor=4 mesh") {
  const nki::sim::Device device("trn2", kWorld);
  const nki::Mesh mesh = nki::Mesh::iota({2, 4}, {"data", "tensor"});
  const nki::PartitionSpec rows = nki::PartitionSpec::parse("(('data', 'tensor'), None)");
  const nki::Tensor a = nki::Tensor::from_floats({kWorld * kRows, kCols}, DType::fp32,
                                                 test::random_floats(kWorld * kRows * kCols, 14), device);
  const nki::ShardedTensor sa = nki::mark_sharding(a, mesh, rows);
  const std::vector<double> in = a.to_values();
  const std::vector<std::pair<std::string, std::vector<std::vector<int>>>> cases = {
      {"tensor", {{0, 1, 2, 3}, {4, 5, 6, 7}}},
      {"data", {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
      {"\"tensor\":(1)2", {{0, 2}, {1, 3}, {4, 6}, {5, 7}}}};  // a Shardy sub-axis: the major half of tensor
  for (const auto& [axis, groups] : cases) {
    CAPTURE(axis);
    const nki::Kernel by_axis = nki::jit("all_reduce_axis", [axis](nl::tensor x) {
      auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
      nc::all_reduce({x}, {out}, {.axes = {axis}}, nl::add);
      return out;
    });
    std::vector<double> want(in.size());
    for (const auto& g : groups) {
      for (std::int64_t e = 0; e < kRows * kCols; ++e) {
        std::vector<double> xs;
        for (int m : g) xs.push_back(in[static_cast<std::size_t>(m * kRows * kCols + e)]);
        for (int m : g) want[static_cast<std::size_t>(m * kRows * kCols + e)] = reduce_host(ir_op::add, xs);
      }
    }
    wt::check_world_both(by_axis, mesh, {sa}, {rows}, {want}, "all_reduce over " + axis);
  }
}

TEST_CASE("A grid inside each rank: every instance's collective meets the same instance on the other ranks") {
  const nki::sim::Device device("trn2", 4);
  const nki::Mesh mesh = nki::Mesh::iota({4}, {"x"});
  const nki::PartitionSpec rows = nki::PartitionSpec::parse("('x', None)");
  constexpr std::int64_t P = 128;
  // 128 columns: 512-byte partitions, which compiled code pads (OnChipLayout) but not a collective's.
  for (const std::int64_t F : {64, 128}) {
    CAPTURE(F);
    const nki::Tensor a = nki::Tensor::from_floats({4 * 2 * P, F}, DType::fp32, test::random_floats(4 * 2 * P * F, 15), device);
    const nki::ShardedTensor sa = nki::mark_sharding(a, mesh, rows);
    // Each instance all-reduces its row tile through SBUF and stores the sum at its rows.
    const nki::Kernel k = nki::jit(fmt::format("grid_all_reduce_{}", F), [F](nl::tensor x) {
      auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
      auto ip = nl::arange(P)[nl::_, nl::newaxis];
      auto jf = nl::arange(F)[nl::newaxis, nl::_];
      auto row = nl::program_id(0) * P + ip;
      auto mine = nl::ndarray({P, F}, DType::fp32, nl::sbuf, "mine");
      auto sum = nl::ndarray({P, F}, DType::fp32, nl::sbuf, "sum");
      mine[ip, jf] = nl::load(x[row, jf]);
      nc::all_reduce({mine}, {sum}, {}, nl::add);
      nl::store(out[row, jf], nl::copy(sum[ip, jf]));
      return out;
    });
    const std::vector<double> in = a.to_values();
    const std::int64_t per_rank = 2 * P * F;
    std::vector<double> want(in.size());
    for (std::int64_t e = 0; e < per_rank; ++e) {
      std::vector<double> xs;
      for (int m = 0; m < 4; ++m) xs.push_back(in[static_cast<std::size_t>(m * per_rank + e)]);
      for (int m = 0; m < 4; ++m) want[static_cast<std::size_t>(m * per_rank + e)] = reduce_host(ir_op::add, xs);
  }
  wt::check_world_both(k, mesh, {sa}, {rows}, {want}, "grid all_reduce", nki::GridSpec{{nki::GridAxis(2)}});
  }
}

TEST_CASE("Replicated arguments: every rank sees the whole tensor, and a replicated output must agree on every rank") {
  const nki::sim::Device device("trn2", 4);
  const nki::Mesh mesh = nki::Mesh::iota({4}, {"x"});
  const nki::Tensor a = nki::Tensor::from_floats({kRows, kCols}, DType::fp32, test::random_floats(kRows * kCols, 16), device);
  const nki::Kernel sum4 = nki::jit("replicated_sum", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nc::all_reduce({x}, {out}, {}, nl::add);
    return out;
  });
  const std::vector<double> in = a.to_values();
  std::vector<double> want;
  for (double v : in) want.push_back(reduce_host(ir_op::add, {v, v, v, v}));
  // Replicated output (no spec): the global tensor is one rank's copy.
  wt::check_world_both(sum4, mesh, {a}, {}, {want}, "replicated all_reduce");

  const nki::Kernel differs = nki::jit("rank_dependent_output", [](nl::tensor x) {
    auto out = nl::ndarray({1, 1}, DType::int32, nl::shared_hbm, "out");
    nl::store(out[nl::arange(1)[nl::_, nl::newaxis], nl::arange(1)[nl::newaxis, nl::_]],
              nki::isa::iota(nc::rank_id() + 0 * nl::arange(1)[nl::newaxis, nl::_], DType::int32));
    (void)x;
    return out;
  });
  CHECK(test::user_error_of([&] { (void)wt::run_world(differs, mesh, nki::Executor::reference, {a}, {}); }) ==
        "rank_dependent_output: err_output_replicas_differ: output out is declared the same on ranks 0 and 1 "
        "(replicas of tile [0,0]) but element 0 is 0 on rank 0 and 1 on rank 1; declare its partition spec over the "
        "axes it differs along, or make the ranks compute the same");
}

TEST_CASE("MPMD world launch: one artifact per rank with its rank baked in, the same bytes as SPMD, refused in strict mode") {
  const nki::sim::Device device("trn2", 4);
  const nki::Mesh mesh = nki::Mesh::iota({2, 2}, {"data", "tensor"});
  const nki::PartitionSpec rows = nki::PartitionSpec::parse("(('data', 'tensor'), None)");
  const nki::Tensor a = nki::Tensor::from_floats({4 * kRows, kCols}, DType::fp32, test::random_floats(4 * kRows * kCols, 17), device);
  const nki::ShardedTensor sa = nki::mark_sharding(a, mesh, rows);
  const nki::Kernel k = nki::jit("mpmd_ranks", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    auto ip = nl::arange(kRows)[nl::_, nl::newaxis];
    auto jf = nl::arange(kCols)[nl::newaxis, nl::_];
    auto scaled = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "scaled");
    nl::store(scaled[ip, jf], nl::load(x[ip, jf]) * nki::isa::iota(nc::rank_id() + 0 * jf, DType::fp32));
    nc::all_reduce({scaled}, {out}, {.axes = {"tensor"}}, nl::add);
    return out;
  });
  nki::LaunchOptions mpmd;
  mpmd.mode = nki::CompileMode::mpmd;
  const nki::WorldResult s = wt::run_world(k, mesh, nki::Executor::halide, {sa}, {rows});
  const nki::WorldResult m = wt::run_world(k, mesh, nki::Executor::halide, {sa}, {rows}, {}, mpmd);
  CHECK(s.artifact_keys.size() == 1);
  CHECK(m.artifact_keys.size() == 4);
  CHECK(test::bytes_of(s.outputs[0].gather()) == test::bytes_of(m.outputs[0].gather()));
  const nki::WorldResult mr = wt::run_world(k, mesh, nki::Executor::reference, {sa}, {rows}, {}, mpmd);
  CHECK(test::bytes_of(mr.outputs[0].gather()) == test::bytes_of(m.outputs[0].gather()));
  ::setenv("NKI_SPMD_STRICT", "1", 1);
  const std::string msg = test::user_error_of([&] { (void)wt::run_world(k, mesh, nki::Executor::halide, {sa}, {rows}, {}, mpmd); });
  ::unsetenv("NKI_SPMD_STRICT");
  CHECK(msg.starts_with("mpmd_ranks: err_spmd_artifact_splinter: kernel IR "));
  CHECK(msg.find("resolved to 4 artifacts instead of one shared by every core") != std::string::npos);
}

TEST_CASE("collective_permute_implicit_reduce: each rank gets its ring predecessor's src0 + src1") {
  const nki::sim::Device device("trn2", 4);
  const nki::Mesh mesh = nki::Mesh::iota({4}, {"x"});
  const nki::PartitionSpec rows = nki::PartitionSpec::parse("('x', None)");
  const nki::Tensor a = nki::Tensor::from_floats({4 * kRows, kCols}, DType::fp32, test::random_floats(4 * kRows * kCols, 18), device);
  const nki::Tensor b = nki::Tensor::from_floats({4 * kRows, kCols}, DType::fp32, test::random_floats(4 * kRows * kCols, 19), device);
  const nki::ShardedTensor sa = nki::mark_sharding(a, mesh, rows), sb = nki::mark_sharding(b, mesh, rows);
  const nki::Kernel k = nki::jit("ring_reduce", [](nl::tensor x, nl::tensor y) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nc::collective_permute_implicit_reduce({{x}}, {{y}}, {{out}}, {.groups = {{0, 1, 2, 3}}}, nl::add);
    return out;
  });
  const std::vector<double> x = a.to_values(), y = b.to_values();
  const std::int64_t n = kRows * kCols;
  std::vector<double> want(x.size());
  for (int rank = 0; rank < 4; ++rank)
    for (std::int64_t e = 0; e < n; ++e) {
      const auto from = static_cast<std::size_t>((rank + 3) % 4 * n + e);
      want[static_cast<std::size_t>(rank * n + e)] = reduce_host(ir_op::add, {x[from], y[from]});
    }
  wt::check_world_both(k, mesh, {sa, sb}, {rows}, {want}, "collective_permute_implicit_reduce");
}

namespace {

/** Per-rank uint32 metadata [rows, 4] of a 4-rank world, from `cell(rank, row, col)`, sharded by rank. */
nki::ShardedTensor metadata(const nki::sim::Device& device, const nki::Mesh& mesh, int rows,
                            const std::function<double(int, int, int)>& cell) {
  std::vector<double> v;
  for (int r = 0; r < 4; ++r)
    for (int row = 0; row < rows; ++row)
      for (int col = 0; col < 4; ++col) v.push_back(cell(r, row, col));
  return nki::mark_sharding(nki::Tensor::from_values(device, {4 * rows, 4}, DType::uint32, v), mesh,
                            nki::PartitionSpec::parse("('x', None)"));
}

}  // namespace

TEST_CASE("all_gather_v and all_to_all_v: chunks the metadata sizes at run time, received counts written to row 2") {
  const nki::sim::Device device("trn2", 4);
  const nki::Mesh mesh = nki::Mesh::iota({4}, {"x"});
  const nki::PartitionSpec flat = nki::PartitionSpec::parse("('x',)");
  constexpr std::int64_t kSrc = 16, kSlot = 8;
  const nki::Tensor a = nki::Tensor::from_floats({4 * kSrc}, DType::fp32, test::random_floats(4 * kSrc, 20), device);
  const nki::ShardedTensor sa = nki::mark_sharding(a, mesh, flat);
  const std::vector<double> in = a.to_values();
  for (nki::Executor ex : wt::executors) {
    CAPTURE(nki::executor_name(ex));
    {  // all_gather_v: rank r sends elements [r, 2r + 1) of its src (r + 1 of them) to every rank
      const nki::ShardedTensor meta = metadata(device, mesh, 3, [](int r, int row, int) { return row == 0 ? r + 1 : row == 1 ? r : 99; });
      const nki::Kernel k = nki::jit("all_gather_v_k", [](nl::tensor x, nl::tensor m) {
        auto out = nl::ndarray({4 * kSlot}, x.dtype(), nl::shared_hbm, "out");
        nc::all_gather_v({x}, {out}, {}, m);
        return out;
      });
      const nki::WorldResult r = wt::run_world(k, mesh, ex, {sa, meta}, {flat});
      const std::vector<double> got = r.outputs[0].gather().to_values(), counts = meta.gather().to_values();
      for (int rank = 0; rank < 4; ++rank) {
        for (int q = 0; q < 4; ++q) {
          for (int i = 0; i < kSlot; ++i) {
            const double want = i < q + 1 ? in[static_cast<std::size_t>(q * kSrc + q + i)] : 0.0;  // the rest stays zero
            CHECK(got[static_cast<std::size_t>((rank * 4 + q) * kSlot + i)] == want);
          }
          CHECK(counts[static_cast<std::size_t>(rank * 12 + 2 * 4 + q)] == q + 1);  // row 2: what came from q
        }
      }
    }
    {  // all_to_all_v: rank q sends rank p (q + p) % 3 + 1 elements from element 4p; with and without row 3
      for (bool rdispls : {false, true}) {
        CAPTURE(rdispls);
        const nki::ShardedTensor meta = metadata(device, mesh, rdispls ? 4 : 3, [](int q, int row, int p) {
          return row == 0 ? (q + p) % 3 + 1 : row == 1 ? 4 * p : row == 3 ? 12 - 4 * p : 0;  // row 3: slots reversed
        });
        const nki::Kernel k = nki::jit("all_to_all_v_k", [rdispls](nl::tensor x, nl::tensor m) {
          auto out = nl::ndarray({16}, x.dtype(), nl::shared_hbm, "out");
          nc::all_to_all_v({x}, {out}, {}, m, {.has_rdispls = rdispls});
          return out;
        });
        const nki::WorldResult r = wt::run_world(k, mesh, ex, {sa, meta}, {flat});
        const std::vector<double> got = r.outputs[0].gather().to_values();
        for (int p = 0; p < 4; ++p) {
          for (int q = 0; q < 4; ++q) {
            const int count = (q + p) % 3 + 1, at = rdispls ? 12 - 4 * q : 4 * q;
            for (int i = 0; i < 4; ++i) {
              const double want = i < count ? in[static_cast<std::size_t>(q * kSrc + 4 * p + i)] : 0.0;
              CHECK(got[static_cast<std::size_t>(p * 16 + at + i)] == want);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("all_gather_v: a chunk larger than the receiver's slot is err_collective_counts when it runs") {
  const nki::sim::Device device("trn2", 4);
  const nki::Mesh mesh = nki::Mesh::iota({4}, {"x"});
  const nki::PartitionSpec flat = nki::PartitionSpec::parse("('x',)");
  const nki::ShardedTensor sa = nki::mark_sharding(
      nki::Tensor::from_floats({4 * 16}, DType::fp32, test::random_floats(64, 21), device), mesh, flat);
  const nki::ShardedTensor meta = metadata(device, mesh, 3, [](int r, int row, int) { return row == 0 ? (r == 2 ? 9 : 1) : 0; });
  int line = 0;
  const nki::Kernel k = nki::jit("too_big", [&line](nl::tensor x, nl::tensor m) {
    auto out = nl::ndarray({32}, x.dtype(), nl::shared_hbm, "out");
    line = __LINE__ + 1;
    nc::all_gather_v({x}, {out}, {}, m);
    return out;
  });
  for (nki::Executor ex : wt::executors) {
    const std::string msg = test::user_error_of([&] { (void)wt::run_world(k, mesh, ex, {sa, meta}, {flat}); });
    CHECK(msg == fmt::format("too_big (tests/runtime/kernel_collectives_test.cpp:{}): err_collective_counts: all_gather_v: "
                             "rank 2 sends rank 0 9 elements from element 0 of its src: the receiver's slot is 8 "
                             "elements (dst of 32 / 4 ranks)",
                             line));
  }
}
