/** \file err_unsupported_dtype: bitwise ops given float or bool operands, or asked for a float result. */
#include "test_support.h"

namespace nl = nki::language;
using nki::DType;

TEST_CASE("err_unsupported_dtype - bitwise ops refuse float tiles, float scalars, bool tiles and a float result dtype") {
  const char* kFile = "tests/error/err_unsupported_dtype_test.cpp";
  static int line = 0;
  static int which = 0;
  auto a = nki::Tensor::from_floats({16, 8}, DType::fp32, test::random_floats(128, 115));
  auto b = nki::Tensor::from_floats({16, 8}, DType::int32, std::vector<float>(128, 3.0f));
  const std::string expect[] = {
      "nl::bitwise_and: operand x is a fp32 tile; bitwise ops take integer tiles (int8, int16, int32, uint8, uint16, "
      "uint32)",
      "nl::left_shift: operand y is the float scalar 1.5; bitwise ops take integers",
      "nl::invert: the result dtype is fp32; bitwise ops compute in an integer type (int8, int16, int32, uint8, "
      "uint16, uint32)",
      "nl::bitwise_or: operand y is a bool tile; bitwise ops take integer tiles (int8, int16, int32, uint8, uint16, "
      "uint32)",
  };
  for (which = 0; which < 4; ++which) {
    CAPTURE(which);
    const std::string name = fmt::format("bits_misuse{}", which);
    const nki::Kernel k = nki::jit(name, [](nl::tensor fa, nl::tensor ib) {
      auto out = nl::ndarray(fa.shape(), nl::int32, nl::shared_hbm, "out");
      auto x = nl::load(fa.all());
      auto y = nl::load(ib.all());
      line = __LINE__ + 1;
      nl::tile r = which == 0   ? nl::bitwise_and(x, y)
                   : which == 1 ? nl::left_shift(y, 1.5)
                   : which == 2 ? nl::invert(y, {.dtype = nl::float32})
                                : nl::bitwise_or(y, nl::load(fa.all(), {.dtype = nl::bool_}));
      nl::store(out.all(), r);
      return out;
    });
    const std::string msg = test::user_error_of([&] { k(a, b); });
    CHECK(msg == fmt::format("{} ({}:{}): err_unsupported_dtype: {}", name, kFile, line + which, expect[which]));
  }
}
