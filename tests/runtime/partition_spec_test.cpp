/** \file Partition specs: Python tuple syntax as torch_xla users write it, printing, and resolution against a mesh. */
#include "nki/partition_spec.h"
#include "test_support.h"

using nki::PartitionSpec;
using Entry = PartitionSpec::Entry;

TEST_CASE("partition spec: tuples of None, names, indices and nested tuples parse") {
  CHECK(PartitionSpec::parse("(('r','b'), None)") ==
        PartitionSpec({Entry{std::string("r"), std::string("b")}, Entry{}}));
  CHECK(PartitionSpec::parse("('x', None)") == PartitionSpec({Entry{std::string("x")}, Entry{}}));
  CHECK(PartitionSpec::parse("(0, 1)") == PartitionSpec({Entry{0}, Entry{1}}));
  CHECK(PartitionSpec::parse(" ( \"x\" , ) ") == PartitionSpec({Entry{std::string("x")}}));
  CHECK(PartitionSpec::parse("((0, 'y'), (), None,)") ==
        PartitionSpec({Entry{0, std::string("y")}, Entry{}, Entry{}}));
  CHECK(PartitionSpec::parse("()") == PartitionSpec());
  // A parenthesised value inside the spec is that value, as in Python.
  CHECK(PartitionSpec::parse("(('x'), None)") == PartitionSpec({Entry{std::string("x")}, Entry{}}));
}

TEST_CASE("partition spec: str() is Python's repr") {
  CHECK(PartitionSpec::parse("(('r','b'),None)").str() == "(('r', 'b'), None)");
  CHECK(PartitionSpec::parse("('x',)").str() == "('x',)");
  CHECK(PartitionSpec::parse("(0,1)").str() == "(0, 1)");
}

TEST_CASE("partition spec: malformed text is refused in one line naming the text") {
  using test::user_error_of;
  CHECK(user_error_of([] { PartitionSpec::parse("('x')"); }) ==
        "err_invalid_partition_spec: spec \"('x')\": it is not a tuple: a one-element tuple needs a trailing comma, as "
        "in ('x',)");
  CHECK(user_error_of([] { PartitionSpec::parse("None"); }) ==
        "err_invalid_partition_spec: spec \"None\": None is not a tuple; expected a tuple such as ('x', None)");
  CHECK(user_error_of([] { PartitionSpec::parse(""); }) ==
        "err_invalid_partition_spec: spec \"\": it is empty; expected a tuple such as ('x', None)");
  CHECK(user_error_of([] { PartitionSpec::parse("('x', Nope)"); }) ==
        "err_invalid_partition_spec: spec \"('x', Nope)\": unexpected \"Nope\" at position 6; expected None, a quoted "
        "axis name, an integer or a tuple");
  CHECK(user_error_of([] { PartitionSpec::parse("('x' None)"); }) ==
        "err_invalid_partition_spec: spec \"('x' None)\": unexpected \"None\" at position 5; expected ',' or ')'");
  CHECK(user_error_of([] { PartitionSpec::parse("('x', None"); }) ==
        "err_invalid_partition_spec: spec \"('x', None\": a tuple is not closed; expected ',' or ')'");
  CHECK(user_error_of([] { PartitionSpec::parse("('x, None)"); }) ==
        "err_invalid_partition_spec: spec \"('x, None)\": the string starting at position 1 is not closed");
  CHECK(user_error_of([] { PartitionSpec::parse("('x', None) 1"); }) ==
        "err_invalid_partition_spec: spec \"('x', None) 1\": unexpected \"1\" at position 12 after the tuple");
  CHECK(user_error_of([] { PartitionSpec::parse("((('x',),), None)"); }) ==
        "err_invalid_partition_spec: spec \"((('x',),), None)\": a tuple inside a dimension's tuple may hold only axis "
        "names and indices, not another tuple");
  CHECK(user_error_of([] { PartitionSpec::parse("(('x', None), None)"); }) ==
        "err_invalid_partition_spec: spec \"(('x', None), None)\": a tuple inside a dimension's tuple may hold only "
        "axis names and indices, not None");
  CHECK(user_error_of([] { PartitionSpec::parse("('', None)"); }) ==
        "err_invalid_partition_spec: spec \"('', None)\": an empty axis name at position 1");
  CHECK(user_error_of([] { PartitionSpec::parse("(1x, None)"); }) ==
        "err_invalid_partition_spec: spec \"(1x, None)\": unexpected \"1x\" at position 1; expected an integer");
}

TEST_CASE("partition spec: resolves names and indices to mesh axes") {
  const nki::Mesh mesh = nki::Mesh::iota({1, 2, 4}, {"r", "b", "m"});
  CHECK(PartitionSpec::parse("(('r','b'), None)").resolve(mesh, 2) == std::vector<std::vector<int>>{{0, 1}, {}});
  CHECK(PartitionSpec::parse("(2, ('r', 1))").resolve(mesh, 2) == std::vector<std::vector<int>>{{2}, {0, 1}});
}

TEST_CASE("partition spec: the spec's length must equal the tensor rank") {
  const nki::Mesh mesh = nki::Mesh::iota({2, 4}, {"x", "y"});
  CHECK(test::user_error_of([&] { PartitionSpec::parse("('x', None, None)").resolve(mesh, 2); }) ==
        "err_partition_spec_rank_mismatch: spec ('x', None, None) has 3 entries for a tensor of rank 2; give one per "
        "dimension");
  CHECK(test::user_error_of([&] { PartitionSpec::parse("('x',)").resolve(mesh, 2); }) ==
        "err_partition_spec_rank_mismatch: spec ('x',) has 1 entry for a tensor of rank 2; give one per dimension");
}

TEST_CASE("partition spec: an unknown axis name or index is an error") {
  const nki::Mesh mesh = nki::Mesh::iota({2, 4}, {"x", "y"});
  CHECK(test::user_error_of([&] { PartitionSpec::parse("('z', None)").resolve(mesh, 2); }) ==
        "err_unknown_mesh_axis: spec ('z', None) names axis 'z'; the mesh axes are 'x', 'y'");
  CHECK(test::user_error_of([&] { PartitionSpec::parse("(2, None)").resolve(mesh, 2); }) ==
        "err_unknown_mesh_axis: spec (2, None) uses mesh axis index 2; the mesh has 2 axes (0 to 1)");
  CHECK(test::user_error_of([&] { PartitionSpec::parse("(-1, None)").resolve(mesh, 2); }) ==
        "err_unknown_mesh_axis: spec (-1, None) uses mesh axis index -1; the mesh has 2 axes (0 to 1)");
  CHECK(test::user_error_of([] { PartitionSpec::parse("('x',)").resolve(nki::Mesh::iota({2}), 1); }) ==
        "err_unknown_mesh_axis: spec ('x',) names axis 'x', but the mesh axes have no names; use indices 0 to 0");
}

TEST_CASE("partition spec: an axis used twice is an error, by name, index or in a tuple") {
  const nki::Mesh mesh = nki::Mesh::iota({2, 4}, {"x", "y"});
  CHECK(test::user_error_of([&] { PartitionSpec::parse("('x', 'x')").resolve(mesh, 2); }) ==
        "err_mesh_axis_used_twice: spec ('x', 'x') uses mesh axis 'x' twice; each mesh axis may shard at most one "
        "dimension, once");
  CHECK(test::user_error_of([&] { PartitionSpec::parse("(('y', 'x'), 1)").resolve(mesh, 2); }) ==
        "err_mesh_axis_used_twice: spec (('y', 'x'), 1) uses mesh axis 'y' twice; each mesh axis may shard at most one "
        "dimension, once");
}
