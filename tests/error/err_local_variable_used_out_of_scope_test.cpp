/** \file err_local_variable_used_out_of_scope: a tile or tensor made inside a loop, used after the loop. */
#include <optional>

#include "test_support.h"

namespace nl = nki::language;

namespace {
const char* kFile = "tests/error/err_local_variable_used_out_of_scope_test.cpp";
}

TEST_CASE("err_local_variable_used_out_of_scope - a tile loaded in a loop, stored after it") {
  static int loop_line = 0, line = 0;
  const nki::Kernel k = nki::jit(
      "tile_escapes_loop",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 64}, a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        std::optional<nl::tile> last;
        loop_line = __LINE__ + 1;
        for (auto i : nl::sequential_range(2)) {
          last = nl::load(a[i * 128 + ip, jf]);
        }
        line = __LINE__ + 1;
        nl::store(out[ip, jf], *last);
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("tile_escapes_loop ({0}:{1}): err_local_variable_used_out_of_scope: tile %t0 was created inside "
                    "the loop at {0}:{2} and is used after that loop ended; allocate a buffer outside the loop and "
                    "write the tile into it",
                    kFile, line, loop_line));
}

TEST_CASE("err_local_variable_used_out_of_scope - a tile from an inner loop used in the outer loop") {
  static int loop_line = 0, line = 0;
  const nki::Kernel k = nki::jit(
      "tile_escapes_inner_loop",
      [](nl::tensor a) {
        auto out = nl::ndarray({256, 64}, a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        for (auto i : nl::affine_range(2)) {
          std::optional<nl::tile> t;
          loop_line = __LINE__ + 1;
          for (auto j : nl::sequential_range(1)) {
            t = nl::exp(nl::load(a[i * 128 + ip, j * 64 + jf]));
          }
          line = __LINE__ + 1;
          auto u = nl::add(*t, 1.0);
          nl::store(out[i * 128 + ip, jf], u);
        }
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("tile_escapes_inner_loop ({0}:{1}): err_local_variable_used_out_of_scope: tile %t1 was created "
                    "inside the loop at {0}:{2} and is used after that loop ended; allocate a buffer outside the loop "
                    "and write the tile into it",
                    kFile, line, loop_line));
}

TEST_CASE("err_local_variable_used_out_of_scope - an sbuf tensor allocated in a loop, read after it") {
  static int loop_line = 0, line = 0;
  const nki::Kernel k = nki::jit(
      "tensor_escapes_loop",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 64}, a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        std::optional<nl::tensor> buf;
        loop_line = __LINE__ + 1;
        for (auto i : nl::sequential_range(2)) {
          buf = nl::ndarray({128, 64}, a.dtype(), nl::sbuf, "scratch");
          (*buf)[ip, jf] = nl::load(a[i * 128 + ip, jf]);
        }
        line = __LINE__ + 1;
        nl::store(out[ip, jf], nl::copy((*buf)[ip, jf]));
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 1));
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("tensor_escapes_loop ({0}:{1}): err_local_variable_used_out_of_scope: tensor scratch was allocated "
                    "inside the loop at {0}:{2} and is used after that loop ended",
                    kFile, line, loop_line));
}

TEST_CASE("err_local_variable_used_out_of_scope - a buffer outside the loop carries the value out") {
  const nki::Kernel k = nki::jit(
      "buffer_outside_loop",
      [](nl::tensor a) {
        auto out = nl::ndarray({128, 64}, a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        auto keep = nl::ndarray({128, 64}, a.dtype(), nl::sbuf);
        for (auto i : nl::sequential_range(2)) keep[ip, jf] = nl::load(a[i * 128 + ip, jf]);
        nl::store(out[ip, jf], nl::copy(keep[ip, jf]));
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 1));
  const auto in = a.to_floats();
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    const auto got = k.launch({}).with({ex, nullptr}).run({a}).outputs[0].to_floats();
    for (std::size_t e = 0; e < got.size(); ++e) REQUIRE(got[e] == in[128 * 64 + e]);
  }
}
