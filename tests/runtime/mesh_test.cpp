/** \file nki::Mesh: row-major layout of device ids, shape(), logical_mesh(), the global mesh, validation. */
#include "nki/mesh.h"
#include "test_support.h"

using Ids = std::vector<int>;

TEST_CASE("mesh: device ids are laid into the mesh in row-major order") {
  const nki::Mesh mesh({7, 6, 5, 4, 3, 2, 1, 0}, {2, 4}, {"x", "y"});
  const nki::DeviceArray logical = mesh.logical_mesh();
  CHECK(logical.shape == nki::Shape{2, 4});
  CHECK(logical.at({0, 0}) == 7);
  CHECK(logical.at({0, 3}) == 4);
  CHECK(logical.at({1, 0}) == 3);
  CHECK(logical.at({1, 3}) == 0);
  CHECK(mesh.coordinates_of(5) == std::vector<std::int64_t>{0, 2});
  CHECK(mesh.coordinates_of(0) == std::vector<std::int64_t>{1, 3});
  CHECK(mesh.size() == 8);
  CHECK(mesh.rank() == 2);
}

TEST_CASE("mesh: shape() lists (name, size) in axis order") {
  const nki::Mesh mesh = nki::Mesh::iota({1, 2, 4}, {"r", "b", "m"});
  using P = std::pair<std::string, std::int64_t>;
  CHECK(mesh.shape() == std::vector<P>{{"r", 1}, {"b", 2}, {"m", 4}});
  CHECK(mesh.mesh_shape() == nki::Shape{1, 2, 4});
  CHECK(mesh.device_ids() == Ids{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(mesh.axis_index("b") == 1);
  CHECK(!mesh.axis_index("x").has_value());
  CHECK(mesh.str() == "{\"r\"=1, \"b\"=2, \"m\"=4}");
  CHECK(nki::Mesh({1, 0}, {2}, {"x"}).str() == "{\"x\"=2, device_ids=[1,0]}");
}

TEST_CASE("mesh: axis names may be left out, as torch_xla allows") {
  const nki::Mesh mesh = nki::Mesh::iota({2, 2});
  CHECK(mesh.shape()[0].first.empty());
  CHECK(mesh.axis_label(1) == "1");
}

TEST_CASE("mesh: the global mesh is unset until set_global_mesh") {
  if (!nki::has_global_mesh()) {
    CHECK(test::user_error_of([] { nki::global_mesh(); }) ==
          "err_no_global_mesh: no global mesh is set; call nki::set_global_mesh(mesh) first");
  }
  nki::set_global_mesh(nki::Mesh::iota({2, 4}, {"x", "y"}));
  CHECK(nki::has_global_mesh());
  CHECK(nki::global_mesh() == nki::Mesh::iota({2, 4}, {"x", "y"}));
}

TEST_CASE("mesh: the id count must equal the mesh size") {
  CHECK(test::user_error_of([] { nki::Mesh({0, 1, 2}, {2, 2}, {"x", "y"}); }) ==
        "err_invalid_mesh: 3 device ids for a mesh of shape [2,2] (4 devices)");
}

TEST_CASE("mesh: device ids must be unique") {
  CHECK(test::user_error_of([] { nki::Mesh({0, 1, 1, 3}, {2, 2}); }) ==
        "err_invalid_mesh: device id 1 appears twice in [0,1,1,3]");
}

TEST_CASE("mesh: device ids must be in range 0 to size - 1") {
  CHECK(test::user_error_of([] { nki::Mesh({0, 1, 2, 4}, {2, 2}); }) ==
        "err_invalid_mesh: device id 4 is out of range for a mesh of 4 devices (ids 0 to 3)");
  CHECK(test::user_error_of([] { nki::Mesh({0, -1, 2, 3}, {2, 2}); }) ==
        "err_invalid_mesh: device id -1 is out of range for a mesh of 4 devices (ids 0 to 3)");
}

TEST_CASE("mesh: axis names must be unique") {
  CHECK(test::user_error_of([] { nki::Mesh::iota({2, 2}, {"x", "x"}); }) ==
        "err_invalid_mesh: axis name 'x' is used for axes 0 and 1");
}

TEST_CASE("mesh: one axis name per dimension") {
  CHECK(test::user_error_of([] { nki::Mesh::iota({2, 2}, {"x"}); }) ==
        "err_invalid_mesh: 1 axis names for a mesh of rank 2 (shape [2,2]); give one name per dimension");
}

TEST_CASE("mesh: every dimension has at least one device") {
  CHECK(test::user_error_of([] { nki::Mesh({}, {2, 0}, {"x", "y"}); }) ==
        "err_invalid_mesh: mesh shape [2,0] has a dimension of size 0; sizes must be at least 1");
  CHECK(test::user_error_of([] { nki::Mesh({}, {}, {}); }) ==
        "err_invalid_mesh: a mesh needs at least one dimension; the shape is []");
}
