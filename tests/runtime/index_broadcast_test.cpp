/** \file Size-1 aranges broadcast as the constant 0; NaN bits survive a copy. */
#include <bit>

#include "test_support.h"

namespace nl = nki::language;

TEST_CASE("arange(512) + arange(1) along one dimension is arange(512), on both executors") {
  const nki::Kernel k = nki::jit("plus_arange1", [](nl::tensor a) {
    auto out = nl::ndarray({128, 512}, a.dtype(), nl::shared_hbm);
    auto i = nl::arange(128)[nl::_, nl::newaxis];
    auto j = nl::arange(512)[nl::newaxis, nl::_] + nl::arange(1)[nl::newaxis, nl::_];  // (1, 512)
    nl::store(out[i, j], nl::load(a[i, j]));
    return out;
  });
  std::vector<float> v(128 * 1024);
  for (std::size_t x = 0; x < v.size(); ++x) v[x] = static_cast<float>(x % 1000);
  auto a = nki::Tensor::from_floats({128, 1024}, nki::DType::fp32, v);
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    auto out = k.launch({}).with({ex, nullptr}).run({a}).outputs[0].to_floats();
    CHECK(out[3] == 3.0f);
    CHECK(out[512 + 7] == v[1024 + 7]);
  }
}

TEST_CASE("a copy moves 16-bit NaN payloads unchanged, signalling ones included") {
  const nki::Kernel k = nki::jit("copy", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto i = nl::arange(128)[nl::_, nl::newaxis];
    auto j = nl::arange(4)[nl::newaxis, nl::_];
    nl::store(out[i, j], nl::load(a[i, j]));
    return out;
  });
  const std::uint16_t bf16_nans[] = {0x7f81, 0xff81, 0x7fc1, 0x7fff};
  const std::uint16_t fp16_nans[] = {0x7c01, 0xfc01, 0x7e01, 0x7fff};
  for (auto [dt, nans] : {std::pair{nki::DType::bf16, bf16_nans}, std::pair{nki::DType::fp16, fp16_nans}}) {
    nki::Tensor a({128, 4}, dt);
    for (std::size_t x = 0; x < 512; ++x) a.bits16()[x] = nans[x % 4];
    for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
      nki::Tensor out = k.launch({}).with({ex, nullptr}).run({a}).outputs[0];
      CHECK(test::first_difference(out, a) == -1);
    }
  }
}
