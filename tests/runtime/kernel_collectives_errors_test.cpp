/**
 * \file What in-kernel collectives refuse and how they fail: uneven groups, groups that do not fit
 * the world (before anything runs), ranks that make different collectives (an error, not a hang),
 * a failing rank, oneTBB limited below the rank count, checked mode, plain launches.
 */
#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <sstream>

#include "nki/collectives.h"
#include "nki/nki.h"
#include "nki/sharding.h"
#include "nki/world_launch.h"
#include "runtime/world_support.h"

namespace {

namespace nl = nki::language;
namespace nc = nki::collectives;
using nki::DType;

const char* const kFile = "tests/runtime/kernel_collectives_errors_test.cpp";

/** An all_reduce of the argument over `groups`, after a device_print that shows whether the kernel ran. */
nki::Kernel all_reduce_over(std::vector<std::vector<int>> groups, int* line) {
  return nki::jit("ar_groups", [groups, line](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nl::device_print("ran", x);
    *line = __LINE__ + 1;
    nc::all_reduce({x}, {out}, {.groups = groups}, nl::add);
    return out;
  });
}

}  // namespace

TEST_CASE("Uneven replica groups are refused when the kernel is traced, naming the groups' sizes") {
  const nki::sim::Device device("trn2", 4);
  const nki::Mesh mesh = nki::Mesh::iota({4}, {"x"});
  const nki::Tensor a = nki::Tensor::from_floats({4, 8}, DType::fp32, test::random_floats(32, 1), device);
  int line = 0;
  const nki::Kernel k = all_reduce_over({{0, 1, 2}, {3}}, &line);
  const std::string msg = test::user_error_of([&] { (void)wt::run_world(k, mesh, nki::Executor::reference, {a}, {}); });
  CHECK(msg == fmt::format("ar_groups ({}:{}): err_uneven_replica_groups: all_reduce: group 1 has 1 ranks and group 0 has 3; "
                    "every group of a collective has the same size",
                    kFile, line));
}

TEST_CASE("Groups that do not cover the world are refused before any rank runs") {
  const nki::sim::Device device("trn2", 8);
  const nki::Mesh mesh = nki::Mesh::iota({8}, {"x"});
  const nki::Tensor a = nki::Tensor::from_floats({4, 8}, DType::fp32, test::random_floats(32, 2), device);
  int line = 0;
  const nki::Kernel k = all_reduce_over({{0, 1}, {2, 3}}, &line);
  for (nki::Executor ex : wt::executors) {
    std::ostringstream printed;
    nki::LaunchOptions o;
    o.device_print = &printed;
    const std::string msg = test::user_error_of([&] { (void)wt::run_world(k, mesh, ex, {a}, {}, {}, o); });
    CHECK(msg == fmt::format("ar_groups ({}:{}): err_replica_group_mismatch: all_reduce: replica groups [[0,1],[2,3]] hold "
                      "ranks 0 to 3 (4 ranks) but the world has 8 ranks (0 to 7); every rank of the world is in "
                      "exactly one group",
                      kFile, line));
    CHECK(printed.str().empty());  // no rank ran
  }
}

TEST_CASE("A mesh axis the launch's mesh does not have is refused at the collective's line") {
  const nki::sim::Device device("trn2", 4);
  const nki::Mesh mesh = nki::Mesh::iota({2, 2}, {"data", "tensor"});
  const nki::Tensor a = nki::Tensor::from_floats({4, 8}, DType::fp32, test::random_floats(32, 3), device);
  int line = 0;
  const nki::Kernel k = nki::jit("ar_axis", [&line](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    line = __LINE__ + 1;
    nc::all_reduce({x}, {out}, {.axes = {"model"}}, nl::add);
    return out;
  });
  const std::string msg = test::user_error_of([&] { (void)wt::run_world(k, mesh, nki::Executor::reference, {a}, {}); });
  CHECK(msg.starts_with(fmt::format("ar_axis ({}:{}): err_unknown_mesh_axis: all_reduce over axes {{model}}: ", kFile, line)));
  CHECK(msg.find("model") != std::string::npos);
  // A plain launch has no mesh at all.
  CHECK(test::user_error_of([&] { (void)k(a); }) ==
        fmt::format("ar_axis ({}:{}): err_unknown_mesh_axis: all_reduce over axes {{model}}: a collective names mesh "
                    "axes {{model}} but a plain launch has no mesh; launch it on a mesh with nki::WorldLaunch",
                    kFile, line));
}

TEST_CASE("A plain launch is a world of one rank: an all_reduce over all ranks copies its src") {
  const nki::Tensor a = nki::Tensor::from_floats({4, 8}, DType::bf16, test::random_floats(32, 4));
  const nki::Kernel k = nki::jit("ar_solo", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nc::all_reduce({x}, {out}, {}, nl::add);
    return out;
  });
  lt::check_both(k, lt::no_grid(), {a}, a.to_values(), "solo all_reduce");
}

TEST_CASE("Ranks that make different collectives are err_collective_mismatch on both executors, not a hang") {
  const nki::sim::Device device("trn2", 4);
  const nki::Mesh mesh = nki::Mesh::iota({4}, {"x"});
  // Per rank, how many all_reduces it makes before its all_gather: 1 on ranks 0, 1, 3; 0 on rank 2.
  const nki::Tensor counts = nki::Tensor::from_values(device, {4, 1}, DType::int32, std::vector<double>{1, 1, 0, 1});
  const nki::ShardedTensor per_rank = nki::mark_sharding(counts, mesh, nki::PartitionSpec::parse("('x', None)"));
  const nki::Tensor a = nki::Tensor::from_floats({4, 8}, DType::fp32, test::random_floats(32, 5), device);
  int reduce_line = 0, gather_line = 0;
  const nki::Kernel k = nki::jit("diverging", [&](nl::tensor n, nl::tensor x) {
    auto sum = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "sum");
    auto all = nl::ndarray({16, 8}, x.dtype(), nl::shared_hbm, "all");
    auto trips = nki::isa::register_alloc();
    nki::isa::register_load(trips, n);
    nl::fori_loop(0, trips, [&](const nki::isa::VirtualRegister&) {
      reduce_line = __LINE__ + 1;
      nc::all_reduce({x}, {sum}, {}, nl::add);
    });
    gather_line = __LINE__ + 1;
    nc::all_gather({x}, {all}, {}, 0);
    return std::make_tuple(sum, all);
  });
  for (nki::Executor ex : wt::executors) {
    CAPTURE(nki::executor_name(ex));
    const std::string msg = test::user_error_of([&] { (void)wt::run_world(k, mesh, ex, {per_rank, a}, {}); });
    CHECK(msg.starts_with("diverging ("));
    CHECK(msg.find("err_collective_mismatch: ") != std::string::npos);
    CHECK(msg.find(fmt::format("is at all_reduce ({}:{}) in instance []", kFile, reduce_line)) != std::string::npos);
    CHECK(msg.find(fmt::format("rank 2 is at all_gather ({}:{}) in instance []", kFile, gather_line)) != std::string::npos);
    CHECK(msg.ends_with("; every rank makes the same collectives in the same order, or they would wait forever"));
  }
}

TEST_CASE("A rank that finishes while the others wait at a collective is err_collective_mismatch") {
  const nki::sim::Device device("trn2", 2);
  const nki::Mesh mesh = nki::Mesh::iota({2}, {"x"});
  const nki::Tensor counts = nki::Tensor::from_values(device, {2, 1}, DType::int32, std::vector<double>{1, 2});
  const nki::ShardedTensor per_rank = nki::mark_sharding(counts, mesh, nki::PartitionSpec::parse("('x', None)"));
  const nki::Tensor a = nki::Tensor::from_floats({4, 8}, DType::fp32, test::random_floats(32, 6), device);
  const nki::Kernel k = nki::jit("one_more", [](nl::tensor n, nl::tensor x) {
    auto sum = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "sum");
    auto trips = nki::isa::register_alloc();
    nki::isa::register_load(trips, n);
    nl::fori_loop(0, trips, [&](const nki::isa::VirtualRegister&) { nc::all_reduce({x}, {sum}, {}, nl::add); });
    return sum;
  });
  for (nki::Executor ex : wt::executors) {
    CAPTURE(nki::executor_name(ex));
    const std::string msg = test::user_error_of([&] { (void)wt::run_world(k, mesh, ex, {per_rank, a}, {}); });
    CHECK(msg.find("err_collective_mismatch: ") != std::string::npos);
    CHECK(msg.find("rank 0 has finished its instances") != std::string::npos);
  }
}

TEST_CASE("Collectives complete when the host limits oneTBB's concurrency below the rank count") {
  tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  const nki::sim::Device device("trn2", 8);
  const nki::Mesh mesh = nki::Mesh::iota({8}, {"x"});
  const nki::Tensor a = nki::Tensor::from_floats({8 * 4, 8}, DType::fp32, test::random_floats(256, 7), device);
  const nki::ShardedTensor sa = nki::mark_sharding(a, mesh, nki::PartitionSpec::parse("('x', None)"));
  const nki::Kernel k = nki::jit("ar_limited", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nc::all_reduce({x}, {out}, {}, nl::add);
    return out;
  });
  for (nki::Executor ex : wt::executors) {
    const nki::WorldResult r = wt::run_world(k, mesh, ex, {sa}, {nki::PartitionSpec::parse("('x', None)")});
    const std::vector<double> in = a.to_values(), got = r.outputs[0].gather().to_values();
    for (std::size_t e = 0; e < 32; ++e) {
      float s = 0;
      for (int m = 0; m < 8; ++m) s += static_cast<float>(in[m * 32 + e]);
      CHECK(got[e] == s);
      CHECK(got[7 * 32 + e] == s);
    }
  }
  // The host collectives too (their cores rendezvous the same way).
  const std::vector<nki::Tensor> reduced = nki::all_reduce(sa.shards(), nki::ReduceOp::sum);
  CHECK(test::bytes_of(reduced[3]) == test::bytes_of(reduced[5]));
}

TEST_CASE("A rank that fails stops the ranks waiting for it, and its own error is reported") {
  const nki::sim::Device device("trn2", 4);
  const nki::Mesh mesh = nki::Mesh::iota({4}, {"x"});
  // Rank 3's row index is out of range for the gather: the indirect load fails there at run time.
  const nki::Tensor idx = nki::Tensor::from_values(device, {4, 1}, DType::uint32, std::vector<double>{0, 1, 2, 9});
  const nki::ShardedTensor per_rank = nki::mark_sharding(idx, mesh, nki::PartitionSpec::parse("('x', None)"));
  const nki::Tensor a = nki::Tensor::from_floats({4, 8}, DType::fp32, test::random_floats(32, 8), device);
  const nki::Kernel k = nki::jit("failing_rank", [](nl::tensor i, nl::tensor x) {
    auto out = nl::ndarray({1, 8}, x.dtype(), nl::shared_hbm, "out");
    auto row = nl::ndarray({1, 8}, x.dtype(), nl::shared_hbm, "row");
    nki::isa::dma_copy(row.all(), nki::isa::indirect(x[nl::ds(0, 1), nl::_], nl::load(i.all())));
    nc::all_reduce({row}, {out}, {}, nl::add);
    return out;
  });
  for (nki::Executor ex : wt::executors) {
    CAPTURE(nki::executor_name(ex));
    const std::string msg = test::user_error_of([&] { (void)wt::run_world(k, mesh, ex, {per_rank, a}, {}); });
    CHECK(msg.find("err_tensor_access_out_of_bound") != std::string::npos);
  }
}

TEST_CASE("Checked mode: a collective that sends elements nothing wrote is err_uninitialized_read") {
  const nki::sim::Device device("trn2", 2);
  const nki::Mesh mesh = nki::Mesh::iota({2}, {"x"});
  const nki::Tensor a = nki::Tensor::from_floats({128, 8}, DType::fp32, test::random_floats(1024, 9), device);
  int line = 0;
  const nki::Kernel k = nki::jit("half_written", [&line](nl::tensor x) {
    auto src = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "src");
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    auto ip = nl::arange(64)[nl::_, nl::newaxis];
    auto jf = nl::arange(8)[nl::newaxis, nl::_];
    nl::store(src[ip, jf], nl::load(x[ip, jf]));  // rows 64..127 stay unwritten
    line = __LINE__ + 1;
    nc::all_reduce({src}, {out}, {}, nl::add);
    return out;
  });
  nki::LaunchOptions checked;
  checked.checked = true;
  const std::string msg = test::user_error_of([&] { (void)wt::run_world(k, mesh, nki::Executor::reference, {a}, {}, {}, checked); });
  CHECK(msg == fmt::format("half_written ({}:{}): err_uninitialized_read: instance (no grid) (all_reduce) reads element "
                           "[64,0] of tensor src [128,8] (shared_hbm), which nothing wrote: fresh shared_hbm holds NaN",
                           kFile, line));
  // Unchecked, it runs (the unwritten rows are zeros here).
  (void)wt::run_world(k, mesh, nki::Executor::reference, {a}, {});
}

TEST_CASE("World launches refuse a mesh other than their shards', and writes to a replicated argument") {
  const nki::sim::Device device("trn2", 4);
  const nki::Mesh mesh = nki::Mesh::iota({4}, {"x"});
  const nki::Mesh other = nki::Mesh::iota({2, 2}, {"a", "b"});
  const nki::Tensor a = nki::Tensor::from_floats({8, 8}, DType::fp32, test::random_floats(64, 10), device);
  const nki::ShardedTensor sa = nki::mark_sharding(a, other, nki::PartitionSpec::parse("('a', None)"));
  const nki::Kernel copy = nki::jit("copy_rows", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nl::store(out.all(), nl::load(x.all()));
    return out;
  });
  CHECK(test::user_error_of([&] { (void)wt::run_world(copy, mesh, nki::Executor::reference, {sa}, {}); }) ==
        "copy_rows: err_mesh_mismatch: argument 0 is sharded over the mesh {\"a\"=2, \"b\"=2}, the launch runs on {\"x\"=4}");
  const nki::Kernel in_place = nki::jit("in_place", [](nl::tensor x) { nl::store(x.all(), nl::load(x.all()) * 2.0); });
  CHECK(test::user_error_of([&] { (void)wt::run_world(in_place, mesh, nki::Executor::reference, {a}, {}); }) ==
        "in_place: err_replicated_argument_written: the kernel writes argument 0 (in0), which every rank shares whole; "
        "pass it sharded, or write an output instead");
  // Sharded, each rank writes its own shard in place.
  nki::ShardedTensor rows = nki::mark_sharding(a, mesh, nki::PartitionSpec::parse("('x', None)"));
  (void)wt::run_world(in_place, mesh, nki::Executor::halide, {rows}, {});
  const std::vector<double> before = a.to_values(), after = rows.gather().to_values();
  for (std::size_t e = 0; e < before.size(); ++e) CHECK(after[e] == 2 * before[e]);
}
