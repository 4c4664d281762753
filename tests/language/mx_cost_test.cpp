/** \file The MX instructions in the cost model: quantize_mx one Vector instruction (its scale fused), nc_matmul_mx one Tensor instruction. */
#include "lang_support.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

TEST_CASE("MX cost: quantize_mx on the Vector engine with its scale fused, nc_matmul_mx on the Tensor engine") {
  const nki::Kernel k = nki::jit("cost_mx", [](nl::tensor a, nl::tensor b) {
    auto o = nl::ndarray({128, 64}, nl::float32, nl::shared_hbm, "o");
    auto qa = isa::quantize_mx(nl::load(a.all()), nl::float8_e4m3fn_x4);
    auto qb = isa::quantize_mx(nl::load(b.all()), nl::float8_e5m2_x4);
    nl::store(o.all(), isa::nc_matmul_mx(qa.data, qb.data, qa.scale, qb.scale));
    return o;
  });
  const auto ir = k.trace({{64, 512}, {64, 256}}, {DType::bf16, DType::bf16}, nki::GridSpec{})->ir;
  std::vector<nki::sim::Instruction> ins;
  int fused = 0;
  for (std::size_t i = 0; i < ir->body.size(); ++i) {
    const auto& op = ir->body[i];
    if (std::holds_alternative<nki::ir::LoadOp>(op) || std::holds_alternative<nki::ir::StoreOp>(op)) continue;
    nki::sim::Instruction in;
    REQUIRE(nki::sim::instruction_of(*ir, i, nki::sim::target_spec("trn2"), in));
    if (in.what.ends_with("(fused)")) {
      CHECK(in.cycles == 0);
      CHECK(in.engine == nki::sim::Engine::vector);
      ++fused;
      continue;
    }
    ins.push_back(in);
  }
  CHECK(fused == 2);  // the two scale outputs
  REQUIRE(ins.size() == 3);
  CHECK(ins[0].engine == nki::sim::Engine::vector);
  CHECK(ins[1].engine == nki::sim::Engine::vector);
  CHECK(ins[2].engine == nki::sim::Engine::tensor);
  // One pass over each source: the difference is the difference of the Vector rule's passes.
  CHECK(ins[0].cycles - ins[1].cycles == nki::sim::vector_cycles(512, 1) - nki::sim::vector_cycles(256, 1));
  CHECK(ins[2].cycles >= nki::sim::matmul_cycles(128, 64, false));
  CHECK(ins[2].flops == 2 * 4 * 64 * 128 * 64);  // 4 values per packed element along K
}
