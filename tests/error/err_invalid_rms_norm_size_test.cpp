/** \file err_invalid_rms_norm_size: nl::rms_norm with a count n below 1. */
#include "test_support.h"

namespace nl = nki::language;

TEST_CASE("err_invalid_rms_norm_size - rms_norm with n = 0") {
  const char* kFile = "tests/error/err_invalid_rms_norm_size_test.cpp";
  static int line = 0;
  auto a = nki::Tensor::from_floats({16, 8}, nki::DType::fp32, test::random_floats(128, 127));
  const nki::Kernel k = nki::jit("rms_norm_n0", [](nl::tensor t) {
    auto out = nl::ndarray(t.shape(), nl::float32, nl::shared_hbm, "out");
    auto x = nl::load(t.all());
    line = __LINE__ + 1;
    nl::store(out.all(), nl::rms_norm(x, x, 1, 0));
    return out;
  });
  const std::string msg_k = test::user_error_of([&] { k(a); });
  CHECK(msg_k ==
        fmt::format("rms_norm_n0 ({}:{}): err_invalid_rms_norm_size: nl::rms_norm: n = 0; the number of values the "
                    "mean square divides by must be positive",
                    kFile, line));
}
