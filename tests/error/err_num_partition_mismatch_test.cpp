/**
 * \file err_num_partition_mismatch: operands, matmul contraction sizes and stores that disagree on
 * partitions. nl ops broadcast a tile of one partition across the others; isa::tensor_tensor does not.
 */
#include "test_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;

namespace {
const char* kFile = "tests/error/err_num_partition_mismatch_test.cpp";
auto input(std::int64_t p = 128, std::int64_t f = 512) {
  return nki::Tensor::from_floats({p, f}, nki::DType::fp32, test::random_floats(static_cast<std::size_t>(p * f), 1));
}
}  // namespace

TEST_CASE("err_num_partition_mismatch - a binary op on 128 and 64 partitions") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "add_mismatch",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 64}, a.dtype(), nl::shared_hbm);
        auto x = nl::load(a[nl::ds(0, 128), nl::ds(0, 64)]);
        auto y = nl::load(a[nl::ds(0, 64), nl::ds(0, 64)]);
        line = __LINE__ + 1;
        auto z = nl::add(x, y);
        nl::store(out.all(), z);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("add_mismatch ({}:{}): err_num_partition_mismatch: nl::add operands have 128 and 64 partitions; "
                    "partitions broadcast only from a tile of 1 partition",
                    kFile, line));
}

TEST_CASE("err_num_partition_mismatch - the operator form, a [2, 1] tile with a [128, 64] tile") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "two_rows",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 64}, a.dtype(), nl::shared_hbm);
        auto x = nl::load(a[nl::ds(0, 128), nl::ds(0, 64)]);
        auto rows = nl::load(a[nl::ds(0, 2), nl::ds(0, 1)]);
        line = __LINE__ + 1;
        auto z = x * rows;
        nl::store(out.all(), z);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("two_rows ({}:{}): err_num_partition_mismatch: nl::multiply operands have 128 and 2 "
                    "partitions; partitions broadcast only from a tile of 1 partition",
                    kFile, line));
}

TEST_CASE("err_num_partition_mismatch - isa::tensor_tensor does not broadcast a [1, F] tile across partitions") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "tensor_tensor_row",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 64}, a.dtype(), nl::shared_hbm);
        auto x = nl::load(a[nl::ds(0, 128), nl::ds(0, 64)]);
        auto row = nl::load(a[nl::ds(0, 1), nl::ds(0, 64)]);
        line = __LINE__ + 1;
        auto z = isa::tensor_tensor(x, row, nl::add);
        nl::store(out.all(), z);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("tensor_tensor_row ({}:{}): err_num_partition_mismatch: isa::tensor_tensor operands have 128 "
                    "and 1 partitions; both tiles need the same partition count",
                    kFile, line));
}

TEST_CASE("err_num_partition_mismatch - isa::nc_matmul with K=128 stationary and K=64 moving") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "matmul_k_mismatch",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 512}, nl::float32, nl::shared_hbm);
        auto st = nl::load(a[nl::ds(0, 128), nl::ds(0, 128)]);
        auto mv = nl::load(a[nl::ds(0, 64), nl::ds(0, 512)]);
        line = __LINE__ + 1;
        auto r = nki::isa::nc_matmul(st, mv);
        nl::store(out.all(), nl::copy(r));
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("matmul_k_mismatch ({}:{}): err_num_partition_mismatch: isa::nc_matmul: the contraction "
                    "(partition) sizes differ: stationary [128,128] has K=128, moving [64,512] has K=64",
                    kFile, line));
}

TEST_CASE("err_num_partition_mismatch - nl::matmul with transpose_x and different K") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "nl_matmul_k_mismatch",
      [](nl::tensor a) {
        auto out = nl::ndarray({32, 512}, nl::float32, nl::shared_hbm);
        auto xt = nl::load(a[nl::ds(0, 96), nl::ds(0, 32)]);
        auto y = nl::load(a[nl::ds(0, 128), nl::ds(0, 512)]);
        line = __LINE__ + 1;
        auto r = nl::matmul(xt, y, true);
        nl::store(out.all(), nl::copy(r));
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("nl_matmul_k_mismatch ({}:{}): err_num_partition_mismatch: nl::matmul: the contraction "
                    "(partition) sizes differ: stationary [96,32] has K=96, moving [128,512] has K=128",
                    kFile, line));
}

TEST_CASE("err_num_partition_mismatch - a store of 64 partitions into a 128-partition access") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "store_mismatch",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 512}, a.dtype(), nl::shared_hbm);
        auto t = nl::load(a[nl::ds(0, 64), nl::_]);
        line = __LINE__ + 1;
        nl::store(out[nl::ds(0, 128), nl::_], t);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("store_mismatch ({}:{}): err_num_partition_mismatch: store of a tile with 64 partitions into an "
                    "access of 128 partitions",
                    kFile, line));
}

TEST_CASE("err_num_partition_mismatch - writing a tile into an sbuf window of other partitions") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "window_mismatch",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 512}, a.dtype(), nl::shared_hbm);
        auto buf = nl::ndarray({128, 512}, nl::float32, nl::sbuf, "buf");
        auto t = nl::load(a[nl::ds(0, 32), nl::_]);
        line = __LINE__ + 1;
        buf[nl::ds(0, 64), nl::_] = t;
        nl::store(out.all(), nl::copy(buf));
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("window_mismatch ({}:{}): err_num_partition_mismatch: writing a tile of 32 partitions into a "
                    "window of 64 partitions of tensor buf",
                    kFile, line));
}

TEST_CASE("err_num_partition_mismatch - an activation bias of other partitions than the data") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "bias_mismatch",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 512}, a.dtype(), nl::shared_hbm);
        auto t = nl::load(a[nl::ds(0, 128), nl::_]);
        auto bias = nl::load(a[nl::ds(0, 64), nl::ds(0, 1)]);
        line = __LINE__ + 1;
        auto r = isa::activation(nl::exp, t, bias);
        nl::store(out.all(), r);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("bias_mismatch ({}:{}): err_num_partition_mismatch: isa::activation: bias and scale tiles "
                    "need 128 partitions like the data, got 64",
                    kFile, line));
}
