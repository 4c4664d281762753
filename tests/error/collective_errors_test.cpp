/**
 * \file Every misuse of nki.collectives the trace or the launch refuses, with its exact message:
 * groups, buffers, memories, dtypes, shapes, ops, dims, channels, priorities, pairs, meshes, shards.
 */
#include <doctest/doctest.h>

#include "nki/nki.h"
#include "nki/sharding.h"
#include "nki/world_launch.h"
#include "runtime/world_support.h"

namespace {

namespace nl = nki::language;
namespace nc = nki::collectives;
using nki::DType;

const char* const kFile = "tests/error/collective_errors_test.cpp";

/** The message of tracing `body` over one [4, 8] fp32 argument (a plain launch); `line` is where it failed. */
template <class Body>
std::string trace_error(const char* name, Body body) {
  const nki::Kernel k = nki::jit(name, [body](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    body(x, out);
    return out;
  });
  const nki::Tensor a = nki::Tensor::from_floats({4, 8}, DType::fp32, test::random_floats(32, 1));
  return test::user_error_of([&] { (void)k(a); });
}

}  // namespace

TEST_CASE("collectives: ReplicaGroup errors while tracing - groups and axes both, a rank twice, an empty group") {
  int line = 0;
  std::string msg = trace_error("both", [&](nl::tensor x, nl::tensor out) {
    line = __LINE__ + 1;
    nc::all_reduce({x}, {out}, {.groups = {{0}}, .axes = {"x"}}, nl::add);
  });
  CHECK(msg == fmt::format("both ({}:{}): err_invalid_replica_group: all_reduce: a ReplicaGroup gives either groups or "
                           "mesh axes, not both",
                           kFile, line));
  msg = trace_error("twice", [&](nl::tensor x, nl::tensor out) {
    line = __LINE__ + 1;
    nc::all_reduce({x}, {out}, {.groups = {{0, 1}, {1, 2}}}, nl::add);
  });
  CHECK(msg == fmt::format("twice ({}:{}): err_invalid_replica_group: all_reduce: rank 1 is in more than one place of "
                           "the groups; groups do not overlap",
                           kFile, line));
  msg = trace_error("empty_group", [&](nl::tensor x, nl::tensor out) {
    line = __LINE__ + 1;
    nc::all_reduce({x}, {out}, {.groups = {{}}}, nl::add);
  });
  CHECK(msg == fmt::format("empty_group ({}:{}): err_invalid_replica_group: all_reduce: group 0 is empty", kFile, line));
}

TEST_CASE("collectives: buffer errors while tracing - counts, a dst that is its src, memories, dtypes, shapes") {
  int line = 0;
  std::string msg = trace_error("counts", [&](nl::tensor x, nl::tensor out) {
    line = __LINE__ + 1;
    nc::all_reduce({x, x}, {out}, {}, nl::add);
  });
  CHECK(msg == fmt::format("counts ({}:{}): err_collective_buffers: all_reduce: 2 srcs and 1 dsts were given; a "
                           "collective takes one dst per src, at least one",
                           kFile, line));
  msg = trace_error("in_place", [&](nl::tensor x, nl::tensor out) {
    (void)out;
    line = __LINE__ + 1;
    nc::all_to_all({x}, {x}, {}, 0);
  });
  CHECK(msg == fmt::format("in_place ({}:{}): err_collective_buffers: all_to_all: in0 is both a src and a dst; give the "
                           "collective a dst of its own",
                           kFile, line));
  msg = trace_error("psum_src", [&](nl::tensor x, nl::tensor out) {
    (void)x;
    auto p = nl::zeros({4, 8}, DType::fp32, nl::psum, "p");
    line = __LINE__ + 1;
    nc::all_reduce({p}, {out}, {}, nl::add);
  });
  CHECK(msg == fmt::format("psum_src ({}:{}): err_collective_memory: all_reduce: src p is in psum; this collective "
                           "takes tensors in HBM or SBUF",
                           kFile, line));
  msg = trace_error("sbuf_all_to_all", [&](nl::tensor x, nl::tensor out) {
    (void)x;
    (void)out;
    auto s = nl::zeros({4, 8}, DType::fp32, nl::sbuf, "s");
    auto d = nl::ndarray({4, 8}, DType::fp32, nl::sbuf, "d");
    line = __LINE__ + 1;
    nc::all_to_all({s}, {d}, {}, 0);
  });
  CHECK(msg == fmt::format("sbuf_all_to_all ({}:{}): err_collective_memory: all_to_all: src s is in sbuf; this "
                           "collective takes tensors in HBM",
                           kFile, line));
  msg = trace_error("dtypes", [&](nl::tensor x, nl::tensor out) {
    (void)out;
    auto half = nl::ndarray(x.shape(), DType::bf16, nl::shared_hbm, "half");
    line = __LINE__ + 1;
    nc::all_reduce({x}, {half}, {}, nl::add);
  });
  CHECK(msg == fmt::format("dtypes ({}:{}): err_collective_dtype_mismatch: all_reduce: src in0 is fp32 and dst half is "
                           "bf16; a collective moves values without converting them",
                           kFile, line));
  msg = trace_error("gather_shape", [&](nl::tensor x, nl::tensor out) {
    line = __LINE__ + 1;
    nc::all_gather({x}, {out}, {.groups = {{0, 1}}}, 0);
  });
  CHECK(msg == fmt::format("gather_shape ({}:{}): err_collective_shape_mismatch: all_gather: src in0 is [4,8] and dst "
                           "out is [4,8]; dst is 2 srcs joined along dim 0",
                           kFile, line));
}

TEST_CASE("collectives: ops, dims, channels, priorities and pairs NKI does not take, while tracing") {
  int line = 0;
  std::string msg = trace_error("product", [&](nl::tensor x, nl::tensor out) {
    line = __LINE__ + 1;
    nc::all_reduce({x}, {out}, {}, nl::multiply);
  });
  CHECK(msg == fmt::format("product ({}:{}): err_unsupported_collective_op: all_reduce: op is nl::multiply; a "
                           "collective reduces with nl::add, nl::maximum or nl::minimum",
                           kFile, line));
  msg = trace_error("dim1", [&](nl::tensor x, nl::tensor out) {
    line = __LINE__ + 1;
    nc::all_gather({x}, {out}, {}, 1);
  });
  CHECK(msg == fmt::format("dim1 ({}:{}): err_unsupported_collective_dim: all_gather: collective_dim is 1; it is 0 (0 or "
                           "1 for SBUF tensors)",
                           kFile, line));
  msg = trace_error("channels", [&](nl::tensor x, nl::tensor out) {
    line = __LINE__ + 1;
    nc::collective_permute_implicit({{x}, {x}}, {{out}, {out}}, {}, {0, 1});
  });
  CHECK(msg == fmt::format("channels ({}:{}): err_unsupported_channels: collective_permute_implicit: 2 channel ids, 2 "
                           "src and 2 dst channel lists were given; one channel (0) is modelled",
                           kFile, line));
  msg = trace_error("priority", [&](nl::tensor x, nl::tensor out) {
    line = __LINE__ + 1;
    nc::all_reduce({x}, {out}, {}, nl::add, {.priority = 4});
  });
  CHECK(msg == fmt::format("priority ({}:{}): err_invalid_priority: all_reduce: priority is 4; it is 0 to 3 (lower is "
                           "higher)",
                           kFile, line));
  msg = trace_error("pairs", [&](nl::tensor x, nl::tensor out) {
    line = __LINE__ + 1;
    nc::collective_permute({x}, {out}, {{0, 1}, {0, 2}});
  });
  CHECK(msg == fmt::format("pairs ({}:{}): err_invalid_source_target_pairs: collective_permute: rank 0 is the source of "
                           "two pairs",
                           kFile, line));
}

TEST_CASE("collectives: at launch - pairs outside the world, shapes that do not fit the mesh axis's group size") {
  const nki::sim::Device device("trn2", 4);
  const nki::Mesh mesh = nki::Mesh::iota({2, 2}, {"data", "tensor"});
  const nki::Tensor a = nki::Tensor::from_floats({4, 8}, DType::fp32, test::random_floats(32, 2), device);
  int line = 0;
  const nki::Kernel far = nki::jit("far_pair", [&line](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    line = __LINE__ + 1;
    nc::collective_permute({x}, {out}, {{0, 5}});
    return out;
  });
  std::string msg = test::user_error_of([&] { (void)wt::run_world(far, mesh, nki::Executor::reference, {a}, {}); });
  CHECK(msg == fmt::format("far_pair ({}:{}): err_invalid_source_target_pairs: collective_permute: pair (0, 5) names a "
                           "rank outside the world of 4 ranks (0 to 3)",
                           kFile, line));
  const nki::Kernel gather = nki::jit("gather_axis", [&line](nl::tensor x) {
    auto out = nl::ndarray({12, 8}, x.dtype(), nl::shared_hbm, "out");
    line = __LINE__ + 1;
    nc::all_gather({x}, {out}, {.axes = {"tensor"}}, 0);
    return out;
  });
  msg = test::user_error_of([&] { (void)wt::run_world(gather, mesh, nki::Executor::reference, {a}, {}); });
  CHECK(msg == fmt::format("gather_axis ({}:{}): err_collective_shape_mismatch: all_gather: src in0 is [4,8] and dst out "
                           "is [12,8] in groups of 2 ranks; dst is 2 srcs joined along dim 0",
                           kFile, line));
}

TEST_CASE("world launches: a mesh larger than the device, shards another process holds, shards that do not fit") {
  const nki::sim::Device device("trn2", 4);
  const nki::Mesh mesh = nki::Mesh::iota({8}, {"x"});
  const nki::Tensor a = nki::Tensor::from_floats({4, 8}, DType::fp32, test::random_floats(32, 3), device);
  const nki::Kernel copy = nki::jit("copy_all", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    nl::store(out.all(), nl::load(x.all()));
    return out;
  });
  CHECK(test::user_error_of([&] { (void)wt::run_world(copy, mesh, nki::Executor::reference, {a}, {}); }) ==
        "copy_all: err_mesh_exceeds_cores: the mesh {\"x\"=8} puts 8 ranks on each process's device, which has 4 "
        "NeuronCores; make a device with enough cores, e.g. sim::Device(\"trn2\", 8)");
  const nki::PartitionSpec rows = nki::PartitionSpec::parse("('x', None)");
  std::vector<nki::Tensor> two;
  for (int i = 0; i < 2; ++i) two.emplace_back(nki::Shape{1, 8}, DType::fp32, device);
  const nki::ShardedTensor part = nki::ShardedTensor::from_local_shards({8, 8}, DType::fp32, mesh, rows, 2, two);
  CHECK(part.holds(3));
  CHECK(test::user_error_of([&] { (void)part.shard(5); }) ==
        "err_shard_not_local: the shard of device 5 is held by another process (this one holds devices 2 to 3)");
  CHECK(test::user_error_of([&] { (void)part.gather(); }) ==
        "err_shard_not_local: the shard of device 0 is held by another process (this one holds devices 2 to 3)");
  CHECK(test::user_error_of([&] { (void)nki::ShardedTensor::from_local_shards({8, 8}, DType::fp32, mesh, rows, 7, two); }) ==
        "err_invalid_shards: 2 shards from device 7 were given for the mesh {\"x\"=8} of 8 devices; give one per device "
        "of a consecutive run inside the mesh");
  std::vector<nki::Tensor> wide{nki::Tensor({1, 9}, DType::fp32, device)};
  CHECK(test::user_error_of([&] { (void)nki::ShardedTensor::from_local_shards({8, 8}, DType::fp32, mesh, rows, 0, wide); }) ==
        "err_invalid_shards: the shard of device 0 is fp32 [1,9]; a shard of fp32 [8,8] sharded ('x', None) over "
        "{\"x\"=8} is fp32 [1,8]");
}

TEST_CASE("collectives: the _v kinds' metadata - its dtype and shape, has_rdispls on all_gather_v, its columns per rank") {
  int line = 0;
  std::string msg = trace_error("float_meta", [&](nl::tensor x, nl::tensor out) {
    auto meta = nl::ndarray({3, 4}, DType::fp32, nl::shared_hbm, "meta");
    line = __LINE__ + 1;
    nc::all_gather_v({x}, {out}, {}, meta);
  });
  CHECK(msg == fmt::format("float_meta ({}:{}): err_collective_metadata: all_gather_v: metadata meta is fp32 [3,4] in "
                           "shared_hbm; it is uint32 [3, G] in HBM or [1, 3, G] in SBUF (G the group's size)",
                           kFile, line));
  msg = trace_error("rdispls", [&](nl::tensor x, nl::tensor out) {
    auto meta = nl::ndarray({4, 4}, DType::uint32, nl::shared_hbm, "meta");
    line = __LINE__ + 1;
    nc::all_gather_v({x}, {out}, {}, meta, {.has_rdispls = true});
  });
  CHECK(msg == fmt::format("rdispls ({}:{}): err_unsupported_collective_option: all_gather_v: has_rdispls is not "
                           "supported by all_gather_v (chunks land at q * S)",
                           kFile, line));
  // At launch: one column per rank of the group.
  const nki::sim::Device device("trn2", 2);
  const nki::Mesh mesh = nki::Mesh::iota({2}, {"x"});
  const nki::Tensor a = nki::Tensor::from_floats({4, 8}, DType::fp32, test::random_floats(32, 4), device);
  const nki::Kernel k = nki::jit("three_columns", [&line](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    auto meta = nl::zeros({3, 3}, DType::uint32, nl::shared_hbm, "meta");
    line = __LINE__ + 1;
    nc::all_to_all_v({x}, {out}, {}, meta);
    return out;
  });
  msg = test::user_error_of([&] { (void)wt::run_world(k, mesh, nki::Executor::reference, {a}, {}); });
  CHECK(msg == fmt::format("three_columns ({}:{}): err_collective_metadata: all_to_all_v: metadata meta is [3,3] in groups "
                           "of 2 ranks; it has one column per rank ([3, 2])",
                           kFile, line));
}
