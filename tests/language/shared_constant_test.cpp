/**
 * \file nl::shared_constant: host values baked into the kernel,
 * rounded to the constant's dtype, loaded like any HBM tensor; the values are part of the IR
 * (and its printout), so two kernels with different constants are different kernels.
 */
#include "lang_support.h"

#include "nki/traced_kernel.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

/** out = x * c + identity(P) (fp32), c a constant [P, F] of `dt` holding `values`. */
nki::Kernel constant_kernel(std::vector<double> values, DType dt) {
  return nki::jit("constant", [values, dt](nl::tensor a) {
    const std::int64_t p = a.shape()[0], f = a.shape()[1];
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    auto c = nl::shared_constant({p, f}, values, dt);
    auto eye = nl::shared_identity_matrix(p, nl::float32);
    auto x = nl::load(a.all());
    auto prod = nl::multiply(x, nl::load(c), {.dtype = nl::float32});
    nl::store(out.all(), nl::add(prod, eye[nl::_, nl::ds(0, f)]));
    return out;
  });
}

}  // namespace

TEST_CASE("nl::shared_constant holds host values rounded to its dtype; both executors read them") {
  for (DType dt : {DType::fp32, DType::bf16, DType::int8}) {
    CAPTURE(nki::dtype_name(dt));
    const std::int64_t p = 40, f = 24;
    const std::vector<float> cv = test::random_floats(static_cast<std::size_t>(p * f), 601, -100.0f, 100.0f);
    const nki::Kernel k = constant_kernel({cv.begin(), cv.end()}, dt);
    auto a = lt::make({p, f}, DType::fp32, test::random_floats(static_cast<std::size_t>(p * f), 602, -2.0f, 2.0f));
    const auto av = a.to_floats();
    std::vector<double> w(static_cast<std::size_t>(p * f));
    for (std::int64_t r = 0; r < p; ++r)
      for (std::int64_t c = 0; c < f; ++c) {
        const std::size_t i = static_cast<std::size_t>(r * f + c);
        const float cst = lt::rd(cv[i], dt);  // int8: rounded to the nearest integer, saturated
        w[i] = lt::fadd(lt::fmul(av[i], cst), r == c ? 1.0f : 0.0f);
      }
    lt::check_both(k, lt::no_grid(), {a}, w, "shared_constant");
  }
}

TEST_CASE("a shared constant's values are in the IR printout: other values, another kernel text") {
  auto text = [](double v) {
    const nki::Kernel k = constant_kernel(std::vector<double>(4 * 2, v), DType::fp32);
    return k.trace({{4, 2}}, {DType::fp32}, nki::GridSpec{})->text;
  };
  CHECK(text(1.0) == text(1.0));
  CHECK(text(1.0) != text(2.0));
  CHECK(text(1.0).find("constant_hbm values(8 hash ") != std::string::npos);
}
