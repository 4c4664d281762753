/** \file err_size_of_dimension_exceed_arch_limit: matmul and transpose free sizes, PSUM and SBUF capacity per partition. */
#include "test_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;

namespace {
const char* kFile = "tests/error/err_size_of_dimension_exceed_arch_limit_test.cpp";
auto input(std::int64_t p, std::int64_t f) {
  return nki::Tensor::from_floats({p, f}, nki::DType::bf16, test::random_floats(static_cast<std::size_t>(p * f), 1));
}
}  // namespace

TEST_CASE("err_size_of_dimension_exceed_arch_limit - matmul stationary free size 256") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "wide_stationary",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 512}, nl::float32, nl::shared_hbm);
        auto st = nl::load(a[nl::_, nl::ds(0, 256)]);
        auto mv = nl::load(a[nl::_, nl::ds(0, 512)]);
        line = __LINE__ + 1;
        auto r = isa::nc_matmul(st, mv);
        nl::store(out.all(), nl::copy(r));
        return out;
      },
      {"a"});
  auto a = input(128, 1024);
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("wide_stationary ({}:{}): err_size_of_dimension_exceed_arch_limit: isa::nc_matmul: stationary "
                    "free size 256 exceeds gemm_stationary_fmax 128 (stationary shape [128,256])",
                    kFile, line));
}

TEST_CASE("err_size_of_dimension_exceed_arch_limit - matmul moving free size 1024") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "wide_moving",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 1024}, nl::float32, nl::shared_hbm);
        auto st = nl::load(a[nl::_, nl::ds(0, 128)]);
        auto mv = nl::load(a[nl::_, nl::ds(0, 1024)]);
        line = __LINE__ + 1;
        auto r = nl::matmul(st, mv, true);
        nl::store(out.all(), nl::copy(r));
        return out;
      },
      {"a"});
  auto a = input(128, 1024);
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("wide_moving ({}:{}): err_size_of_dimension_exceed_arch_limit: nl::matmul: moving free size "
                    "1024 exceeds gemm_moving_fmax 512 (moving shape [128,1024])",
                    kFile, line));
}

TEST_CASE("err_size_of_dimension_exceed_arch_limit - matmul at the limits is accepted") {
  const nki::Kernel k = nki::jit(
      "matmul_at_limits",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 512}, nl::float32, nl::shared_hbm);
        auto st = nl::load(a[nl::_, nl::ds(0, nl::tile_size::gemm_stationary_fmax)]);
        auto mv = nl::load(a[nl::_, nl::ds(0, nl::tile_size::gemm_moving_fmax)]);
        nl::store(out.all(), nl::copy(isa::nc_matmul(st, mv)));
        return out;
      },
      {"a"});
  auto a = input(128, 1024);
  auto r = k.launch({}).run({a});
  CHECK(r.outputs[0].shape() == nki::Shape{128, 512});
}

TEST_CASE("err_size_of_dimension_exceed_arch_limit - nl::transpose of a free size 256") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "wide_transpose",
      [](nl::tensor a) {
        auto out = nl::ndarray({256, 128}, a.dtype(), nl::shared_hbm);
        auto t = nl::load(a[nl::_, nl::ds(0, 256)]);
        line = __LINE__ + 1;
        auto tt = nl::transpose(t);
        nl::store(out[nl::ds(0, 128), nl::_], tt);
        return out;
      },
      {"a"});
  auto a = input(128, 1024);
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("wide_transpose ({}:{}): err_size_of_dimension_exceed_arch_limit: nl::transpose of a tile of "
                    "shape [128,256]: the free size 256 becomes the partition count, at most 128",
                    kFile, line));
}

TEST_CASE("err_size_of_dimension_exceed_arch_limit - isa::nc_transpose of a free size 129") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "wide_nc_transpose",
      [](nl::tensor a) {
        auto out = nl::ndarray({129, 64}, a.dtype(), nl::shared_hbm);
        auto t = nl::load(a[nl::ds(0, 64), nl::ds(0, 129)]);
        line = __LINE__ + 1;
        auto tt = isa::nc_transpose(t);
        nl::store(out.all(), nl::copy(tt));
        return out;
      },
      {"a"});
  auto a = input(128, 1024);
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("wide_nc_transpose ({}:{}): err_size_of_dimension_exceed_arch_limit: isa::nc_transpose of a "
                    "tile of shape [64,129]: the free size 129 becomes the partition count, at most 128",
                    kFile, line));
}

TEST_CASE("err_size_of_dimension_exceed_arch_limit - a psum allocation past 16 KiB per partition") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "big_psum",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        line = __LINE__ + 1;
        [[maybe_unused]] auto acc = nl::zeros({128, 4097}, nl::float32, nl::psum);
        nl::store(out.all(), nl::load(a.all()));
        return out;
      },
      {"a"});
  auto a = input(128, 8);
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("big_psum ({}:{}): err_size_of_dimension_exceed_arch_limit: nl::zeros of fp32 [128,4097] in psum "
                    "needs 16388 bytes per partition; psum has 16384 bytes per partition",
                    kFile, line));
}

TEST_CASE("err_size_of_dimension_exceed_arch_limit - an sbuf array past 192 KiB per partition, par_dim in the middle") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "big_sbuf",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        line = __LINE__ + 1;
        [[maybe_unused]] auto buf = nl::ndarray({4, nl::par_dim(128), 12289}, nl::float32, nl::sbuf);
        nl::store(out.all(), nl::load(a.all()));
        return out;
      },
      {"a"});
  auto a = input(128, 8);
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("big_sbuf ({}:{}): err_size_of_dimension_exceed_arch_limit: nl::ndarray of fp32 [4,128,12289] in "
                    "sbuf needs 196624 bytes per partition; sbuf has 196608 bytes per partition",
                    kFile, line));
}

TEST_CASE("err_size_of_dimension_exceed_arch_limit - exactly 16 KiB of psum and 192 KiB of sbuf are accepted") {
  const nki::Kernel k = nki::jit(
      "capacity_ok",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto acc = nl::zeros({128, 4096}, nl::float32, nl::psum);
        auto buf = nl::zeros({3, nl::par_dim(128), 8192}, nl::bfloat16, nl::sbuf);
        nl::store(out.all(), nl::load(a.all()) + acc[nl::_, nl::ds(0, 8)] + buf[1, nl::_, nl::ds(0, 8)]);
        return out;
      },
      {"a"});
  auto a = input(128, 8);
  auto r = k.launch({}).run({a});
  CHECK(test::first_difference(r.outputs[0], a) == -1);
}

TEST_CASE("err_size_of_dimension_exceed_arch_limit - a loaded tile past 192 KiB per partition") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "huge_tile",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        line = __LINE__ + 1;
        auto t = nl::load(a.all());
        nl::store(out.all(), t);
        return out;
      },
      {"a"});
  nki::Tensor a({128, 49153}, nki::DType::fp32);  // 196612 bytes per partition
  const std::string msg = test::user_error_of([&] { k.trace({a.shape()}, {a.dtype()}, {}); });
  CHECK(msg == fmt::format("huge_tile ({}:{}): err_size_of_dimension_exceed_arch_limit: nl::load of fp32 [128,49153] "
                           "needs 196612 bytes per partition; sbuf has 196608 bytes per partition",
                           kFile, line));
}
