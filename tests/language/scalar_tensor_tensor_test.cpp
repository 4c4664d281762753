/** \file isa::scalar_tensor_tensor: (data op0 operand0) op1 operand1, the intermediate in fp32, reversals. */
#include "lang_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

TEST_CASE("isa::scalar_tensor_tensor computes (data op0 operand0) op1 operand1 with an fp32 intermediate") {
  // out0 = (x * s) + y with s a [P, 1] column; out1 = y - (2 - x) with both reversals (operand op data).
  const nki::Kernel k = nki::jit("scalar_tensor_tensor", [](nl::tensor x, nl::tensor s, nl::tensor y) {
    auto out = nl::ndarray({2, x.shape()[0], x.shape()[1]}, x.dtype(), nl::shared_hbm, "out");
    auto xt = nl::load(x.all());
    auto yt = nl::load(y.all());
    nl::store(out[0, nl::_, nl::_], isa::scalar_tensor_tensor(xt, nl::multiply, nl::load(s.all()), nl::add, yt));
    nl::store(out[1, nl::_, nl::_], isa::scalar_tensor_tensor(xt, nl::subtract, 2.0f, nl::subtract, yt,
                                                              {.reverse0 = true, .reverse1 = true}));
    return out;
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    CAPTURE(nki::dtype_name(dt));
    const std::int64_t p = 64, f = 40;
    const auto n = static_cast<std::size_t>(p * f);
    auto x = lt::make({p, f}, dt, test::random_floats(n, 71, -4.0f, 4.0f));
    auto s = lt::make({p, 1}, dt, test::random_floats(static_cast<std::size_t>(p), 72, -3.0f, 3.0f));
    auto y = lt::make({p, f}, dt, test::random_floats(n, 73, -4.0f, 4.0f));
    const auto xv = x.to_floats(), sv = s.to_floats(), yv = y.to_floats();
    std::vector<double> want(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
      const float mid = xv[i] * sv[i / static_cast<std::size_t>(f)];  // kept in fp32, not rounded to dt
      want[i] = mid + yv[i];
      want[n + i] = yv[i] - (2.0f - xv[i]);
    }
    lt::check_both(k, lt::no_grid(), {x, s, y}, want, "scalar_tensor_tensor");
  }
}

TEST_CASE("isa::scalar_tensor_tensor refuses an operand0 that is not a scalar or a [P, 1] tile, by name") {
  static int line = 0;
  const nki::Kernel k = nki::jit("bad_stt", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    auto xt = nl::load(x.all());
    line = __LINE__ + 1;
    nl::store(out.all(), isa::scalar_tensor_tensor(xt, nl::multiply, xt, nl::add, xt));
    return out;
  });
  const std::string msg =
      test::user_error_of([&] { k(nki::Tensor::from_floats({8, 4}, DType::fp32, test::random_floats(32, 1))); });
  CHECK(msg == fmt::format("bad_stt (tests/language/scalar_tensor_tensor_test.cpp:{}): err_free_dim_mismatch: "
                           "isa::scalar_tensor_tensor: an operand is a scalar or a [8, 1] tile, got [8,4]",
                           line));
}
