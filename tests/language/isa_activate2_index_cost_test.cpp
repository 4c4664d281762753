/**
 * \file isa::activate2 is one Scalar-engine instruction; isa::nonzero_with_count and
 * isa::sequence_bounds start with one GpSimd instruction whose arithmetic is fused; so does
 * isa::topk (charged by the GpSimd rule of its first op, not yet isa.py's 4n + K).
 */
#include "cost_support.h"
#include "lang_support.h"
#include "nki/isa_activate2.h"
#include "nki/isa_index_ops.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

/** The compute instructions of the kernel's elementwise, activation and reduce ops (not fused): engine and cycles. */
std::vector<nki::sim::Instruction> arithmetic(const nki::ir::KernelIR& ir) {
  return lt::charged_instructions(ir, [](const nki::ir::Op& op) {
    return std::holds_alternative<nki::ir::BinaryOp>(op) || std::holds_alternative<nki::ir::ActivationOp>(op) ||
           std::holds_alternative<nki::ir::ReduceOp>(op);
  });
}

}  // namespace

TEST_CASE("isa::activate2 cost: one Scalar instruction, the tensor-scalar steps, reduction and cast fused") {
  const nki::Kernel k = nki::jit("cost_activate2", [](nl::tensor a, nl::tensor b) {
    auto o = nl::ndarray(a.shape(), DType::bf16, nl::shared_hbm, "o");
    auto s = nl::ndarray({a.shape()[0], 1}, nl::float32, nl::shared_hbm, "s");
    auto res = nl::ndarray({nl::par_dim(a.shape()[0]), 1}, nl::float32, nl::sbuf, "res");
    auto imm = nl::load(b.all());
    nl::store(o.all(), isa::activate2(nl::exp, nl::load(a.all()), imm, 0.5, nl::multiply, nl::subtract,
                                      {.dtype = DType::bf16, .reverse1 = true, .reduce_op = nl::abs_max,
                                       .reduce_res = res[nl::_, nl::_], .reduce_cmd = isa::reduce_cmd::reset_reduce}));
    nl::store(s.all(), res);
    return std::make_tuple(o, s);
  });
  const auto ir = k.trace({{128, 512}, {128, 1}}, {DType::fp32, DType::fp32}, nki::GridSpec{})->ir;
  const auto ins = arithmetic(*ir);
  REQUIRE(ins.size() == 1);
  CHECK(ins[0].engine == nki::sim::Engine::scalar);
  CHECK(ins[0].cycles == nki::sim::scalar_cycles(512) + 60);
}

TEST_CASE("isa::nonzero_with_count and isa::sequence_bounds cost: one GpSimd instruction starts each") {
  const nki::Kernel nz = nki::jit("cost_nonzero", [](nl::tensor a) {
    auto o = nl::ndarray({a.shape()[0], a.shape()[1] + 1}, DType::int32, nl::shared_hbm, "o");
    auto buf = nl::ndarray({nl::par_dim(a.shape()[0]), a.shape()[1] + 1}, DType::int32, nl::sbuf, "buf");
    // (Only traced: the partitions the instruction skips are never filled.)
    isa::nonzero_with_count(buf[nl::_, nl::_], nl::load(a.all()), 5, -1);
    nl::store(o.all(), buf);
    return o;
  });
  const nki::Kernel sb = nki::jit("cost_bounds", [](nl::tensor a) {
    auto o = nl::ndarray({1, 2, a.shape()[1]}, a.dtype(), nl::shared_hbm, "o");
    nl::store(o.all(), isa::sequence_bounds(nl::load(a.all())));
    return o;
  });
  for (const DType dt : {DType::fp32, DType::int32}) {
    CAPTURE(nki::dtype_name(dt));
    for (const auto& [k, shape, n] : {std::tuple{&nz, nki::Shape{64, 100}, 100}, std::tuple{&sb, nki::Shape{1, 200}, 199}}) {
      const auto ir = k->trace({shape}, {dt}, nki::GridSpec{})->ir;
      const auto ins = arithmetic(*ir);
      REQUIRE(ins.size() == 1);
      CHECK(ins[0].engine == nki::sim::Engine::gpsimd);
      CHECK(ins[0].cycles == nki::sim::gpsimd_cycles(n) + 60);
    }
  }
}

TEST_CASE("isa::topk cost: one GpSimd instruction, the rounds' arithmetic fused") {
  const nki::Kernel k = nki::jit("cost_topk", [](nl::tensor a) {
    auto v = nl::ndarray({a.shape()[0], 4}, DType::bf16, nl::shared_hbm, "v");
    nl::store(v.all(), isa::topk(nl::load(a.all()), 40, 4).values);
    return v;
  });
  const auto ir = k.trace({{32, 3}}, {DType::bf16}, nki::GridSpec{})->ir;
  const auto ins = arithmetic(*ir);
  REQUIRE(ins.size() == 1);
  CHECK(ins[0].engine == nki::sim::Engine::gpsimd);
  CHECK(ins[0].cycles == nki::sim::gpsimd_cycles(3) + 60);
}
