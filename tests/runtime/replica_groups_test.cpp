/** \file Replica groups as Shardy computes them, worked by hand on mesh {"x"=2, "y"=4}; sub-axes; errors. */
#include "nki/replica_groups.h"
#include "test_support.h"

using nki::AxisRef;
using G = nki::GroupList;

namespace {

const nki::Mesh xy = nki::Mesh::iota({2, 4}, {"x", "y"});

nki::ReplicaGroups groups_of(const nki::Mesh& mesh, const std::vector<std::string>& axes) {
  std::vector<AxisRef> refs;
  for (const std::string& a : axes) refs.push_back(AxisRef::parse(a));
  return nki::replica_groups(mesh, refs);
}

}  // namespace

// Mesh {"x"=2, "y"=4}: device x*4 + y.
//   y = 0  1  2  3
// x=0: 0  1  2  3
// x=1: 4  5  6  7

TEST_CASE("replica groups: over y, one group per x, devices in y order") {
  const nki::ReplicaGroups rg = groups_of(xy, {"y"});
  CHECK(rg.groups == G{{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK(rg.str() == "[[0,1,2,3],[4,5,6,7]]");
  CHECK(rg.iota == "[2,4]<=[8]");
}

TEST_CASE("replica groups: over x, one group per y") {
  const nki::ReplicaGroups rg = groups_of(xy, {"x"});
  CHECK(rg.groups == G{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  CHECK(rg.iota == "[4,2]<=[2,4]T(1,0)");
}

TEST_CASE("replica groups: over x then y, one group in mesh order") {
  const nki::ReplicaGroups rg = groups_of(xy, {"x", "y"});
  CHECK(rg.groups == G{{0, 1, 2, 3, 4, 5, 6, 7}});
  CHECK(rg.iota == "[1,8]<=[8]");
}

TEST_CASE("replica groups: over y then x, the reduction axes in the order given") {
  const nki::ReplicaGroups rg = groups_of(xy, {"y", "x"});
  CHECK(rg.groups == G{{0, 4, 1, 5, 2, 6, 3, 7}});
  CHECK(rg.iota == "[1,8]<=[2,4]T(1,0)");
}

TEST_CASE("replica groups: over no axes, every device alone") {
  const nki::ReplicaGroups rg = groups_of(xy, {});
  CHECK(rg.groups == G{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}});
  CHECK(rg.iota == "[8,1]<=[8]");
}

TEST_CASE("replica groups: sub-axis y:(1)2, the major half of y") {
  // y = 2*ym + yn; reduce over ym: groups per (x, yn) -> {x*4 + yn, x*4 + 2 + yn}.
  const nki::ReplicaGroups rg = groups_of(xy, {"\"y\":(1)2"});
  CHECK(rg.groups == G{{0, 2}, {1, 3}, {4, 6}, {5, 7}});
  CHECK(rg.iota == "[4,2]<=[2,2,2]T(0,2,1)");
}

TEST_CASE("replica groups: sub-axis y:(2)2, the minor half of y") {
  const nki::ReplicaGroups rg = groups_of(xy, {"y:(2)2"});
  CHECK(rg.groups == G{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  CHECK(rg.iota == "[4,2]<=[8]");
}

TEST_CASE("replica groups: an axis and a sub-axis, x then y:(2)2") {
  // Parts (x, ym, yn); ym stays, x then yn reduce: per ym, devices x*4 + 2*ym + yn in (x, yn) order.
  const nki::ReplicaGroups rg = groups_of(xy, {"x", "y:(2)2"});
  CHECK(rg.groups == G{{0, 1, 4, 5}, {2, 3, 6, 7}});
  CHECK(rg.iota == "[2,4]<=[2,2,2]T(1,0,2)");
}

TEST_CASE("replica groups: a sub-axis then an axis, y:(1)2 then x") {
  const nki::ReplicaGroups rg = groups_of(xy, {"y:(1)2", "x"});
  CHECK(rg.groups == G{{0, 4, 2, 6}, {1, 5, 3, 7}});
  CHECK(rg.iota == "[2,4]<=[2,2,2]T(2,1,0)");
}

TEST_CASE("replica groups: two sub-axes of one axis, x:(1)2 and x:(4)2 on x=8") {
  const nki::ReplicaGroups rg = groups_of(nki::Mesh::iota({8}, {"x"}), {"x:(1)2", "x:(4)2"});
  CHECK(rg.groups == G{{0, 1, 4, 5}, {2, 3, 6, 7}});
  CHECK(rg.iota == "[2,4]<=[2,2,2]T(1,0,2)");
}

TEST_CASE("replica groups: the mesh's device ids replace positions, and the iota form may not exist") {
  const nki::Mesh reversed({7, 6, 5, 4, 3, 2, 1, 0}, {2, 4}, {"x", "y"});
  const nki::ReplicaGroups rg = groups_of(reversed, {"y"});
  CHECK(rg.groups == G{{7, 6, 5, 4}, {3, 2, 1, 0}});
  CHECK(!rg.iota.has_value());
  const nki::Mesh transposed({0, 4, 1, 5, 2, 6, 3, 7}, {2, 4}, {"x", "y"});
  CHECK(groups_of(transposed, {"y"}).groups == G{{0, 4, 1, 5}, {2, 6, 3, 7}});
  CHECK(groups_of(transposed, {"y"}).iota == "[2,4]<=[2,4]T(1,0)");
}

TEST_CASE("axis refs: parse and print in Shardy's spelling") {
  CHECK(AxisRef::parse("y") == AxisRef{"y", 1, 0});
  CHECK(AxisRef::parse("\"y\"") == AxisRef{"y", 1, 0});
  CHECK(AxisRef::parse("\"y\":(2)4") == AxisRef{"y", 2, 4});
  CHECK(AxisRef::parse("y:(2)4").str() == "\"y\":(2)4");
  CHECK(test::user_error_of([] { AxisRef::parse("y:(a)2"); }) ==
        "err_invalid_axis_ref: axis \"y:(a)2\": pre-size \"a\" is not a positive integer");
  CHECK(test::user_error_of([] { AxisRef::parse("y:2"); }) ==
        "err_invalid_axis_ref: axis \"y:2\": expected a sub-axis written name:(pre-size)size, such as y:(1)2");
  CHECK(test::user_error_of([] { AxisRef::parse(""); }) == "err_invalid_axis_ref: axis \"\": the axis name is empty");
}

TEST_CASE("replica groups: an unknown axis is an error") {
  CHECK(test::user_error_of([] { groups_of(xy, {"z"}); }) ==
        "err_unknown_mesh_axis: axis \"z\" is not in the mesh {\"x\"=2, \"y\"=4}; its axes are \"x\", \"y\"");
}

TEST_CASE("replica groups: an axis used twice, or overlapping sub-axes, is an error") {
  CHECK(test::user_error_of([] { groups_of(xy, {"y", "y"}); }) == "err_mesh_axis_used_twice: axis \"y\" is used twice");
  CHECK(test::user_error_of([] { groups_of(xy, {"y:(1)2", "y"}); }) ==
        "err_mesh_axis_used_twice: axes \"y\":(1)2 and \"y\" overlap in mesh axis \"y\"; a collective may use each part "
        "of an axis once");
  CHECK(test::user_error_of([] { groups_of(nki::Mesh::iota({8}, {"x"}), {"x:(1)4", "x:(2)4"}); }) ==
        "err_mesh_axis_used_twice: axes \"x\":(1)4 and \"x\":(2)4 overlap in mesh axis \"x\"; a collective may use each "
        "part of an axis once");
}

TEST_CASE("replica groups: a sub-axis that does not fit its axis is an error") {
  CHECK(test::user_error_of([] { groups_of(xy, {"y:(3)2"}); }) ==
        "err_invalid_axis_ref: sub-axis \"y\":(3)2 does not fit axis \"y\" of size 4: pre-size x size (3 x 2) must "
        "divide 4");
  CHECK(test::user_error_of([] { groups_of(xy, {"y:(1)1"}); }) ==
        "err_invalid_axis_ref: sub-axis \"y\":(1)1: its size must be at least 2");
  CHECK(test::user_error_of([] { groups_of(xy, {"y:(1)4"}); }) ==
        "err_invalid_axis_ref: sub-axis \"y\":(1)4 is the whole axis \"y\"; write \"y\"");
  CHECK(test::user_error_of([] { groups_of(nki::Mesh::iota({12}, {"x"}), {"x:(1)2", "x:(3)4"}); }) ==
        "err_invalid_axis_ref: sub-axes \"x\":(1)2, \"x\":(3)4 of axis \"x\" (size 12) do not split it into whole parts");
}
