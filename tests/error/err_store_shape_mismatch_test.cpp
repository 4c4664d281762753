/** \file err_store_shape_mismatch: a tile that does not broadcast to the window it is written to. */
#include "test_support.h"

namespace nl = nki::language;

namespace {
const char* kFile = "tests/error/err_store_shape_mismatch_test.cpp";
auto input() { return nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 1)); }
}  // namespace

TEST_CASE("err_store_shape_mismatch - a store of 64 columns into 32") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "store_too_wide",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 32}, a.dtype(), nl::shared_hbm);
        auto t = nl::load(a.all());
        line = __LINE__ + 1;
        nl::store(out.all(), t);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("store_too_wide ({}:{}): err_store_shape_mismatch: store of a tile of shape [128,64] into an access "
                    "of shape [128,32]",
                    kFile, line));
}

TEST_CASE("err_store_shape_mismatch - writing a tile into an sbuf window of another shape") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "window_too_narrow",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto buf = nl::ndarray({128, 64}, a.dtype(), nl::sbuf, "buf");
        auto t = nl::load(a.all());
        line = __LINE__ + 1;
        buf[nl::_, nl::ds(0, 16)] = t;
        nl::store(out.all(), nl::copy(buf));
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("window_too_narrow ({}:{}): err_store_shape_mismatch: writing a tile of shape [128,64] into a window "
                    "of shape [128,16] of tensor buf",
                    kFile, line));
}

TEST_CASE("err_store_shape_mismatch - a [P, 1] tile broadcasts along the free dimension of a store") {
  const nki::Kernel k = nki::jit(
      "store_broadcast_column",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto col = nl::load(a[nl::_, nl::ds(0, 1)]);
        nl::store(out.all(), col);
        return out;
      },
      {"a"});
  auto a = input();
  const auto in = a.to_floats();
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    const auto got = k.launch({}).with({ex, nullptr}).run({a}).outputs[0].to_floats();
    for (std::size_t p = 0; p < 128; ++p)
      for (std::size_t f = 0; f < 64; ++f) REQUIRE(got[p * 64 + f] == in[p * 64]);
  }
}

TEST_CASE("err_store_shape_mismatch - a [P, 4] tile into the [P] window of one column") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "into_one_column",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 2}, a.dtype(), nl::shared_hbm);
        auto t = nl::load(a[nl::_, nl::ds(0, 4)]);
        line = __LINE__ + 1;
        nl::store(out[nl::_, 0], t);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("into_one_column ({}:{}): err_store_shape_mismatch: store of a tile of shape [128,4] into an "
                    "access of shape [128]",
                    kFile, line));
}
