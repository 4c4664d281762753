/** \file A random-number call is one instruction in the cost model, on the engine NKI names; its other ops are fused. */
#include "cost_support.h"
#include "lang_support.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

/** The compute instructions of the kernel (not fused, not views, not loads and stores): engine and cycles. */
std::vector<nki::sim::Instruction> instructions(const nki::ir::KernelIR& ir) {
  return lt::charged_instructions(ir, [](const nki::ir::Op& op) {
    return !std::holds_alternative<nki::ir::LoadOp>(op) && !std::holds_alternative<nki::ir::StoreOp>(op);
  });
}

}  // namespace

TEST_CASE("random ops: one instruction per call on the engine NKI names, the rest fused") {
  // Each case is a kernel of one random call and the store of its result.
  struct Case {
    const char* name;
    nki::sim::Engine engine;
    std::int64_t cycles;
  };
  const std::int64_t n = 512;
  const Case cases[] = {
      {"rand", nki::sim::Engine::vector, nki::sim::vector_cycles(n, 1) + 60},
      {"rng_gpsimd", nki::sim::Engine::gpsimd, nki::sim::gpsimd_cycles(n) + 60},
      {"rng_vector", nki::sim::Engine::vector, nki::sim::vector_cycles(n, 1) + 60},
      {"rand2", nki::sim::Engine::vector, nki::sim::vector_cycles(n, 1) + 60},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    static std::string which;
    which = c.name;
    const nki::Kernel k = nki::jit(fmt::format("cost_{}", c.name), []() {
      auto o = nl::ndarray({128, 512}, which.starts_with("rng") ? nl::uint32 : nl::float32, nl::shared_hbm, "o");
      nl::tile r = which == "rand"         ? nl::rand({128, 512}, nl::float32)
                   : which == "rng_gpsimd" ? isa::rng({128, 512}, {.engine = isa::gpsimd_engine})
                   : which == "rng_vector" ? isa::rng({128, 512})
                                           : isa::rand2({128, 512}, 1.0, 2.0);
      nl::store(o.all(), r);
      return o;
    });
    const auto ir = k.trace({}, {}, nki::GridSpec{})->ir;
    REQUIRE(ir->body.size() > 40);  // the hash's rounds are there, fused
    const auto ins = instructions(*ir);
    REQUIRE(ins.size() == 1);
    CHECK(ins[0].engine == c.engine);
    CHECK(ins[0].cycles == c.cycles);
  }
}

TEST_CASE("random ops: dropout is one Vector instruction, a seed is its lane spread plus one instruction") {
  const nki::Kernel k = nki::jit("cost_dropout", [](nl::tensor a, nl::tensor seed) {
    auto o = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o");
    auto x = nl::load(a.all());
    auto s = nl::load(seed.all());
    nl::random_seed(s);
    nl::store(o.all(), isa::dropout(x, 0.25));
    return o;
  });
  const auto ir = k.trace({{128, 512}, {1, 1}}, {DType::fp32, DType::int32}, nki::GridSpec{})->ir;
  const auto ins = instructions(*ir);
  REQUIRE(ins.size() == 3);  // the seed's spread to 128 lanes, the seed's key op, dropout
  CHECK(ins[1].engine == nki::sim::Engine::vector);
  CHECK(ins[2].engine == nki::sim::Engine::vector);
  CHECK(ins[2].cycles == nki::sim::vector_cycles(512, 2) + 60);  // position ^ key: the key is a [P, 1] tile
}
