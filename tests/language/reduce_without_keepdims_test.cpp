/**
 * \file A reduction over the free axes without keepdims gives a [P] tile. Dimension 0 is the
 * partition dimension of every tile, so a [P] tile is one element per partition: it broadcasts
 * as [P, 1] (shapes of lower rank are padded with trailing 1s), stores into a [P, 1] window and
 * is a per-partition operand of tensor_scalar and activation (NKI's attention tutorial:
 * nl.subtract(qk, nl.max(qk, axis=1))).
 */
#include "lang_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using lt::rd;
using nki::DType;

namespace {

void reduce_without_keepdims_case(DType dt) {
  const nki::Kernel k = nki::jit("row_vectors", [](nl::tensor a) {
    const std::int64_t P = a.shape()[0];
    auto o_max = nl::ndarray({P, 1}, a.dtype(), nl::shared_hbm, "o_max");
    auto o_sub = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o_sub");
    auto o_scaled = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o_scaled");
    auto o_exp = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "o_exp");
    auto o_buf = nl::ndarray({P, 1}, a.dtype(), nl::shared_hbm, "o_buf");
    auto x = nl::load(a.all());  // (P, F)
    auto m = nl::max(x, 1);      // (P)
    CHECK(m.shape() == nki::Shape{P});
    auto s = nl::sum(x, 1);      // (P)
    nl::store(o_max.all(), m);                                             // into a [P, 1] window
    nl::store(o_sub.all(), nl::subtract(x, m));                            // x - max, per row
    nl::store(o_scaled.all(), isa::tensor_scalar(x, nl::multiply, s));     // a [P] operand
    nl::store(o_exp.all(), isa::activation(nl::exp, x, nl::negative(m), 1.0, {.dtype = nl::float32}));  // a [P] bias
    auto buf = nl::ndarray({nl::par_dim(P), 4}, a.dtype(), nl::sbuf, "buf");
    buf[nl::_, 2] = m;                                // a [P] window of an SBUF array
    nl::store(o_buf.all(), buf[nl::_, nl::ds(2, 1)]);
    return std::make_tuple(o_max, o_sub, o_scaled, o_exp, o_buf);
  });
  for (nki::Shape shape : {nki::Shape{128, 4}, nki::Shape{7, 4}}) {
    CAPTURE(nki::dtype_name(dt));
    CAPTURE(nki::shape_str(shape));
    const std::int64_t P = shape[0], F = shape[1];
    auto a = lt::make(shape, dt, test::random_floats(static_cast<std::size_t>(P * F), 95, -3.0f, 3.0f));
    const auto av = a.to_floats();
    const auto n = static_cast<std::size_t>(P * F), np = static_cast<std::size_t>(P);
    std::vector<double> w_max(np), w_sub(n), w_scaled(n), w_exp(n);
    for (std::int64_t p = 0; p < P; ++p) {
      const float* row = av.data() + p * F;
      float mx = row[0], sum = row[0];
      for (std::int64_t f = 1; f < F; ++f) {
        mx = mx >= row[f] ? mx : row[f];  // numpy maximum(acc, x): acc on ties
        sum = lt::fadd(sum, row[f]);
      }
      mx = rd(mx, dt);
      sum = rd(sum, dt);
      w_max[static_cast<std::size_t>(p)] = mx;
      for (std::int64_t f = 0; f < F; ++f) {
        const auto i = static_cast<std::size_t>(p * F + f);
        w_sub[i] = rd(row[f] - mx, dt);
        w_scaled[i] = rd(lt::fmul(row[f], sum), dt);
        w_exp[i] = std::exp(lt::fadd(row[f], -mx));
      }
    }
    lt::check_both(k, lt::no_grid(), {a}, {w_max, w_sub, w_scaled, w_exp, w_max}, "row_vectors");
  }
}

}  // namespace

TEST_CASE("a reduction without keepdims is a [P] tile: stored as [P, 1], subtracted, a tensor_scalar operand, fp32") {
  reduce_without_keepdims_case(DType::fp32);
}
TEST_CASE("a reduction without keepdims is a [P] tile: stored as [P, 1], subtracted, a tensor_scalar operand, bf16") {
  reduce_without_keepdims_case(DType::bf16);
}

TEST_CASE("a reduction without keepdims takes a [P, 1] mask: rows past the mask are not computed, stored under it") {
  const nki::Kernel k = nki::jit("masked_row_sums", [](nl::tensor a) {
    auto o = nl::full({a.shape()[0], 1}, -7.0, nl::float32, nl::shared_hbm, "o");
    auto ip = nl::arange(a.shape()[0])[nl::_, nl::newaxis];  // (P, 1)
    auto s = nl::sum(nl::load(a.all()), 1, {.dtype = nl::float32, .mask = ip < 3});  // (P)
    nl::store(o.all(), s, {.mask = ip < 3});
    return o;
  });
  auto a = lt::make({6, 5}, DType::fp32, test::random_floats(30, 96));
  const auto av = a.to_floats();
  std::vector<double> want(6, -7.0);
  for (std::size_t p = 0; p < 3; ++p) {
    float acc = av[p * 5];
    for (std::size_t f = 1; f < 5; ++f) acc = lt::fadd(acc, av[p * 5 + f]);
    want[p] = acc;
  }
  lt::check_both(k, lt::no_grid(), {a}, want, "masked_row_sums");
}
