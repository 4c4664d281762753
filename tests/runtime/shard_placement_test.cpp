/**
 * \file Shard placement: which slice each device holds, padding, replica ids; shards as buffers
 * in simulated HBM, gathered back; clear_sharding.
 */
#include <cstring>

#include "nki/sharded_tensor.h"
#include "test_support.h"

namespace {

using Slices = std::vector<std::array<std::int64_t, 2>>;
using Sizes = std::vector<std::int64_t>;

nki::Sharding sharding_of(const nki::Mesh& mesh, const char* spec, std::size_t rank) {
  return nki::Sharding::from_spec(mesh, nki::PartitionSpec::parse(spec), rank);
}

/** A tensor of `shape` on `device` holding 1, 2, 3, ... (exact in bf16 up to 256). */
nki::Tensor counting(const nki::Shape& shape, nki::DType dtype, const nki::sim::Device& device) {
  std::vector<float> v(static_cast<std::size_t>(nki::shape_elements(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(1 + i % 200);
  return nki::Tensor::from_floats(shape, dtype, v, device);
}

}  // namespace

TEST_CASE("placement: the 2-D mesh formula, device at mesh (i, j) holds rows from i*ceil(A/a) and cols from j*ceil(B/b), clipped") {
  // Mesh x=2, y=4; tensor [10, 13]; spec ('x', 'y'): c0 = ceil(10/2) = 5, c1 = ceil(13/4) = 4.
  const nki::Mesh mesh = nki::Mesh::iota({2, 4}, {"x", "y"});
  const std::vector<nki::ShardPlacement> p = sharding_of(mesh, "('x', 'y')", 2).placement({10, 13});
  REQUIRE(p.size() == 8);
  for (int d = 0; d < 8; ++d) {
    const std::int64_t i = d / 4, j = d % 4;
    CAPTURE(d);
    CHECK(p[d].device == d);
    CHECK(p[d].tile == Sizes{i, j});
    CHECK(p[d].slices == Slices{{5 * i, 5 * i + 5}, {4 * j, std::min<std::int64_t>(4 * j + 4, 13)}});
    CHECK(p[d].padding == Sizes{0, j == 3 ? 3 : 0});
    CHECK(p[d].replica_id == 0);
  }
}

TEST_CASE("placement: uneven dimensions take ceil(dim / shards) per shard and pad at the end") {
  const nki::Mesh mesh = nki::Mesh::iota({8}, {"x"});
  SUBCASE("10 over 8: c = 2, shards 5, 6, 7 are entirely padding") {
    const auto p = sharding_of(mesh, "('x',)", 1).placement({10});
    const Slices want[] = {{{0, 2}}, {{2, 4}}, {{4, 6}}, {{6, 8}}, {{8, 10}}, {{10, 10}}, {{10, 10}}, {{10, 10}}};
    for (int d = 0; d < 8; ++d) {
      CAPTURE(d);
      CHECK(p[d].slices == want[d]);
      CHECK(p[d].padding == Sizes{d < 5 ? 0 : 2});
    }
  }
  SUBCASE("5 over 8: c = 1, shards 5, 6, 7 are entirely padding") {
    const auto p = sharding_of(mesh, "('x',)", 1).placement({5});
    for (int d = 0; d < 8; ++d) {
      CAPTURE(d);
      CHECK(p[d].slices == Slices{{std::min(d, 5), std::min(d + 1, 5)}});
      CHECK(p[d].padding == Sizes{d < 5 ? 0 : 1});
    }
  }
  SUBCASE("7 over 4: c = 2, the last shard is half padding") {
    const auto p = sharding_of(nki::Mesh::iota({4}, {"x"}), "('x',)", 1).placement({7});
    CHECK(p[3].slices == Slices{{6, 7}});
    CHECK(p[3].padding == Sizes{1});
  }
  CHECK(sharding_of(mesh, "('x',)", 1).shard_shape({10}) == nki::Shape{2});
}

TEST_CASE("placement: partial replication, the replica id is the index along the unused axes") {
  // Mesh x=2, y=4, spec ('x', None) on [8, 6]: device x*4+y holds rows [4x, 4x+4), replica y.
  const auto p = sharding_of(nki::Mesh::iota({2, 4}, {"x", "y"}), "('x', None)", 2).placement({8, 6});
  for (int d = 0; d < 8; ++d) {
    CAPTURE(d);
    CHECK(p[d].slices == Slices{{4 * (d / 4), 4 * (d / 4) + 4}, {0, 6}});
    CHECK(p[d].replica_id == d % 4);
  }
  // Spec (None, 'y'): device x*4+y holds cols [2y, 2y+2), replica x.
  const auto q = sharding_of(nki::Mesh::iota({2, 4}, {"x", "y"}), "(None, 'y')", 2).placement({8, 8});
  CHECK(q[5].slices == Slices{{0, 8}, {2, 4}});
  CHECK(q[5].replica_id == 1);
  CHECK(q[2].slices == Slices{{0, 8}, {4, 6}});
  CHECK(q[2].replica_id == 0);
}

TEST_CASE("placement: a tuple of axes shards one dimension, the first axis major") {
  // (('y', 'x'), None) on [16, 4]: device x*4+y holds rows [2*(2y + x), +2).
  const auto p = sharding_of(nki::Mesh::iota({2, 4}, {"x", "y"}), "(('y', 'x'), None)", 2).placement({16, 4});
  for (int d = 0; d < 8; ++d) {
    const std::int64_t x = d / 4, y = d % 4, k = 2 * y + x;
    CAPTURE(d);
    CHECK(p[d].tile == Sizes{k, 0});
    CHECK(p[d].slices == Slices{{2 * k, 2 * k + 2}, {0, 4}});
  }
}

TEST_CASE("placement: a custom device order moves the slices with the ids") {
  // The example with --device-ids 7,6,...,0: device 7 sits at mesh (0,0,0).
  const nki::Mesh mesh({7, 6, 5, 4, 3, 2, 1, 0}, {1, 2, 4}, {"r", "b", "m"});
  const nki::Sharding s = sharding_of(mesh, "(('r','b'), None)", 2);
  CHECK(s.str() == "{devices=[2,1,4]7,6,5,4,3,2,1,0 last_tile_dim_replicate}");
  const auto p = s.placement({16, 16});
  CHECK(p[7].slices == Slices{{0, 8}, {0, 16}});
  CHECK(p[7].replica_id == 0);
  CHECK(p[4].slices == Slices{{0, 8}, {0, 16}});
  CHECK(p[4].replica_id == 3);
  CHECK(p[0].slices == Slices{{8, 16}, {0, 16}});
  CHECK(p[0].replica_id == 3);
  CHECK(p[3].replica_id == 0);
}

TEST_CASE("placement: replicated, every device holds all of it and its replica id is its device id") {
  const auto p = sharding_of(nki::Mesh({1, 0}, {2}, {"x"}), "(None,)", 1).placement({3});
  REQUIRE(p.size() == 2);
  CHECK(p[0].device == 0);
  CHECK(p[0].slices == Slices{{0, 3}});
  CHECK(p[0].replica_id == 0);
  CHECK(p[1].replica_id == 1);
}

TEST_CASE("mark_sharding: shards are buffers in the device's HBM, zero padded, and gather back to the tensor") {
  const nki::sim::Device device("trn2", 8);
  const nki::Mesh mesh = nki::Mesh::iota({2, 4}, {"x", "y"});
  for (const nki::DType dtype : {nki::DType::fp32, nki::DType::bf16}) {
    for (const char* spec : {"('x', 'y')", "(('y', 'x'), None)", "(None, 'y')", "(None, None)", "(1, 0)"}) {
      CAPTURE(spec);
      const nki::Tensor t = counting({10, 7}, dtype, device);
      const std::int64_t before = device.hbm().bytes_in_use();
      const nki::ShardedTensor st = nki::mark_sharding(t, mesh, nki::PartitionSpec::parse(spec));
      CHECK(device.hbm().bytes_in_use() > before);
      REQUIRE(st.shards().size() == 8);
      const nki::Shape shard_shape = st.sharding().shard_shape({10, 7});
      for (const nki::ShardPlacement& p : st.placement()) {
        const nki::Tensor& shard = st.shard(p.device);
        CHECK(shard.shape() == shard_shape);
        CHECK(shard.device().same_as(device));
        const std::vector<float> got = shard.to_floats();
        const std::vector<float> whole = t.to_floats();
        for (std::int64_t r = 0; r < shard_shape[0]; ++r) {
          for (std::int64_t c = 0; c < shard_shape[1]; ++c) {
            const std::int64_t gr = p.slices[0][0] + r, gc = p.slices[1][0] + c;
            const bool data = gr < p.slices[0][1] && gc < p.slices[1][1];
            const float want = data ? whole[static_cast<std::size_t>(gr * 7 + gc)] : 0.0f;
            REQUIRE_MESSAGE(got[static_cast<std::size_t>(r * shard_shape[1] + c)] == want,
                            "device " << p.device << " element (" << r << ", " << c << ")");
          }
        }
      }
      const nki::Tensor back = st.gather();
      CHECK(test::bytes_of(back) == test::bytes_of(t));
    }
  }
}

TEST_CASE("mark_sharding: annotations, the global mesh, and clear_sharding") {
  const nki::sim::Device device("trn2", 8);
  const nki::Tensor t = counting({16, 16}, nki::DType::fp32, device);
  nki::set_global_mesh(nki::Mesh::iota({1, 2, 4}, {"r", "b", "m"}));
  nki::ShardedTensor st = nki::mark_sharding(t, nki::PartitionSpec::parse("(('r','b'), None)"));
  CHECK(st.sharding_spec() == "{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}");
  CHECK(st.shape() == nki::Shape{16, 16});
  CHECK(st.shard(5).shape() == nki::Shape{8, 16});
  const nki::Tensor back = nki::clear_sharding(st);
  CHECK(test::bytes_of(back) == test::bytes_of(t));
  CHECK(st.sharding_spec().empty());
  CHECK(test::user_error_of([&] { st.gather(); }) ==
        "err_sharding_cleared: the tensor's sharding was cleared; its shards are gone");
  CHECK(test::user_error_of([&] { nki::clear_sharding(st); }) ==
        "err_sharding_cleared: the tensor's sharding was cleared; its shards are gone");
}

TEST_CASE("mark_sharding: a mesh larger than the device's core count is refused") {
  const nki::Tensor t = counting({8, 8}, nki::DType::fp32, nki::sim::Device::default_device());
  CHECK(test::user_error_of([&] {
          nki::mark_sharding(t, nki::Mesh::iota({2, 4}, {"x", "y"}), nki::PartitionSpec::parse("('x', 'y')"));
        }) == "err_mesh_exceeds_cores: mesh {\"x\"=2, \"y\"=4} has 8 devices but the tensor's device has 2 NeuronCores; "
              "make a device with enough cores, e.g. sim::Device(\"trn2\", 8)");
}

TEST_CASE("mark_sharding: the spec is checked against the tensor's rank") {
  const nki::sim::Device device("trn2", 8);
  const nki::Tensor t = counting({8, 8}, nki::DType::fp32, device);
  CHECK(test::user_error_of([&] {
          nki::mark_sharding(t, nki::Mesh::iota({8}, {"x"}), nki::PartitionSpec::parse("('x',)"));
        }) == "err_partition_spec_rank_mismatch: spec ('x',) has 1 entry for a tensor of rank 2; give one per dimension");
}
