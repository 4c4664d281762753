/** \file err_unsupported_expression_in_mask: a mask is a conjunction; `|` is refused at compile time. */
#include "test_support.h"

namespace nl = nki::language;

// `|` between masks does not compile: the compiler prints err_unsupported_expression_in_mask at the `|`.
// The ctest err_unsupported_expression_in_mask_does_not_compile (tests/CMakeLists.txt) compiles
// tests/error/or_mask_does_not_compile.cc and checks the message.

TEST_CASE("err_unsupported_expression_in_mask - & of the same conditions is accepted") {
  const nki::Kernel k = nki::jit(
      "and_mask",
      [](nl::tensor a) {
        auto out = nl::zeros(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        auto t = nl::load(a[ip, jf]);
        nl::store(out[ip, jf], t, {.mask = (ip >= 10) & (jf < 20)});
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 1));
  const auto in = a.to_floats();
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    const auto got = k.launch({}).with({ex, nullptr}).run({a}).outputs[0].to_floats();
    for (int p = 0; p < 128; ++p)
      for (int f = 0; f < 64; ++f) {
        const std::size_t e = static_cast<std::size_t>(p * 64 + f);
        REQUIRE(got[e] == (p >= 10 && f < 20 ? in[e] : 0.0f));
      }
  }
}
