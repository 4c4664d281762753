/** \file The published cost rules, each on single instructions, with exact cycles and microseconds. */
#include "test_support.h"

#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
using nki::sim::Engine;

namespace {

const nki::sim::TargetSpec& trn1() { return nki::sim::target_spec("trn1"); }
const nki::sim::TargetSpec& trn2() { return nki::sim::target_spec("trn2"); }

/** The instruction of the first op of kind T in a traced kernel. */
template <class T>
nki::sim::Instruction first_instruction(const nki::ir::KernelIR& ir, const nki::sim::TargetSpec& t, int skip = 0) {
  for (std::size_t i = 0; i < ir.body.size(); ++i) {
    if (!std::holds_alternative<T>(ir.body[i])) continue;
    if (skip-- > 0) continue;
    nki::sim::Instruction in;
    REQUIRE(nki::sim::instruction_of(ir, i, t, in));
    return in;
  }
  FAIL("no such op");
  return {};
}

}  // namespace

TEST_CASE("cost rule - nc_matmul: max(min(64, stationary free), moving free) cycles, 4x for fp32") {
  CHECK(nki::sim::matmul_cycles(128, 512, false) == 512);
  CHECK(nki::sim::matmul_cycles(128, 512, true) == 2048);
  CHECK(nki::sim::matmul_cycles(128, 16, false) == 64);
  CHECK(nki::sim::matmul_cycles(32, 16, false) == 32);
}

TEST_CASE("cost rule - Vector N per input with a 64-cycle minimum, Scalar max(64, N), GpSimd 150 + N") {
  CHECK(nki::sim::vector_cycles(512, 1) == 512);
  CHECK(nki::sim::vector_cycles(512, 2) == 1024);
  CHECK(nki::sim::vector_cycles(16, 1) == 64);
  CHECK(nki::sim::scalar_cycles(10) == 64);
  CHECK(nki::sim::scalar_cycles(1000) == 1000);
  CHECK(nki::sim::gpsimd_cycles(512) == 662);
}

TEST_CASE("cost rule - DMA: 1.3 us fixed plus bytes at the queue bandwidth scaled by bytes per partition and stride") {
  // [128, 512] bf16: 131072 bytes, 1024 per partition -> a quarter of the queue's 27 GB/s on trn1.
  CHECK(nki::sim::dma_queue_us(trn1(), 131072, 1024, false) == doctest::Approx(1.3 + 131072.0 / (27e3 * 0.25)).epsilon(1e-12));
  CHECK(nki::sim::dma_queue_us(trn1(), 131072, 2048, false) == doctest::Approx(1.3 + 131072.0 / (27e3 * 0.5)).epsilon(1e-12));
  CHECK(nki::sim::dma_queue_us(trn1(), 131072, 4096, false) == doctest::Approx(1.3 + 131072.0 / 27e3).epsilon(1e-12));
  CHECK(nki::sim::dma_queue_us(trn1(), 131072, 8192, true) == doctest::Approx(1.3 + 131072.0 / (27e3 * 0.5)).epsilon(1e-12));
  // Rows shorter than 1 KiB move no slower per byte: the least efficiency is a quarter.
  CHECK(nki::sim::dma_queue_us(trn2(), 4096, 32, false) == doctest::Approx(1.3 + 4096.0 / (23e3 * 0.25)).epsilon(1e-12));
  CHECK(nki::sim::dma_queue_us(trn2(), 4096, 256, true) == doctest::Approx(1.3 + 4096.0 / (23e3 * 0.125)).epsilon(1e-12));
}

TEST_CASE("cost rule - ops of a traced kernel become instructions on their engines with the access bubble") {
  const nki::Kernel k = nki::jit(
      "one_of_each",
      [](nl::tensor a, nl::tensor w) {
        auto out = nl::ndarray({128, 512}, nl::float32, nl::shared_hbm, "out");
        auto t = nl::load(a.all());                  // (128, 512) bf16
        auto s = t + t;                              // Vector: bf16 add of SBUF tiles, one pass
        auto e = nl::exp(t);                         // Scalar
        auto i = nki::isa::iota(nl::arange(128)[nl::_, nl::newaxis] + nl::arange(512)[nl::newaxis, nl::_], nl::float32);  // GpSimd
        auto m = nl::matmul(nl::load(w.all()), s, true);                                                               // Tensor
        nl::store(out.all(), nl::copy(m) + e + i);
        return out;
      },
      {"a", "w"});
  const auto ir = k.trace({{128, 512}, {128, 128}}, {nki::DType::bf16, nki::DType::bf16}, nki::GridSpec{})->ir;

  const auto load = first_instruction<nki::ir::LoadOp>(*ir, trn1());
  CHECK(load.engine == Engine::dma);
  CHECK(load.dma_bytes == 131072);
  CHECK(load.duration_us == doctest::Approx(1.3 + 131072.0 / (27e3 * 0.25)).epsilon(1e-12));

  const auto add = first_instruction<nki::ir::BinaryOp>(*ir, trn1());
  CHECK(add.engine == Engine::vector);
  CHECK(add.cycles == 512 + 60);
  CHECK(add.duration_us == doctest::Approx(572 / 1120.0).epsilon(1e-12));  // 1.12 GHz

  const auto exp = first_instruction<nki::ir::ActivationOp>(*ir, trn2());
  CHECK(exp.engine == Engine::scalar);
  CHECK(exp.cycles == 572);
  CHECK(exp.duration_us == doctest::Approx(572 / 1200.0).epsilon(1e-12));  // 1.2 GHz on trn2

  const auto iota = first_instruction<nki::ir::IotaOp>(*ir, trn1());
  CHECK(iota.engine == Engine::gpsimd);
  CHECK(iota.cycles == 150 + 512 + 60);

  const auto mm = first_instruction<nki::ir::MatmulOp>(*ir, trn1());
  CHECK(mm.engine == Engine::tensor);
  CHECK(mm.cycles == 512 + 60);
  CHECK(mm.flops == 2 * 128 * 128 * 512);
  CHECK(mm.duration_us == doctest::Approx(572 / 2800.0).epsilon(1e-12));

  // fp32 + bf16 -> fp32 operands: two passes; the PSUM copy (nl::copy) is a one-input Vector op.
  const auto mixed = first_instruction<nki::ir::BinaryOp>(*ir, trn1(), 1);
  CHECK(mixed.cycles == 2 * 512 + 60);
}
