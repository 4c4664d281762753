/** \file err_index_rank_mismatch (too many subscripts) and err_unsupported_tile_rank (matmul/transpose of a 3-D tile). */
#include "test_support.h"

namespace nl = nki::language;

namespace {
const char* kFile = "tests/error/err_index_rank_and_tile_rank_test.cpp";
}

TEST_CASE("err_index_rank_mismatch - three subscripts on a 2-D tensor") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "three_subscripts",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        line = __LINE__ + 1;
        auto t = nl::load(a[nl::_, nl::_, 0]);
        nl::store(out.all(), t);
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 8}, nki::DType::fp32, test::random_floats(128 * 8, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("three_subscripts ({}:{}): err_index_rank_mismatch: tensor a of shape [128,8] has 2 dimensions but "
                    "was indexed with 3",
                    kFile, line));
}

TEST_CASE("err_unsupported_tile_rank - nl::transpose of a 3-D tile") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "transpose_3d",
      [](nl::tensor a) {
        auto out = nl::ndarray({8, 128}, a.dtype(), nl::shared_hbm);
        auto t = nl::load(a.all());  // [128, 2, 4]
        line = __LINE__ + 1;
        auto tt = nl::transpose(t);
        nl::store(out.all(), tt);
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({128, 2, 4}, nki::DType::fp32, test::random_floats(128 * 8, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("transpose_3d ({}:{}): err_unsupported_tile_rank: nl::transpose: the operand must be a 2-D tile "
                    "[P, F], got shape [128,2,4]",
                    kFile, line));
}
