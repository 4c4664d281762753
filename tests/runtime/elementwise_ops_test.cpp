/** \file Each elementwise op against a host computation: fp32 compute, rounded to the tile's dtype. */
#include <cmath>
#include <limits>

#include "test_support.h"

namespace nl = nki::language;

namespace {

using TileOp = nl::binary_fn;

nki::Kernel binary_kernel(const char* name, const TileOp& op) {
  return nki::jit(name, [op](nl::tensor a, nl::tensor b) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto i = nl::program_id(0) * 128 + nl::arange(128)[nl::_, nl::newaxis];  // (128, 1)
    auto j = nl::arange(32)[nl::newaxis, nl::_];                              // (1, 32)
    nl::store(out[i, j], op(nl::load(a[i, j]), nl::load(b[i, j])));
    return out;
  });
}

float host_op(const std::string& name, float x, float y) {
  float r = 0;
  if (name == "add") r = x + y;
  if (name == "subtract") r = x - y;
  if (name == "multiply") r = x * y;
  if (name == "divide") r = x / y;
  if (name == "maximum") r = std::isnan(x) ? x : std::isnan(y) ? y : (x >= y ? x : y);
  if (name == "minimum") r = std::isnan(x) ? x : std::isnan(y) ? y : (x <= y ? x : y);
  return std::isnan(r) ? std::numeric_limits<float>::quiet_NaN() : r;
}

}  // namespace

TEST_CASE("add, subtract, multiply, divide, maximum, minimum match the host, specials included") {
  const std::pair<const char*, TileOp> ops[] = {{"add", nl::add},         {"subtract", nl::subtract},
                                                {"multiply", nl::multiply}, {"divide", nl::divide},
                                                {"maximum", nl::maximum},   {"minimum", nl::minimum}};
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  auto av = test::random_floats(256 * 32, 11), bv = test::random_floats(256 * 32, 12);
  const float sa[] = {0.0f, -0.0f, inf, -inf, nan, 1.0f, 0.0f, -2.5f, 3.0f, 1e-39f};
  const float sb[] = {-0.0f, 0.0f, inf, 1.0f, 2.0f, nan, 0.0f, -2.5f, -inf, 1e-39f};
  for (std::size_t x = 0; x < std::size(sa); ++x) av[x] = sa[x], bv[x] = sb[x];
  for (auto [name, op] : ops) {
    const nki::Kernel k = binary_kernel(name, op);
    for (nki::DType dt : {nki::DType::fp32, nki::DType::bf16, nki::DType::fp16}) {
      auto a = nki::Tensor::from_floats({256, 32}, dt, av);
      auto b = nki::Tensor::from_floats({256, 32}, dt, bv);
      const auto ah = a.to_floats(), bh = b.to_floats();
      for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
        auto out = k[nl::nc(2)].with({ex, nullptr}).run({a, b}).outputs[0].to_floats();
        for (std::size_t x = 0; x < out.size(); ++x) {
          const float want = static_cast<float>(nki::round_to_dtype(host_op(name, ah[x], bh[x]), dt));
          const bool same = std::isnan(want) ? std::isnan(out[x]) : std::bit_cast<std::uint32_t>(want) ==
                                                                         std::bit_cast<std::uint32_t>(out[x]);
          if (!same) {
            FAIL(fmt::format("{} {} {} element {}: {} op {} expected {} got {}", name, nki::dtype_name(dt),
                             nki::executor_name(ex), x, ah[x], bh[x], want, out[x]));
          }
        }
      }
    }
  }
}
