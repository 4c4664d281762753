/** \file nl::transpose (into SBUF) and isa::nc_transpose (into PSUM): result[f, p] = x[p, f]. */
#include "lang_support.h"

namespace nl = nki::language;
using lt::rd;
using nki::DType;

namespace {
void transposes_case(DType dt) {
  const nki::Kernel k = nki::jit("transposes", [](nl::tensor a) {
    const std::int64_t p = a.shape()[0], f = a.shape()[1];
    auto o1 = nl::ndarray({f, p}, a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray({f, p}, a.dtype(), nl::shared_hbm, "o2");
    auto x = nl::load(a.all());
    auto t1 = nl::transpose(x);
    CHECK(t1.shape() == nki::Shape{f, p});
    nl::store(o1.all(), t1);
    auto t2 = nki::isa::nc_transpose(x);
    nl::store(o2.all(), nl::copy(t2));
    return std::make_tuple(o1, o2);
  });
  {
    for (nki::Shape s : {nki::Shape{128, 128}, nki::Shape{32, 100}, nki::Shape{3, 7}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const auto n = static_cast<std::size_t>(s[0] * s[1]);
      auto a = lt::make(s, dt, lt::random_ints(n, 121, -60, 60));
      const auto av = lt::values_of(a);
      std::vector<double> want(n);
      for (std::int64_t p = 0; p < s[0]; ++p)
        for (std::int64_t f = 0; f < s[1]; ++f) want[static_cast<std::size_t>(f * s[0] + p)] = av[static_cast<std::size_t>(p * s[1] + f)];
      lt::check_both(k, lt::no_grid(), {a}, {want, want}, "transposes");
    }
  }
}
}  // namespace

TEST_CASE("nl::transpose and isa::nc_transpose of [P, F] tiles, values moved exactly, fp32") { transposes_case(DType::fp32); }
TEST_CASE("nl::transpose and isa::nc_transpose of [P, F] tiles, values moved exactly, bf16") { transposes_case(DType::bf16); }
TEST_CASE("nl::transpose and isa::nc_transpose of [P, F] tiles, values moved exactly, fp8_e5m2") {
  transposes_case(DType::fp8_e5m2);
}
TEST_CASE("nl::transpose and isa::nc_transpose of [P, F] tiles, values moved exactly, int32") { transposes_case(DType::int32); }

TEST_CASE("a transposed tile feeds the next op: (x^T * 2) in blocks of a larger matrix") {
  // out[c, r] = a[r, c] * 2 for a [256, 64]: each 128-row block transposed and stored at a column offset.
  const nki::Kernel k = nki::jit("block_transpose", [](nl::tensor a) {
    const std::int64_t rows = a.shape()[0], f = a.shape()[1];
    auto out = nl::ndarray({f, rows}, a.dtype(), nl::shared_hbm, "out");
    for (auto i : nl::affine_range(rows / 128)) {
      auto x = nl::load(a[nl::ds(i * 128, 128), nl::_]);
      nl::store(out[nl::_, nl::ds(i * 128, 128)], nl::transpose(x) * 2);
    }
    return out;
  });
  for (DType dt : {DType::fp32, DType::fp16}) {
    CAPTURE(nki::dtype_name(dt));
    auto a = lt::make({256, 64}, dt, test::random_floats(256 * 64, 122));
    const auto av = a.to_floats();
    std::vector<double> want(av.size());
    for (std::int64_t r = 0; r < 256; ++r)
      for (std::int64_t c = 0; c < 64; ++c) want[static_cast<std::size_t>(c * 256 + r)] = rd(av[static_cast<std::size_t>(r * 64 + c)] * 2.0f, dt);
    lt::check_both(k, lt::no_grid(), {a}, want, "block_transpose");
  }
}
