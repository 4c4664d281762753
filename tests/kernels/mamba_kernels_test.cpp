/** \file mamba_v1, v2, v3: each allclose to the float64 reference on both executors, and all three bit-identical. */
#include "kernel_check.h"
#include "nki/mamba.h"
#include "nki/mamba_reference.h"

namespace nk = nki::kernels;
using nki::DType;

namespace {

struct Inputs {
  nki::Tensor delta, u, A, B, C;
  std::vector<nki::Tensor> args() const { return {delta, u, A, B, C}; }
  std::vector<nki::Shape> shapes() const { return {delta.shape(), u.shape(), A.shape(), B.shape(), C.shape()}; }
  std::vector<double> reference(const nk::MambaDims& d) const {
    return kt::ref::mamba(delta.to_values(), u.to_values(), A.to_values(), B.to_values(), C.to_values(), d);
  }
};

/** Random fp32 inputs: delta > 0 (a softplus output), A < 0 (a decaying state, as the tutorial chooses). */
Inputs random_inputs(const nk::MambaDims& d, std::uint32_t seed) {
  const nki::Shape sd{d.batch, d.channels, d.seq_len}, sb{d.batch, d.state_size, d.seq_len};
  return {kt::input(sd, DType::fp32, seed, 0.0f, 0.2f), kt::input(sd, DType::fp32, seed + 1),
          kt::input({d.channels, d.state_size}, DType::fp32, seed + 2, -2.0f, -0.1f),
          kt::input(sb, DType::fp32, seed + 3), kt::input(sb, DType::fp32, seed + 4)};
}

constexpr kt::ref::Tolerance kTolerance{1e-5, 1e-3};

/** Each version against the reference (both executors byte-identical); returns the three outputs. */
std::vector<nki::Tensor> check_versions(const Inputs& in, const nk::MambaDims& d, bool with_v3) {
  const std::vector<double> want = in.reference(d);
  std::vector<nki::Tensor> outs;
  CAPTURE(d.batch);
  CAPTURE(d.channels);
  CAPTURE(d.seq_len);
  CAPTURE(d.state_size);
  outs.push_back(kt::check_kernel(nk::mamba_v1(), nk::mamba_v1_grid(in.shapes()), in.args(), want, kTolerance));
  outs.push_back(kt::check_kernel(nk::mamba_v2(), nk::mamba_v2_grid(in.shapes()), in.args(), want, kTolerance));
  if (with_v3) outs.push_back(kt::check_kernel(nk::mamba_v3(), nk::mamba_v3_grid(in.shapes()), in.args(), want, kTolerance));
  return outs;
}

}  // namespace

TEST_CASE("mamba - v1, v2 and v3 match the float64 reference and each other, one and several channel and sequence tiles") {
  for (const nk::MambaDims& d : {nk::MambaDims{1, 128, 512, 2}, nk::MambaDims{2, 256, 1024, 3}}) {
    const std::vector<nki::Tensor> outs = check_versions(random_inputs(d, 31), d, true);
    // The tutorial asserts the versions agree exactly: the same fp32 operations per element in the same order.
    CHECK(test::first_difference(outs[0], outs[1]) < 0);
    CHECK(test::first_difference(outs[0], outs[2]) < 0);
  }
}

TEST_CASE("mamba - the tutorial's inputs: ones, and A = -1" * doctest::skip(test::sanitized_build())) {
  const nk::MambaDims d{1, 256, 512, 16};
  const nki::Shape sd{d.batch, d.channels, d.seq_len}, sb{d.batch, d.state_size, d.seq_len};
  auto ones = [](const nki::Shape& s, float v) {
    return nki::Tensor::from_floats(s, DType::fp32, std::vector<float>(static_cast<std::size_t>(nki::shape_elements(s)), v));
  };
  const Inputs in{ones(sd, 1.0f), ones(sd, 1.0f), ones({d.channels, d.state_size}, -1.0f), ones(sb, 1.0f), ones(sb, 1.0f)};
  check_versions(in, d, true);
}

TEST_CASE("mamba - v1 and v2 take any sequence length; misshapen inputs are refused with the shapes named") {
  const nk::MambaDims d{1, 128, 100, 3};
  check_versions(random_inputs(d, 41), d, false);
  CHECK(test::user_error_of([] { nk::mamba_v3_grid({{1, 128, 100}, {1, 128, 100}, {128, 3}, {1, 3, 100}, {1, 3, 100}}); }) ==
        "mamba_v3: err_input_shape_not_tiled: delta [1,128,100]: channels must be a multiple of 128 and seq_len a "
        "multiple of 512");
  CHECK(test::user_error_of([] { nk::mamba_v1_grid({{1, 100, 64}, {1, 100, 64}, {100, 3}, {1, 3, 64}, {1, 3, 64}}); }) ==
        "mamba_v1: err_input_shape_not_tiled: delta [1,100,64]: channels must be a multiple of 128 and seq_len a "
        "multiple of 1");
  CHECK(test::user_error_of([] { nk::mamba_v2_grid({{1, 128, 64}, {1, 128, 64}, {128, 3}, {1, 4, 64}, {1, 3, 64}}); }) ==
        "mamba_v2: err_input_shape_mismatch: delta [1,128,64], u [1,128,64], A [128,3], B [1,4,64], C [1,3,64] must be "
        "[batch, channels, seq_len] twice, [channels, state_size], then [batch, state_size, seq_len] twice");
}

TEST_CASE("mamba - v3's sequence tile is tunable, every size gives the same bits" * doctest::skip(test::sanitized_build())) {
  const nk::MambaDims d{1, 128, 1024, 2};
  const Inputs in = random_inputs(d, 51);
  const nki::TunableKernel t = nk::mamba_v3_tunable();
  const nki::Tensor base = kt::check_kernel(nk::mamba_v3(), nk::mamba_v3_grid(in.shapes()), in.args(), in.reference(d), kTolerance);
  for (std::int64_t f : {128, 1024}) {
    CAPTURE(f);
    const nki::TuningConfig c{{{"F", f}}};
    const nki::Tensor out = kt::check_kernel(t.make(c), t.grid(c, in.shapes()), in.args(), in.reference(d), kTolerance);
    CHECK(test::first_difference(out, base) < 0);
  }
  CHECK(test::user_error_of([&] { t.grid(nki::TuningConfig{{{"F", 2048}}}, in.shapes()); }) ==
        "mamba_v3: err_input_shape_not_tiled: delta [1,128,1024]: channels must be a multiple of 128 and seq_len a "
        "multiple of 2048");
}

TEST_CASE("mamba - v3 with a sequential_range over sequence tiles (the tutorial's FIXME) gives v3's bits") {
  // The tutorial unrolls the sequence tiles because NKI's sequential_range gave wrong answers;
  // here the loop is traced once, its tile windows start at the loop variable, and the carry
  // goes through scan_init from one iteration to the next.
  namespace nl = nki::language;
  namespace isa = nki::isa;
  const nki::Kernel k = nki::jit(
      "mamba_v3_sequential",
      [](nl::tensor delta, nl::tensor u, nl::tensor A, nl::tensor B, nl::tensor C) {
        const std::int64_t channels = delta.shape()[1], seq_len = delta.shape()[2], states = A.shape()[1];
        const std::int64_t fsize = 256;
        auto output = nl::ndarray(delta.shape(), delta.dtype(), nl::shared_hbm, "output");
        for (auto i_channel_tile : nl::affine_range(channels / 128)) {
          const nl::ds rows(i_channel_tile * 128, 128);
          auto accum = nl::zeros({nl::par_dim(128), seq_len}, delta.dtype(), nl::sbuf, "accum");
          auto delta_i = nl::load(delta[0, rows, nl::_]);
          auto u_i = nl::load(u[0, rows, nl::_]);
          for (auto i_state : nl::affine_range(states)) {
            auto A_i = nl::load(A[rows, i_state]);
            auto scan_init = nl::zeros({128, 1}, delta.dtype(), nl::sbuf, "scan_init");
            for (auto i_seq : nl::sequential_range(seq_len / fsize)) {
              const nl::ds seq(i_seq * fsize, fsize);
              auto deltaA = isa::activation(nl::exp, delta_i[nl::_, seq], 0.0, A_i);
              auto deltaU = isa::tensor_tensor(delta_i[nl::_, seq], u_i[nl::_, seq], nl::multiply);
              auto deltaBu = isa::tensor_tensor(deltaU, nl::load(B[0, nl::ds(i_state, 1), seq]).broadcast_to({128, fsize}),
                                                nl::multiply);
              auto scan_res = isa::tensor_tensor_scan(deltaA, deltaBu, scan_init, nl::multiply, nl::add);
              scan_init.all() = scan_res[nl::_, fsize - 1];
              accum[nl::_, seq] += isa::tensor_tensor(
                  scan_res, nl::load(C[0, nl::ds(i_state, 1), seq]).broadcast_to({128, fsize}), nl::multiply);
            }
          }
          nl::store(output[0, rows, nl::_], accum);
        }
        return output;
      },
      {"delta", "u", "A", "B", "C"});
  const nk::MambaDims d{1, 256, 1024, 3};
  const Inputs in = random_inputs(d, 61);
  const nki::Tensor want = kt::check_kernel(nk::mamba_v3(), nk::mamba_v3_grid(in.shapes()), in.args(), in.reference(d), kTolerance);
  const nki::Tensor got = kt::check_kernel(k, {}, in.args(), in.reference(d), kTolerance);
  CHECK(test::first_difference(got, want) < 0);
}
