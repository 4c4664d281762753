/** \file err_unsupported_memory: an op given a tensor or tile in a memory it cannot read or write. */
#include "test_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;

namespace {
const char* kFile = "tests/error/err_unsupported_memory_test.cpp";
auto input() { return nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 1)); }
}  // namespace

TEST_CASE("err_unsupported_memory - nl::load from an sbuf array") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "load_sbuf",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto buf = nl::zeros({128, 64}, nl::float32, nl::sbuf, "buf");
        auto [ip, jf] = nl::mgrid(128, 64);
        line = __LINE__ + 1;
        auto t = nl::load(buf[ip, jf]);
        nl::store(out[ip, jf], t);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("load_sbuf ({}:{}): err_unsupported_memory: nl::load reads HBM; tensor buf is in sbuf (use it as "
                    "an operand, or nl::copy it)",
                    kFile, line));
}

TEST_CASE("err_unsupported_memory - nl::store into an sbuf array") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "store_sbuf",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto buf = nl::ndarray({128, 64}, nl::float32, nl::sbuf, "buf");
        auto [ip, jf] = nl::mgrid(128, 64);
        line = __LINE__ + 1;
        nl::store(buf[ip, jf], nl::load(a[ip, jf]));
        nl::store(out[ip, jf], nl::copy(buf[ip, jf]));
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("store_sbuf ({}:{}): err_unsupported_memory: nl::store writes HBM; tensor buf is in sbuf (write "
                    "on-chip arrays with `=`)",
                    kFile, line));
}

TEST_CASE("err_unsupported_memory - += into an HBM window") {
  // += accumulates into on-chip arrays (SBUF or PSUM); HBM is written with nl::store.
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "accumulate_hbm",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
        auto [ip, jf] = nl::mgrid(128, 64);
        nl::store(out[ip, jf], nl::load(a[ip, jf]));
        line = __LINE__ + 1;
        out[ip, jf] += nl::load(a[ip, jf]);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("accumulate_hbm ({}:{}): err_unsupported_memory: tensor out is in shared_hbm: write HBM with "
                    "nl::store; `=` and `+=` write on-chip arrays",
                    kFile, line));
}

TEST_CASE("err_unsupported_memory - = into an HBM window") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "assign_hbm",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
        auto [ip, jf] = nl::mgrid(128, 64);
        line = __LINE__ + 1;
        out[ip, jf] = nl::load(a[ip, jf]);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("assign_hbm ({}:{}): err_unsupported_memory: tensor out is in shared_hbm: write HBM with "
                    "nl::store; `=` and `+=` write on-chip arrays",
                    kFile, line));
}

TEST_CASE("err_unsupported_memory - a matmul operand read from psum") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "matmul_from_psum",
      [](nl::tensor a) {
        auto out = nl::ndarray({64, 64}, nl::float32, nl::shared_hbm);
        auto ps = nl::zeros({128, 64}, nl::float32, nl::psum, "ps");
        auto x = nl::load(a[nl::_, nl::_]);
        line = __LINE__ + 1;
        auto r = isa::nc_matmul(ps[nl::_, nl::_], x);
        nl::store(out.all(), nl::copy(r));
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("matmul_from_psum ({}:{}): err_unsupported_memory: isa::nc_matmul reads its stationary operand "
                    "from SBUF; tile %t1 is in psum: copy it to SBUF with nl::copy first",
                    kFile, line));
}

TEST_CASE("err_unsupported_memory - a matmul result fed straight into another matmul") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "matmul_chain",
      [](nl::tensor a) {
        auto out = nl::ndarray({64, 64}, nl::float32, nl::shared_hbm);
        auto x = nl::load(a[nl::_, nl::_]);
        auto r = nl::matmul(x, x, true);  // [64, 64] in psum
        auto y = nl::load(a[nl::ds(0, 64), nl::_]);
        line = __LINE__ + 1;
        auto r2 = nl::matmul(y, r, true);
        nl::store(out.all(), nl::copy(r2));
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("matmul_chain ({}:{}): err_unsupported_memory: nl::matmul reads its y operand from SBUF; tile %t1 "
                    "is in psum: copy it to SBUF with nl::copy first",
                    kFile, line));
}

TEST_CASE("err_unsupported_memory - a compute op reading an HBM window") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "exp_of_hbm",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        line = __LINE__ + 1;
        auto t = nl::exp(a[ip, jf]);
        nl::store(out[ip, jf], t);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("exp_of_hbm ({}:{}): err_unsupported_memory: tensor a is in HBM (a kernel argument): compute ops read SBUF or "
                    "PSUM; bring it on chip with nl::load first",
                    kFile, line));
}

TEST_CASE("err_unsupported_memory - a kernel returning an sbuf array") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "returns_sbuf",
      [](nl::tensor a) {
        line = __LINE__ + 1;
        auto buf = nl::ndarray({128, 64}, a.dtype(), nl::sbuf, "buf");
        buf[nl::_, nl::_] = nl::load(a.all());
        return buf;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("returns_sbuf ({}:{}): err_unsupported_memory: the kernel returns tensor buf, which is not an "
                    "ndarray in shared_hbm",
                    kFile, line));
}
