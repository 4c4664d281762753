/** \file err_num_partition_exceed_arch_limit for allocations and isa::iota (loads: partition_limit_test.cpp). */
#include "test_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;

namespace {
const char* kFile = "tests/error/err_num_partition_exceed_arch_limit_test.cpp";
auto input() { return nki::Tensor::from_floats({128, 8}, nki::DType::fp32, test::random_floats(128 * 8, 1)); }
}  // namespace

TEST_CASE("err_num_partition_exceed_arch_limit - an sbuf ndarray of 256 partitions") {
  static int line = 0;
  const nki::Kernel k = nki::jit("tall_sbuf", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    auto buf = nl::ndarray({256, 8}, nl::float32, nl::sbuf);
    auto [ip, jf] = nl::mgrid(128, 8);
    nl::store(out[ip, jf], nl::copy(buf[ip, jf]));
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("tall_sbuf ({}:{}): err_num_partition_exceed_arch_limit: number of partitions 256 exceeds "
                    "architecture limitation of 128 (nl::ndarray in sbuf)",
                    kFile, line));
}

TEST_CASE("err_num_partition_exceed_arch_limit - par_dim marks a middle dimension past 128") {
  static int line = 0;
  const nki::Kernel k = nki::jit("tall_par_dim", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    [[maybe_unused]] auto buf = nl::zeros({4, nl::par_dim(129), 8}, nl::bfloat16, nl::sbuf);
    auto [ip, jf] = nl::mgrid(128, 8);
    nl::store(out[ip, jf], nl::load(a[ip, jf]));
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("tall_par_dim ({}:{}): err_num_partition_exceed_arch_limit: number of partitions 129 exceeds "
                    "architecture limitation of 128 (nl::zeros in sbuf)",
                    kFile, line));
}

TEST_CASE("err_num_partition_exceed_arch_limit - a psum tile of 200 partitions") {
  static int line = 0;
  const nki::Kernel k = nki::jit("tall_psum", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    line = __LINE__ + 1;
    [[maybe_unused]] auto acc = nl::zeros({200, 512}, nl::float32, nl::psum);
    auto [ip, jf] = nl::mgrid(128, 8);
    nl::store(out[ip, jf], nl::load(a[ip, jf]));
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("tall_psum ({}:{}): err_num_partition_exceed_arch_limit: number of partitions 200 exceeds "
                    "architecture limitation of 128 (nl::zeros in psum)",
                    kFile, line));
}

TEST_CASE("err_num_partition_exceed_arch_limit - isa::iota over 256 partitions") {
  static int line = 0;
  const nki::Kernel k = nki::jit("tall_iota", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::int32, nl::shared_hbm);
    auto [ip, jf] = nl::mgrid(128, 8);
    auto big = nl::arange(256)[nl::_, nl::newaxis];
    line = __LINE__ + 1;
    auto t = isa::iota(big * 8 + jf, nl::int32);
    nl::store(out[ip, jf], nl::copy(t));
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("tall_iota ({}:{}): err_num_partition_exceed_arch_limit: number of partitions 256 exceeds "
                    "architecture limitation of 128",
                    kFile, line));
}

TEST_CASE("err_num_partition_exceed_arch_limit - exactly 128 partitions is accepted") {
  const nki::Kernel k = nki::jit("pmax_ok", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto buf = nl::full({nl::tile_size::pmax, 8}, 2.5, nl::float32, nl::sbuf);
    auto [ip, jf] = nl::mgrid(128, 8);
    nl::store(out[ip, jf], nl::load(a[ip, jf]) + buf[ip, jf]);
    return out;
  });
  auto a = input();
  const auto want = a.to_floats();
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    auto got = k.launch({}).with({ex, nullptr}).run({a}).outputs[0].to_floats();
    for (std::size_t i = 0; i < want.size(); ++i) REQUIRE(got[i] == want[i] + 2.5f);
  }
}
