/** \file Grid placement: every worked case of NKI's spmd_dim / nc semantics, and the rule without nc. */
#include "nki/placement.h"
#include "test_support.h"

namespace nl = nki::language;
using Ids = std::vector<std::vector<std::int64_t>>;

namespace {
nki::GridSpec grid(std::initializer_list<nl::grid_arg> axes) {
  nki::GridSpec g;
  for (const auto& a : axes) g.axes.push_back(a.axis);
  return g;
}
}  // namespace

TEST_CASE("spmd_dim(nc(2), 2), 2: NC0 runs [0,*] and [1,*], NC1 runs [2,*] and [3,*]") {
  auto cores = nki::place_instances(grid({nl::spmd_dim(nl::nc(2), 2), 2}), 2);
  REQUIRE(cores.size() == 2);
  CHECK(cores[0].instances == Ids{{0, 0}, {0, 1}, {1, 0}, {1, 1}});
  CHECK(cores[1].instances == Ids{{2, 0}, {2, 1}, {3, 0}, {3, 1}});
}

TEST_CASE("spmd_dim(2, nc(2)), 2: NC0 runs [0,*] and [2,*], NC1 runs [1,*] and [3,*]") {
  auto cores = nki::place_instances(grid({nl::spmd_dim(2, nl::nc(2)), 2}), 2);
  CHECK(cores[0].instances == Ids{{0, 0}, {0, 1}, {2, 0}, {2, 1}});
  CHECK(cores[1].instances == Ids{{1, 0}, {1, 1}, {3, 0}, {3, 1}});
}

TEST_CASE("nc(2), 2: NC c runs [c,*]") {
  auto cores = nki::place_instances(grid({nl::nc(2), 2}), 2);
  CHECK(cores[0].instances == Ids{{0, 0}, {0, 1}});
  CHECK(cores[1].instances == Ids{{1, 0}, {1, 1}});
}

TEST_CASE("4, 2 without nc: every instance on NC0 in row-major order, NC1 idle") {
  auto cores = nki::place_instances(grid({4, 2}), 2);
  CHECK(cores[0].instances == Ids{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {3, 0}, {3, 1}});
  CHECK(cores[1].instances.empty());
}

TEST_CASE("sugar: nc(2) * 2 is spmd_dim(nc(2), 2) and 2 * nc(2) is spmd_dim(2, nc(2))") {
  CHECK(nl::nc(2) * 2 == nl::spmd_dim(nl::nc(2), 2));
  CHECK(2 * nl::nc(2) == nl::spmd_dim(2, nl::nc(2)));
  CHECK(nki::place_instances(grid({nl::nc(2) * 2, 2}), 2)[1].instances == Ids{{2, 0}, {2, 1}, {3, 0}, {3, 1}});
  CHECK(nki::place_instances(grid({2 * nl::nc(2), 2}), 2)[1].instances == Ids{{1, 0}, {1, 1}, {3, 0}, {3, 1}});
}

TEST_CASE("the multi-core tutorial grid: spmd_dim(2, nc(2)), 4 puts even program_id(0) on NC0, odd on NC1, 8 each") {
  auto cores = nki::place_instances(grid({nl::spmd_dim(2, nl::nc(2)), 4}), 2);
  REQUIRE(cores[0].instances.size() == 8);
  REQUIRE(cores[1].instances.size() == 8);
  for (const auto& pid : cores[0].instances) CHECK(pid[0] % 2 == 0);
  for (const auto& pid : cores[1].instances) CHECK(pid[0] % 2 == 1);
  CHECK(cores[0].instances.front() == std::vector<std::int64_t>{0, 0});
  CHECK(cores[0].instances.back() == std::vector<std::int64_t>{2, 3});
}

TEST_CASE("nc factors on two axes combine row-major into the core index") {
  auto cores = nki::place_instances(grid({nl::nc(2), nl::spmd_dim(1, nl::nc(2))}), 4);
  CHECK(cores[0].instances == Ids{{0, 0}});
  CHECK(cores[1].instances == Ids{{0, 1}});
  CHECK(cores[2].instances == Ids{{1, 0}});
  CHECK(cores[3].instances == Ids{{1, 1}});
}

TEST_CASE("three axes with nc factors inside spmd_dims: each instance on the core its nc indices spell") {
  // spmd_dim(3, nc(2), 2) is one axis of 12 with index (i3 * 2 + i_nc) * 2 + i2; the core is the
  // row-major combination of the nc indices over the axes: nc of axis 0 (size 2) then axis 2's.
  auto cores = nki::place_instances(grid({nl::spmd_dim(3, nl::nc(2), 2), 5, nl::spmd_dim(nl::nc(2), 3)}), 4);
  std::int64_t placed = 0;
  for (const nki::CoreSchedule& c : cores) {
    std::vector<std::int64_t> previous;
    for (const std::vector<std::int64_t>& id : c.instances) {
      REQUIRE(id.size() == 3);
      const std::int64_t nc0 = id[0] / 2 % 2, nc2 = id[2] / 3;
      CHECK(c.nc == nc0 * 2 + nc2);
      CHECK(previous < id);  // row-major order on each core
      previous = id;
      ++placed;
    }
    CHECK(c.instances.size() == 12 * 5 * 6 / 4);
  }
  CHECK(placed == 12 * 5 * 6);
}

TEST_CASE("a grid without axes is one instance on NC0") {
  auto cores = nki::place_instances(nki::GridSpec{}, 2);
  CHECK(cores[0].instances == Ids{{}});
  CHECK(cores[1].instances.empty());
}

TEST_CASE("a grid needing more cores than the device has is refused") {
  CHECK(test::user_error_of([] { nki::place_instances(grid({nl::nc(4), 2}), 2); }) ==
        "err_grid_exceeds_cores: grid \"nc(4),2\" spreads over 4 NeuronCores but the device has 2");
}

TEST_CASE("a grid axis of size zero is refused") {
  CHECK(test::user_error_of([] { nki::place_instances(grid({0, 2}), 2); }) ==
        "err_invalid_grid: grid \"0,2\" has a factor of size 0; sizes must be positive");
}

namespace {
std::vector<std::uint32_t> runs_of(const nki::InstanceIds& ids) { return {ids.runs().begin(), ids.runs().end()}; }
}  // namespace

TEST_CASE("a core's ids come in runs that step by one in the last axis alone, the unit of one compiled call") {
  auto cores = nki::place_instances(grid({nl::spmd_dim(2, nl::nc(2)), 3}), 2);
  CHECK(runs_of(cores[0].instances) == std::vector<std::uint32_t>{3, 3});  // [0,0..2], [2,0..2]
  CHECK(runs_of(cores[1].instances) == std::vector<std::uint32_t>{3, 3});
  CHECK(runs_of(nki::place_instances(grid({4, 1}), 1)[0].instances) == std::vector<std::uint32_t>{1, 1, 1, 1});
  const auto alternate = nki::place_instances(grid({2, nl::spmd_dim(2, nl::nc(2))}), 2);
  CHECK(alternate[0].instances == Ids{{0, 0}, {0, 2}, {1, 0}, {1, 2}});  // the last axis steps by two on a core
  CHECK(runs_of(alternate[0].instances) == std::vector<std::uint32_t>{1, 1, 1, 1});
  CHECK(runs_of(nki::place_instances(nki::GridSpec{}, 1)[0].instances) == std::vector<std::uint32_t>{1});
  nki::InstanceIds by_hand;  // appended out of order: a run breaks where an id does not follow
  for (const std::vector<std::int64_t>& id : Ids{{0, 1}, {0, 2}, {1, 3}, {1, 4}, {1, 5}, {1, 4}, {2, 0}})
    by_hand.push_back(id);
  CHECK(runs_of(by_hand) == std::vector<std::uint32_t>{2, 3, 1, 1});
  nki::InstanceIds copy = by_hand;  // a copy shares the ids until it appends
  copy.push_back(std::vector<std::int64_t>{2, 1});
  CHECK(runs_of(copy) == std::vector<std::uint32_t>{2, 3, 1, 2});
  CHECK(runs_of(by_hand) == std::vector<std::uint32_t>{2, 3, 1, 1});
  CHECK(by_hand.size() == 7);
  CHECK(copy.size() == 8);
}

TEST_CASE("placement_of remembers placements: the same ids as place_instances, for more grids than it keeps") {
  for (int round = 0; round < 2; ++round) {  // the second round finds some grids kept and places the others anew
    for (std::int64_t rows = 1; rows <= 20; ++rows) {
      const nki::GridSpec g = grid({nl::spmd_dim(rows, nl::nc(2)), 3});
      CAPTURE(rows);
      const auto kept = nki::placement_of(g, 2), placed = nki::place_instances(g, 2);
      REQUIRE(kept.size() == placed.size());
      for (std::size_t c = 0; c < kept.size(); ++c) {
        CHECK(kept[c].nc == placed[c].nc);
        CHECK(kept[c].instances == placed[c].instances);
        CHECK(runs_of(kept[c].instances) == runs_of(placed[c].instances));
      }
    }
  }
  // The device's cores and a logical core's spread are part of what is kept.
  CHECK(nki::placement_of(grid({4, 2}), 2, "", 2)[1].instances == Ids{{2, 0}, {2, 1}, {3, 0}, {3, 1}});
  CHECK(nki::placement_of(grid({4, 2}), 2)[1].instances.empty());
  CHECK(nki::placement_of(grid({4, 2}), 1).size() == 1);
  // A grid refused is refused every time, never kept.
  for (int i = 0; i < 2; ++i)
    CHECK(test::user_error_of([] { nki::placement_of(grid({nl::nc(4), 2}), 2); }) ==
          "err_grid_exceeds_cores: grid \"nc(4),2\" spreads over 4 NeuronCores but the device has 2");
}
