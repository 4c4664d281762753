/** \file HloSharding text of mark_sharding: replicated, maximal, tiled, partial replication; explicit and iota forms. */
#include "nki/iota_tile_assignment.h"
#include "nki/sharding.h"
#include "test_support.h"

namespace {

nki::Sharding sharding_of(const nki::Mesh& mesh, const char* spec, std::size_t rank = 2) {
  return nki::Sharding::from_spec(mesh, nki::PartitionSpec::parse(spec), rank);
}

const nki::Mesh xy = nki::Mesh::iota({2, 4}, {"x", "y"});

}  // namespace

TEST_CASE("sharding: a spec of only None is {replicated}") {
  const nki::Sharding s = sharding_of(xy, "(None, None)");
  CHECK(s.kind() == nki::Sharding::Kind::replicated);
  CHECK(s.str() == "{replicated}");
  CHECK(s.iota_str() == "{replicated}");
}

TEST_CASE("sharding: axes of size 1 alone shard nothing: {replicated}") {
  CHECK(sharding_of(nki::Mesh::iota({1, 2, 4}, {"r", "b", "m"}), "('r', None)").str() == "{replicated}");
}

TEST_CASE("sharding: a one-device mesh is {maximal device=N}") {
  CHECK(sharding_of(nki::Mesh({0}, {1}, {"x"}), "('x', None)").str() == "{maximal device=0}");
  CHECK(sharding_of(nki::Mesh({0}, {1, 1}, {"a", "b"}), "(None, None)").str() == "{maximal device=0}");
}

TEST_CASE("sharding: every mesh axis used gives a plain tile assignment") {
  const nki::Sharding s = sharding_of(xy, "('x', 'y')");
  CHECK(s.str() == "{devices=[2,4]0,1,2,3,4,5,6,7}");
  CHECK(s.iota_str() == "{devices=[2,4]<=[8]}");
  CHECK(sharding_of(xy, "('y', 'x')").str() == "{devices=[4,2]0,4,1,5,2,6,3,7}");
  CHECK(sharding_of(xy, "('y', 'x')").iota_str() == "{devices=[4,2]<=[2,4]T(1,0)}");
}

TEST_CASE("sharding: axes by index shard as the named axes do") {
  CHECK(sharding_of(xy, "(0, 1)") == sharding_of(xy, "('x', 'y')"));
  CHECK(sharding_of(xy, "(1, 0)").str() == "{devices=[4,2]0,4,1,5,2,6,3,7}");
}

TEST_CASE("sharding: a tuple of axes shards one dimension over their product, major to minor") {
  CHECK(sharding_of(xy, "(('x', 'y'), None)").str() == "{devices=[8,1]0,1,2,3,4,5,6,7}");
  CHECK(sharding_of(xy, "(('x', 'y'), None)").iota_str() == "{devices=[8,1]<=[8]}");
  const nki::Sharding yx = sharding_of(xy, "(None, ('y', 'x'))");
  CHECK(yx.str() == "{devices=[1,8]0,4,1,5,2,6,3,7}");
  CHECK(yx.iota_str() == "{devices=[1,8]<=[2,4]T(1,0)}");
}

TEST_CASE("sharding: unused mesh axes become the replica dimension (last_tile_dim_replicate)") {
  const nki::Sharding rows = sharding_of(xy, "('x', None)");
  CHECK(rows.str() == "{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}");
  CHECK(rows.iota_str() == "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  CHECK(rows.last_tile_dim_replicate());
  const nki::Sharding cols = sharding_of(xy, "(None, 'y')");
  CHECK(cols.str() == "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}");
  CHECK(cols.iota_str() == "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
}

TEST_CASE("sharding: the issue's example, mesh r=1,b=2,m=4 and spec (('r','b'), None)") {
  const nki::Sharding s = sharding_of(nki::Mesh::iota({1, 2, 4}, {"r", "b", "m"}), "(('r','b'), None)");
  CHECK(s.str() == "{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}");
  CHECK(s.iota_str() == "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
}

TEST_CASE("sharding: unused axes of a 3-D mesh stay in mesh order as the replica dimension") {
  // Mesh a=2,b=2,c=2; spec ('b',): array dims (b, a, c) -> devices b-major, then a, then c.
  const nki::Sharding s = sharding_of(nki::Mesh::iota({2, 2, 2}, {"a", "b", "c"}), "('b',)", 1);
  CHECK(s.str() == "{devices=[2,4]0,1,4,5,2,3,6,7 last_tile_dim_replicate}");
  CHECK(s.iota_str() == "{devices=[2,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}");
}

TEST_CASE("sharding: a custom device order is printed explicitly, and as iota only when it is a transposed iota") {
  const nki::Mesh reversed({7, 6, 5, 4, 3, 2, 1, 0}, {2, 4}, {"x", "y"});
  CHECK(sharding_of(reversed, "('x', 'y')").str() == "{devices=[2,4]7,6,5,4,3,2,1,0}");
  CHECK(!sharding_of(reversed, "('x', 'y')").iota_str().has_value());
  const nki::Mesh transposed({0, 4, 1, 5, 2, 6, 3, 7}, {2, 4}, {"x", "y"});
  CHECK(sharding_of(transposed, "('x', 'y')").str() == "{devices=[2,4]0,4,1,5,2,6,3,7}");
  CHECK(sharding_of(transposed, "('x', 'y')").iota_str() == "{devices=[2,4]<=[2,4]T(1,0)}");
}

TEST_CASE("iota form: canonical as XLA prints it") {
  auto iota = [](nki::Shape dims, std::vector<int> ids) { return nki::iota_str(dims, ids); };
  CHECK(iota({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7}) == "[2,4]<=[8]");
  CHECK(iota({4, 2}, {0, 4, 1, 5, 2, 6, 3, 7}) == "[4,2]<=[2,4]T(1,0)");
  CHECK(iota({4, 2}, {0, 2, 1, 3, 4, 6, 5, 7}) == "[4,2]<=[2,2,2]T(0,2,1)");
  CHECK(iota({1, 1}, {0}) == "[1,1]<=[1]");
  CHECK(iota({6}, {0, 2, 4, 1, 3, 5}) == "[6]<=[3,2]T(1,0)");
  CHECK(!iota({4}, {1, 0, 2, 3}).has_value());
  CHECK(!iota({4}, {0, 2, 1, 1}).has_value());
  CHECK(!iota({4}, {0, 3, 1, 2}).has_value());
}
