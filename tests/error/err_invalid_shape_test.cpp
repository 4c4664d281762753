/** \file err_invalid_shape: allocations with a non-positive dimension, two par_dims, or nothing to copy a shape from. */
#include "test_support.h"

namespace nl = nki::language;

namespace {
const char* kFile = "tests/error/err_invalid_shape_test.cpp";
auto input() { return nki::Tensor::from_floats({128, 8}, nki::DType::fp32, test::random_floats(128 * 8, 1)); }
}  // namespace

TEST_CASE("err_invalid_shape - an sbuf ndarray with a zero dimension") {
  static int line = 0;
  const nki::Kernel k = nki::jit("zero_dim", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    auto buf = nl::ndarray({128, 0}, nl::float32, nl::sbuf);
    (void)buf;
    nl::store(out.all(), nl::load(a.all()));
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("zero_dim ({}:{}): err_invalid_shape: nl::ndarray shape [128,0] has a dimension of size 0; sizes "
                    "must be positive",
                    kFile, line));
}

TEST_CASE("err_invalid_shape - a shared_hbm output with a negative dimension") {
  static int line = 0;
  const nki::Kernel k = nki::jit("negative_dim", [](nl::tensor a) {
    line = __LINE__ + 1;
    auto out = nl::full({-4, 8}, 1.0, a.dtype(), nl::shared_hbm);
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("negative_dim ({}:{}): err_invalid_shape: nl::full shape [-4,8] has a dimension of size -4; sizes "
                    "must be positive",
                    kFile, line));
}

TEST_CASE("err_invalid_shape - two par_dim markers") {
  static int line = 0;
  const nki::Kernel k = nki::jit("two_par_dims", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    auto buf = nl::zeros({nl::par_dim(128), nl::par_dim(4), 8}, nl::float32, nl::sbuf);
    (void)buf;
    nl::store(out.all(), nl::load(a.all()));
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("two_par_dims ({}:{}): err_invalid_shape: nl::zeros shape marks dimensions 0 and 1 with par_dim; "
                    "an array has one partition dimension",
                    kFile, line));
}

// zeros_like(2.0) does not compile: *_like takes a tensor or a tile (nl::like_source).

TEST_CASE("err_invalid_shape - zeros_like of a kernel argument in HBM takes its shape, it does not read it") {
  const nki::Kernel k = nki::jit("like_hbm_argument", [](nl::tensor a) {
    auto out = nl::zeros_like(a, nl::shared_hbm);
    return out;
  });
  auto a = input();
  auto r = k.launch({}).run({a});
  CHECK(r.outputs[0].shape() == a.shape());
  for (float v : r.outputs[0].to_floats()) REQUIRE(v == 0.0f);
}
