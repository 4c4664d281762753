/** \file err_unsupported_mixing_basic_advanced_tensor_indexing: slices and index arrays in one access. */
#include "test_support.h"

namespace nl = nki::language;

namespace {
const char* kFile = "tests/error/err_unsupported_mixing_basic_advanced_tensor_indexing_test.cpp";
auto input() { return nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 1)); }
}  // namespace

TEST_CASE("err_unsupported_mixing_basic_advanced_tensor_indexing - nl::ds with an arange") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "ds_and_arange",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto jf = nl::arange(64)[nl::newaxis, nl::_];
        line = __LINE__ + 1;
        auto t = nl::load(a[nl::ds(0, 128), jf]);
        nl::store(out.all(), t);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("ds_and_arange ({}:{}): err_unsupported_mixing_basic_advanced_tensor_indexing: tensor a is indexed "
                    "with both a slice and an index array of shape [1,64]; use only slices (nl::ds, _) or only index "
                    "arrays (arange, mgrid) in one access",
                    kFile, line));
}

TEST_CASE("err_unsupported_mixing_basic_advanced_tensor_indexing - `_` with an mgrid index in a store") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "all_and_mgrid",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        auto t = nl::load(a[ip, jf]);
        line = __LINE__ + 1;
        nl::store(out[ip, nl::_], t);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("all_and_mgrid ({}:{}): err_unsupported_mixing_basic_advanced_tensor_indexing: tensor tensor1 is "
                    "indexed with both a _ and an index array of shape [128,1]; use only slices (nl::ds, _) or only "
                    "index arrays (arange, mgrid) in one access",
                    kFile, line));
}

TEST_CASE("err_unsupported_mixing_basic_advanced_tensor_indexing - a slice that starts at an index array") {
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "slice_from_array",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto ip = nl::arange(128)[nl::_, nl::newaxis];
        line = __LINE__ + 1;
        auto t = nl::load(a[nl::ds(ip, 1), nl::_]);
        nl::store(out.all(), t);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("slice_from_array ({}:{}): err_unsupported_mixing_basic_advanced_tensor_indexing: the start of a "
                    "slice of tensor a is an index array of shape [128,1]; a slice starts at a scalar index",
                    kFile, line));
}

TEST_CASE("err_unsupported_mixing_basic_advanced_tensor_indexing - an index array with omitted trailing dimensions") {
  // Omitted trailing subscripts are whole dimensions (`_`), so one index array on a 2-D tensor mixes.
  static int line = 0;
  const nki::Kernel k = nki::jit(
      "array_then_omitted",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto ip = nl::arange(128)[nl::_, nl::newaxis];
        line = __LINE__ + 1;
        auto t = nl::load(a[ip]);
        nl::store(out.all(), t);
        return out;
      },
      {"a"});
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg == fmt::format("array_then_omitted ({}:{}): err_unsupported_mixing_basic_advanced_tensor_indexing: tensor a is "
                    "indexed with both an omitted trailing dimension (a whole `_`) and an index array of shape "
                    "[128,1]; use only slices (nl::ds, _) or only index arrays (arange, mgrid) in one access",
                    kFile, line));
}

TEST_CASE("err_unsupported_mixing_basic_advanced_tensor_indexing - integers combine with either kind") {
  const nki::Kernel k = nki::jit(
      "integers_mix_fine",
      [](nl::tensor a) {
        auto out = nl::ndarray({2, 128, 64}, a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 64);
        nl::store(out[0, ip, jf], nl::load(a[ip, jf]));           // advanced + integer
        nl::store(out[1, nl::_, nl::_], nl::load(a[nl::_, nl::ds(0, 64)]));  // basic + integer
        return out;
      },
      {"a"});
  auto a = input();
  const auto in = a.to_floats();
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    const auto got = k.launch({}).with({ex, nullptr}).run({a}).outputs[0].to_floats();
    for (std::size_t e = 0; e < in.size(); ++e) {
      REQUIRE(got[e] == in[e]);
      REQUIRE(got[in.size() + e] == in[e]);
    }
  }
}
