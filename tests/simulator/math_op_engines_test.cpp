/** \file The engines and cycles of the math, bitwise and reduction ops the cost model gives. */
#include "test_support.h"

#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
using nki::sim::Engine;

namespace {

/** Every instruction of the kernel's compute ops, in program order, with its op label. */
std::vector<std::pair<std::string, nki::sim::Instruction>> compute_instructions(const nki::ir::KernelIR& ir) {
  std::vector<std::pair<std::string, nki::sim::Instruction>> out;
  for (std::size_t i = 0; i < ir.body.size(); ++i) {
    const bool compute = std::holds_alternative<nki::ir::ActivationOp>(ir.body[i]) ||
                         std::holds_alternative<nki::ir::BinaryOp>(ir.body[i]) ||
                         std::holds_alternative<nki::ir::ReduceOp>(ir.body[i]);
    if (!compute) continue;
    nki::sim::Instruction in;
    REQUIRE(nki::sim::instruction_of(ir, i, nki::sim::target_spec("trn1"), in));
    out.emplace_back(in.what, in);
  }
  return out;
}

}  // namespace

TEST_CASE("cost rule - new activations and prelu on the Scalar engine, bitwise and logical ops on the Vector engine, var twice a reduction") {
  const nki::Kernel k = nki::jit(
      "math_engines",
      [](nl::tensor a, nl::tensor b) {
        auto out = nl::ndarray({128, 512}, nl::float32, nl::shared_hbm, "out");
        auto bits = nl::ndarray({128, 512}, nl::int32, nl::shared_hbm, "bits");
        auto red = nl::ndarray({128, 3}, nl::float32, nl::shared_hbm, "red");
        auto x = nl::load(a.all());  // (128, 512) fp32
        auto i = nl::load(b.all());  // (128, 512) int32
        auto s = nl::gelu_apprx_tanh(nl::sin(x));
        auto p = nl::prelu(s, 0.1);
        nl::store(out.all(), nl::logical_xor(p, nl::abs_max(p, x)));
        nl::store(bits.all(), nl::left_shift(nl::bitwise_and(i, 255), 2));
        nl::store(red[nl::_, nl::ds(0, 1)], nl::var(x, 1));
        nl::store(red[nl::_, nl::ds(1, 1)], nl::prod(x, 1, {.keepdims = true}));
        nl::store(red[nl::_, nl::ds(2, 1)], nl::all(x, 1, {.keepdims = true}));
        return std::make_tuple(out, bits, red);
      },
      {"a", "b"});
  const auto ir = k.trace({{128, 512}, {128, 512}}, {nki::DType::fp32, nki::DType::int32}, nki::GridSpec{})->ir;
  const auto ins = compute_instructions(*ir);
  REQUIRE(ins.size() == 10);
  const std::pair<const char*, Engine> want[] = {
      {"activation sin [128,512]", Engine::scalar},
      {"activation gelu_apprx_tanh [128,512]", Engine::scalar},
      {"activation prelu [128,512]", Engine::scalar},
      {"tensor_tensor abs_max [128,512]", Engine::vector},
      {"tensor_tensor logical_xor [128,512]", Engine::vector},
      {"tensor_tensor bitwise_and [128,512]", Engine::vector},
      {"tensor_tensor left_shift [128,512]", Engine::vector},
      {"tensor_reduce var [128,512]", Engine::vector},
      {"tensor_reduce prod [128,512]", Engine::vector},
      {"tensor_reduce all [128,512]", Engine::vector},
  };
  for (std::size_t q = 0; q < std::size(want); ++q) {
    CAPTURE(q);
    CHECK(ins[q].first == want[q].first);
    CHECK(ins[q].second.engine == want[q].second);
  }
  CHECK(ins[0].second.cycles == 512 + 60);      // Scalar: max(64, N) plus the access bubble
  CHECK(ins[2].second.cycles == 512 + 60);      // prelu as an activation
  CHECK(ins[3].second.cycles == 2 * 512 + 60);  // two tile operands
  CHECK(ins[5].second.cycles == 512 + 60);      // a tile and a scalar
  CHECK(ins[7].second.cycles == 2 * 512 + 60);  // var: two passes
  CHECK(ins[8].second.cycles == 512 + 60);
  CHECK(ins[9].second.cycles == 512 + 60);
}
