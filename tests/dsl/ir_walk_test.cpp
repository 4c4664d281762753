/** \file ir::LoopNest on a traced kernel with nested loops: enclosing loops, depths, ends and each level's ops. */
#include "nki/ir/walk.h"
#include "nki/kernels.h"
#include "nki/traced_kernel.h"
#include "test_support.h"

namespace nl = nki::language;

namespace {

std::vector<int> to_vector(std::span<const int> s) { return {s.begin(), s.end()}; }

std::vector<std::size_t> indices_of(const nki::ir::LoopNest::Level& level) {
  std::vector<std::size_t> v;
  for (std::size_t i : level) v.push_back(i);
  return v;
}

}  // namespace

TEST_CASE("the loop nest of a traced kernel: enclosing loops, depths, ends and each level in order") {
  // Two loops at top level, the first holding a two-deep nest; each body loads and stores.
  const nki::Kernel nested_loops = nki::jit("walk_nested", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(64)[nl::newaxis, nl::_];
    auto jh = nl::arange(32)[nl::newaxis, nl::_];
    for (auto i : nl::affine_range(2)) {            // loop 0
      auto x = nl::load(a[i * 128 + ip, jf]);
      for (auto j : nl::sequential_range(3)) {      // loop 1
        (void)j;
        for (auto h : nl::affine_range(2)) {        // loop 2
          auto y = nl::load(a[i * 128 + ip, h * 32 + jh]);
          nl::store(out[i * 128 + ip, h * 32 + jh], y);
        }
      }
      nl::store(out[i * 128 + ip, jf], x);
    }
    for (auto k : nl::affine_range(2)) {            // loop 3
      auto z = nl::load(a[k * 128 + ip, jf]);
      nl::store(out[k * 128 + ip, jf], z);
    }
    return out;
  });
  const auto traced = nested_loops.trace({{256, 64}}, {nki::DType::fp32}, nki::GridSpec{});
  const nki::ir::KernelIR& k = *traced->ir;
  // 0 loop l0 | 1 load | 2 loop l1 | 3 loop l2 | 4 load | 5 store | 6 end l2 | 7 end l1 | 8 store | 9 end l0
  // 10 loop l3 | 11 load | 12 store | 13 end l3
  REQUIRE(k.body.size() == 14);
  REQUIRE(k.loops.size() == 4);
  const nki::ir::LoopNest nest(k);

  const std::vector<std::vector<int>> enclosing = {
      {}, {0}, {0}, {0, 1}, {0, 1, 2}, {0, 1, 2}, {0, 1}, {0}, {0}, {}, {}, {3}, {3}, {}};
  for (std::size_t i = 0; i < k.body.size(); ++i) {
    CAPTURE(i);
    CHECK(to_vector(nest.enclosing(i)) == enclosing[i]);
    CHECK(nest.depth(i) == enclosing[i].size());
    CHECK(nest.innermost(i) == (enclosing[i].empty() ? -1 : enclosing[i].back()));
    const bool marker = i == 0 || i == 2 || i == 3 || i == 6 || i == 7 || i == 9 || i == 10 || i == 13;
    CHECK(nki::ir::is_loop_marker(k.body[i]) == marker);
  }

  const std::vector<std::size_t> begins = {0, 2, 3, 10}, ends = {9, 7, 6, 13};
  for (int l = 0; l < 4; ++l) {
    CAPTURE(l);
    CHECK(nest.begin(l) == begins[static_cast<std::size_t>(l)]);
    CHECK(nest.end(l) == ends[static_cast<std::size_t>(l)]);
    CHECK(std::get<nki::ir::LoopOp>(k.body[nest.begin(l)]).end == static_cast<int>(nest.end(l)));
    CHECK(std::get<nki::ir::LoopEndOp>(k.body[nest.end(l)]).loop == l);
    CHECK(nest.innermost(nest.begin(l)) == k.loops[static_cast<std::size_t>(l)].parent);  // the trace's parents
  }
  CHECK(nest.within(2, 0));
  CHECK(nest.within(2, 1));
  CHECK(nest.within(1, 1));
  CHECK_FALSE(nest.within(0, 2));
  CHECK_FALSE(nest.within(3, 0));
  CHECK_FALSE(nest.within(0, 3));

  CHECK(indices_of(nest.level(-1)) == std::vector<std::size_t>{0, 10});
  CHECK(indices_of(nest.level(0)) == std::vector<std::size_t>{1, 2, 8});
  CHECK(indices_of(nest.level(1)) == std::vector<std::size_t>{3});
  CHECK(indices_of(nest.level(2)) == std::vector<std::size_t>{4, 5});
  CHECK(indices_of(nest.level(3)) == std::vector<std::size_t>{11, 12});

  // An executor's walk: each level in order, into every loop once per iteration.
  std::vector<std::string> visits;
  auto run = [&](auto& self, int loop) -> void {
    for (std::size_t i : nest.level(loop)) {
      if (const auto* l = std::get_if<nki::ir::LoopOp>(&k.body[i])) {
        for (std::int64_t it = 0; it < k.loops[static_cast<std::size_t>(l->loop)].trip; ++it) {
          visits.push_back(fmt::format("l{}={}", l->loop, it));
          self(self, l->loop);
        }
        continue;
      }
      visits.push_back(std::to_string(i));
    }
  };
  run(run, -1);
  const std::vector<std::string> inner = {"l1=0", "l2=0", "4", "5", "l2=1", "4", "5", "l1=1", "l2=0", "4", "5",
                                          "l2=1", "4", "5", "l1=2", "l2=0", "4", "5", "l2=1", "4", "5"};
  std::vector<std::string> want;
  for (const char* it : {"l0=0", "l0=1"}) {
    want.push_back(it);
    want.push_back("1");
    want.insert(want.end(), inner.begin(), inner.end());
    want.push_back("8");
  }
  want.insert(want.end(), {"l3=0", "11", "12", "l3=1", "11", "12"});
  CHECK(visits == want);
}

TEST_CASE("a kernel without loops is one level of every op, nothing enclosed") {
  const auto traced = nki::kernels::tensor_add().trace({{128, 512}, {128, 512}}, {nki::DType::fp32, nki::DType::fp32},
                                                       nki::parse_grid("1,1"));
  const nki::ir::LoopNest nest(*traced->ir);
  const std::size_t n = traced->ir->body.size();
  REQUIRE(n == 4);
  CHECK(indices_of(nest.level(-1)) == std::vector<std::size_t>{0, 1, 2, 3});
  for (std::size_t i = 0; i < n; ++i) {
    CHECK(nest.depth(i) == 0);
    CHECK(nest.innermost(i) == -1);
  }
}

TEST_CASE("loop markers that do not nest are an internal error") {
  nki::ir::KernelIR k;
  k.name = "broken";
  k.loops = {{2, nki::ir::LoopKind::affine, -1, {}}, {2, nki::ir::LoopKind::affine, 0, {}}};
  k.body = {nki::ir::LoopOp{0, 3, {}}, nki::ir::LoopOp{1, 4, {}}, nki::ir::AllocOp{}, nki::ir::LoopEndOp{0},
            nki::ir::LoopEndOp{1}};
  CHECK_THROWS_AS(nki::ir::LoopNest{k}, nki::InternalError);
  k.body = {nki::ir::LoopOp{0, 2, {}}, nki::ir::AllocOp{}};  // never closed
  CHECK_THROWS_AS(nki::ir::LoopNest{k}, nki::InternalError);
  k.body = {nki::ir::LoopOp{0, 2, {}}, nki::ir::LoopEndOp{0}};  // its end field disagrees
  CHECK_THROWS_AS(nki::ir::LoopNest{k}, nki::InternalError);
  k.body = {nki::ir::LoopOp{0, 1, {}}, nki::ir::LoopEndOp{0}};
  CHECK(nki::ir::LoopNest(k).end(0) == 1);
}
