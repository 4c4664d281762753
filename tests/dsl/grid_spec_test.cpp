/** \file Grid specs in NKI's spelling: parsing, printing, logical shape and cores. */
#include "nki/grid.h"
#include "test_support.h"

namespace nl = nki::language;

TEST_CASE("grid specs parse to the axes NKI's launch syntax builds") {
  CHECK(nki::parse_grid("4,2").axes == std::vector<nki::GridAxis>{4, 2});
  CHECK(nki::parse_grid("spmd_dim(2,nc(2)),4").axes == std::vector<nki::GridAxis>{nl::spmd_dim(2, nl::nc(2)), 4});
  CHECK(nki::parse_grid("nc(2)*2,2").axes == std::vector<nki::GridAxis>{nl::nc(2) * 2, 2});
  CHECK(nki::parse_grid(" 2 * nc(2) , 3 ").axes == std::vector<nki::GridAxis>{2 * nl::nc(2), 3});
  CHECK(nki::parse_grid("nc(2)").axes == std::vector<nki::GridAxis>{nl::spmd_dim(nl::nc(2))});
}

TEST_CASE("grid specs print in NKI spelling and parse back") {
  for (const char* text : {"4,2", "spmd_dim(2,nc(2)),4", "spmd_dim(nc(2),2),4", "nc(2),2", "8"}) {
    const nki::GridSpec g = nki::parse_grid(text);
    CHECK(g.str() == text);
    CHECK(nki::parse_grid(g.str()) == g);
  }
  CHECK(nki::parse_grid("nc(2)*2,2").str() == "spmd_dim(nc(2),2),2");
}

TEST_CASE("logical shape, instance count and NeuronCores of a grid") {
  const nki::GridSpec g = nki::parse_grid("spmd_dim(2,nc(2)),4");
  CHECK(g.logical_shape() == std::vector<std::int64_t>{4, 4});
  CHECK(g.instances() == 16);
  CHECK(g.nc_cores() == 2);
  CHECK(nki::parse_grid("4,2").nc_cores() == 1);
}

TEST_CASE("unparsable grids name the text, the position and what was expected") {
  CHECK(test::user_error_of([] { nki::parse_grid("spmd_dim(2,nc(2)"); }) ==
        "err_invalid_grid: cannot parse grid \"spmd_dim(2,nc(2)\" at position 16: expected ')' (examples: \"4,2\", "
        "\"spmd_dim(2,nc(2)),4\", \"nc(2)*2,2\")");
  CHECK(test::user_error_of([] { nki::parse_grid("4,,2"); }) ==
        "err_invalid_grid: cannot parse grid \"4,,2\" at position 2: expected a positive integer (examples: \"4,2\", "
        "\"spmd_dim(2,nc(2)),4\", \"nc(2)*2,2\")");
  CHECK(test::user_error_of([] { nki::parse_grid("0,2"); }) ==
        "err_invalid_grid: cannot parse grid \"0,2\" at position 0: expected a positive integer (examples: \"4,2\", "
        "\"spmd_dim(2,nc(2)),4\", \"nc(2)*2,2\")");
  CHECK(test::user_error_of([] { nki::parse_grid("4x2"); }) ==
        "err_invalid_grid: cannot parse grid \"4x2\" at position 1: expected ',' or the end (examples: \"4,2\", "
        "\"spmd_dim(2,nc(2)),4\", \"nc(2)*2,2\")");
  CHECK(test::user_error_of([] { nki::parse_grid(""); }) ==
        "err_invalid_grid: cannot parse grid \"\" at position 0: expected an axis (examples: \"4,2\", "
        "\"spmd_dim(2,nc(2)),4\", \"nc(2)*2,2\")");
}

TEST_CASE("grid specs parse as Python writes them - brackets, tuples and the nl. prefix") {
  const std::vector<nki::GridAxis> four_by_four{4, 4};
  CHECK(nki::parse_grid("[4,4]").axes == four_by_four);
  CHECK(nki::parse_grid("(4, 4)").axes == four_by_four);
  CHECK(nki::parse_grid(" [ 4 , 4 ] ").axes == four_by_four);
  CHECK(nki::parse_grid("(8,)").axes == std::vector<nki::GridAxis>{8});
  CHECK(nki::parse_grid("nl.spmd_dim(2, nl.nc(2)), 4").axes ==
        std::vector<nki::GridAxis>{nl::spmd_dim(2, nl::nc(2)), 4});
  CHECK(nki::parse_grid("[nki.language.nc(2) * 2]").axes == std::vector<nki::GridAxis>{nl::nc(2) * 2});
  CHECK(test::user_error_of([] { nki::parse_grid("[4,4"); }) ==
        "err_invalid_grid: cannot parse grid \"[4,4\" at position 4: expected ']' (examples: \"4,2\", "
        "\"spmd_dim(2,nc(2)),4\", \"nc(2)*2,2\")");
  CHECK(test::user_error_of([] { nki::parse_grid("[4],2"); }) ==
        "err_invalid_grid: cannot parse grid \"[4],2\" at position 3: expected the end after the closing bracket "
        "(examples: \"4,2\", \"spmd_dim(2,nc(2)),4\", \"nc(2)*2,2\")");
  CHECK(test::user_error_of([] { nki::parse_grid("np.nc(2)"); }) ==
        "err_invalid_grid: cannot parse grid \"np.nc(2)\" at position 0: expected a positive integer (examples: "
        "\"4,2\", \"spmd_dim(2,nc(2)),4\", \"nc(2)*2,2\")");
}
