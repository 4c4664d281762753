/** \file Cost rules of tensor_tensor_scan (Vector, two tile streams) and of tile views (free, or a copy across partitions). */
#include "test_support.h"

#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
using nki::sim::Engine;

TEST_CASE("cost rule - tensor_tensor_scan is a Vector pass over two tiles; a window is free, a partition broadcast a ones matmul") {
  const nki::Kernel k = nki::jit(
      "scan_and_views",
      [](nl::tensor a, nl::tensor b) {
        auto out = nl::ndarray({128, 512}, nl::float32, nl::shared_hbm, "out");
        auto t = nl::load(a.all());                           // (128, 512)
        auto row = nl::load(b.all()).broadcast_to({128, 512});  // [1, 512] -> [128, 512]: a Tensor-engine ones matmul
        auto s = nki::isa::tensor_tensor_scan(t, row, 0.0, nl::multiply, nl::add);
        auto last = s[nl::_, nl::ds(511, 1)];                 // (128, 1): a view
        nl::store(out.all(), nl::add(s, last));
        return out;
      },
      {"a", "b"});
  const auto ir = k.trace({{128, 512}, {1, 512}}, {nki::DType::fp32, nki::DType::fp32}, nki::GridSpec{})->ir;
  const nki::sim::TargetSpec& t = nki::sim::target_spec("trn2");
  std::vector<nki::sim::Instruction> views, scans;
  std::vector<bool> view_has;
  for (std::size_t i = 0; i < ir->body.size(); ++i) {
    nki::sim::Instruction in;
    const bool has = nki::sim::instruction_of(*ir, i, t, in);
    if (std::holds_alternative<nki::ir::ViewOp>(ir->body[i])) {
      view_has.push_back(has);
      views.push_back(in);
    }
    if (std::holds_alternative<nki::ir::ScanOp>(ir->body[i])) {
      REQUIRE(has);
      scans.push_back(in);
    }
  }
  REQUIRE(scans.size() == 1);
  CHECK(scans[0].engine == Engine::vector);
  CHECK(scans[0].cycles == 2 * 512 + 60);
  CHECK(scans[0].what == "tensor_tensor_scan multiply add [128,512]");
  REQUIRE(views.size() == 2);
  CHECK(view_has == std::vector<bool>{true, false});  // the broadcast copies; the column is a view
  CHECK(views[0].engine == Engine::tensor);  // as an elementwise op's partition broadcast: max(min(64, P), N) x4 (fp32)
  CHECK(views[0].cycles == 4 * 512 + 60);
  CHECK(views[0].what == "partition_broadcast [1,512] to [128,512]");
}
