/**
 * \file engine= reaches the cost model: the instruction runs on the engine the author picked, at
 * that engine's cost; the accumulation of reduce_res and an output cast are part of their
 * instruction (no time, no instruction of their own).
 */
#include "test_support.h"

#include "nki/profile.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::sim::Engine;

namespace {

const nki::sim::TargetSpec& trn2() { return nki::sim::target_spec("trn2"); }

std::vector<nki::sim::Instruction> instructions(const nki::ir::KernelIR& ir) {
  std::vector<nki::sim::Instruction> out;
  for (std::size_t i = 0; i < ir.body.size(); ++i) {
    nki::sim::Instruction in;
    if (nki::sim::instruction_of(ir, i, trn2(), in)) out.push_back(in);
  }
  return out;
}

}  // namespace

TEST_CASE("engine= puts tensor_copy, tensor_scalar, tensor_tensor and nc_transpose on the chosen engine's queue") {
  const nki::Kernel k = nki::jit("engines", [](nl::tensor a) {
    auto out = nl::ndarray({128, 512}, nl::float32, nl::shared_hbm, "out");
    auto t = nl::load(a.all());                                                   // DMA
    auto c1 = isa::tensor_copy(t, {.engine = isa::vector_engine});                // Vector: 512
    auto c2 = isa::tensor_copy(c1, {.engine = isa::scalar_engine});               // Scalar: max(64, 512)
    auto c3 = isa::tensor_copy(c2, {.engine = isa::gpsimd_engine});               // GpSimd: 150 + 512
    auto s1 = isa::tensor_scalar(c3, nl::multiply, 2.0, {.engine = isa::scalar_engine});  // Scalar
    auto s2 = isa::tensor_tensor(s1, c1, nl::add, {.engine = isa::gpsimd_engine});        // GpSimd
    auto r = isa::reciprocal(s2);                                                  // Vector
    auto small = nl::load(a[nl::ds(0, 32), nl::ds(0, 32)]);                        // DMA
    auto tr = isa::nc_transpose(small, {.engine = isa::vector_engine});            // Vector: 32
    nl::store(out.all(), r);
    nl::store(out[nl::ds(0, 32), nl::ds(0, 32)], tr);
    return out;
  });
  const auto ir = k.trace({{128, 512}}, {nki::DType::fp32}, nki::GridSpec{})->ir;
  const auto in = instructions(*ir);
  REQUIRE(in.size() == 11);
  CHECK(in[1].engine == Engine::vector);
  CHECK(in[1].cycles == 512 + 60);
  CHECK(in[2].engine == Engine::scalar);
  CHECK(in[2].cycles == 512 + 60);
  CHECK(in[3].engine == Engine::gpsimd);
  CHECK(in[3].cycles == 150 + 512 + 60);
  CHECK(in[4].engine == Engine::scalar);
  CHECK(in[4].cycles == 512 + 60);
  CHECK(in[5].engine == Engine::gpsimd);
  CHECK(in[5].cycles == 150 + 512 + 60);
  CHECK(in[6].engine == Engine::vector);
  CHECK(in[6].what == "reciprocal [128,512] on Vector");
  CHECK(in[8].engine == Engine::vector);
  CHECK(in[8].cycles == 64 + 60);  // the 64-cycle minimum
  CHECK(in[8].what == "nc_transpose [32,32] on Vector");
}

TEST_CASE("reduce_res costs nothing extra: activation with its row sum is one Scalar instruction, like one without") {
  auto make = [](bool with_sum) {
    return nki::jit("exp_sum", [with_sum](nl::tensor a) {
      auto out = nl::ndarray({128, 512}, nl::bfloat16, nl::shared_hbm, "out");
      auto e_buf = nl::ndarray({nl::par_dim(128), 512}, nl::bfloat16, nl::sbuf, "e_buf");
      auto sums = nl::ndarray({nl::par_dim(128), 1}, nl::float32, nl::sbuf, "sums");
      auto t = nl::load(a.all());
      if (with_sum) {
        e_buf[nl::_, nl::_] = isa::activation(nl::exp, t, 0.0, 1.0,
                                              {.dtype = nl::bfloat16, .reduce_op = nl::add, .reduce_res = sums[nl::_, nl::_],
                                               .reduce_cmd = isa::reduce_cmd::reset_reduce});
      } else {
        e_buf[nl::_, nl::_] = isa::activation(nl::exp, t, 0.0, 1.0, {.dtype = nl::bfloat16});
      }
      nl::store(out.all(), e_buf);
      return out;
    });
  };
  const nki::Kernel plain = make(false), summed = make(true);
  const nki::Tensor a = nki::Tensor::from_floats({128, 512}, nki::DType::fp32, std::vector<float>(128 * 512, 0.0f));
  const nki::sim::ProfileReport p = nki::profile(plain.launch(nki::GridSpec{}), {{a.shape(), a.dtype()}}, "trn2");
  const nki::sim::ProfileReport s = nki::profile(summed.launch(nki::GridSpec{}), {{a.shape(), a.dtype()}}, "trn2");
  CHECK(s.instructions == p.instructions);  // load, activation, store: the sum, its readout and the cast are fused
  CHECK(s.latency_us == doctest::Approx(p.latency_us).epsilon(1e-12));
  const auto& engines = s.cores.at(0).engines;
  CHECK(engines[static_cast<std::size_t>(Engine::scalar)].instructions == 1);
  CHECK(engines[static_cast<std::size_t>(Engine::vector)].instructions == 0);
}

TEST_CASE("tensor_scalar_reduce is one Vector instruction; tensor_reduce's negate is part of its instruction") {
  const nki::Kernel k = nki::jit("tsr", [](nl::tensor a) {
    auto out = nl::ndarray({128, 1}, nl::float32, nl::shared_hbm, "out");
    auto q_sbuf = nl::ndarray({nl::par_dim(128), 512}, nl::float32, nl::sbuf, "q_sbuf");
    auto mx = nl::ndarray({nl::par_dim(128), 1}, nl::float32, nl::sbuf, "mx");
    auto t = nl::load(a.all());
    q_sbuf[nl::_, nl::_] = isa::tensor_scalar_reduce(t, nl::multiply, 1.0, nl::maximum, mx[nl::_, nl::_]);
    nl::store(out.all(), isa::tensor_reduce(nl::add, q_sbuf, 1, {.negate = true, .keepdims = true}));
    return out;
  });
  const nki::Tensor a = nki::Tensor::from_floats({128, 512}, nki::DType::fp32, std::vector<float>(128 * 512, 0.0f));
  const nki::sim::ProfileReport r = nki::profile(k.launch(nki::GridSpec{}), {{a.shape(), a.dtype()}}, "trn2");
  const auto& engines = r.cores.at(0).engines;
  // tensor_scalar_reduce (its row max and its write into q_sbuf fused) and tensor_reduce (its negate fused).
  CHECK(engines[static_cast<std::size_t>(Engine::vector)].instructions == 2);
  CHECK(engines[static_cast<std::size_t>(Engine::dma)].instructions == 2);  // the load and the store
}
