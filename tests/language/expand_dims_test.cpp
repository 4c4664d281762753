/** \file nl::expand_dims: a view of a tile with a dimension of size 1 inserted after the partitions. */
#include "lang_support.h"

namespace nl = nki::language;
using nki::DType;

TEST_CASE("nl::expand_dims inserts a size-1 dimension: [P, F] -> [P, 1, F] and [P, F, 1], values in place") {
  const nki::Kernel k = nki::jit("expand_dims", [](nl::tensor x) {
    const std::int64_t p = x.shape()[0], f = x.shape()[1];
    auto out = nl::ndarray({2, p, f}, x.dtype(), nl::shared_hbm, "out");
    auto xt = nl::load(x.all());
    auto mid = nl::expand_dims(xt, 1);
    auto last = nl::expand_dims(xt, 2);
    REQUIRE(mid.shape() == nki::Shape{p, 1, f});
    REQUIRE(last.shape() == nki::Shape{p, f, 1});
    // Read both back through a 3-D SBUF array of their shapes and store them flat.
    auto a = nl::ndarray({nl::par_dim(p), 1, f}, x.dtype(), nl::sbuf);
    auto b = nl::ndarray({nl::par_dim(p), f, 1}, x.dtype(), nl::sbuf);
    a.all() = mid;
    b.all() = nl::multiply(last, 2.0f);
    auto ip = nl::arange(p)[nl::_, nl::newaxis];
    auto jf = nl::arange(f)[nl::newaxis, nl::_];
    nl::store(out[0, ip, jf], a[ip, 0, jf]);
    nl::store(out[1, ip, jf], b[ip, jf, 0]);
    return out;
  });
  const std::int64_t p = 32, f = 12;
  auto x = lt::make({p, f}, DType::fp32, test::random_floats(static_cast<std::size_t>(p * f), 81));
  const auto xv = x.to_floats();
  std::vector<double> want(2 * xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i) {
    want[i] = xv[i];
    want[xv.size() + i] = xv[i] * 2.0f;
  }
  lt::check_both(k, lt::no_grid(), {x}, want, "expand_dims");
}

TEST_CASE("nl::expand_dims at the partition axis or past the rank is refused by name") {
  static int line = 0;
  const nki::Kernel k = nki::jit("bad_expand", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    line = __LINE__ + 1;
    [[maybe_unused]] auto e = nl::expand_dims(nl::load(x.all()), 0);
    nl::store(out.all(), nl::load(x.all()));
    return out;
  });
  const std::string msg =
      test::user_error_of([&] { k(nki::Tensor::from_floats({8, 4}, DType::fp32, test::random_floats(32, 1))); });
  CHECK(msg == fmt::format("bad_expand (tests/language/expand_dims_test.cpp:{}): err_invalid_shape: nl::expand_dims of "
                           "a tile of shape [8,4] at axis 0: the axis must be in 1..2 (dimension 0 is the partition "
                           "dimension)",
                           line));
}
