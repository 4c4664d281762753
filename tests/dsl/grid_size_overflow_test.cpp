/** \file Grids too large to count: err_grid_too_large instead of a signed overflow (found by fuzzing). */
#include "nki/grid.h"
#include "test_support.h"

namespace nl = nki::language;

TEST_CASE("a grid spec whose instance count overflows 64 bits is refused by name") {
  // The grid fuzz target's first find: the product of these sizes overflowed int64 (UBSan).
  CHECK(test::user_error_of([] { nki::parse_grid("4,4,4844,4,44,4,4,44,44,80,4,4,44,844,4,4"); }) ==
        "err_grid_too_large: grid \"4,4,4844,4,44,4,4,44,44,80,4,4,44,844,4,4\" has more instances than fit in 64 "
        "bits");
  CHECK(test::user_error_of([] { nki::parse_grid("spmd_dim(4294967296,nc(4294967296))"); }) ==
        "err_grid_too_large: grid \"spmd_dim(4294967296,nc(4294967296))\" has more instances than fit in 64 bits");
  CHECK(test::user_error_of([] { nki::parse_grid("nc(3037000500),nc(3037000500)"); }) ==
        "err_grid_too_large: grid \"nc(3037000500),nc(3037000500)\" has more instances than fit in 64 bits");
}

TEST_CASE("a grid built in C++ whose size overflows is refused when counted") {
  const nki::GridSpec g{{nl::spmd_dim(std::int64_t{1} << 40, std::int64_t{1} << 40)}};
  CHECK(test::user_error_of([&] { (void)g.instances(); }) ==
        "err_grid_too_large: grid \"spmd_dim(1099511627776,1099511627776)\" has more instances than fit in 64 bits");
  // The largest grid that still counts is counted exactly.
  CHECK(nki::parse_grid("3037000499,3037000499").instances() == std::int64_t{3037000499} * 3037000499);
}
