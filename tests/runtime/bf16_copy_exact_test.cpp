/** \file A bf16 tile loaded and stored unchanged keeps every one of the 65536 bit patterns, on both executors. */
#include "test_support.h"

namespace nl = nki::language;

namespace {

/** out = a, through an SBUF tile of a's dtype: a load and a store, no arithmetic. */
const nki::Kernel& copy_kernel() {
  static const nki::Kernel k = nki::jit(
      "copy_tile",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        auto [ip, jf] = nl::mgrid(128, 512);
        nl::store(out[ip, jf], nl::load(a[ip, jf]));
        return out;
      },
      {"a"});
  return k;
}

}  // namespace

TEST_CASE("a bf16 copy keeps every bit pattern, NaN payloads and signalling NaNs included, on both executors") {
  // The compiled store of a bf16 value widened from bf16 skips the round trip through fp32
  // (halide_lowering.cpp, widened_bf16): this holds it to the interpreter's round trip.
  nki::Tensor a({128, 512}, nl::bfloat16);
  for (std::int64_t i = 0; i < 128 * 512; ++i) a.bits16()[i] = static_cast<std::uint16_t>(i);
  for (nki::Executor ex : {nki::Executor::halide, nki::Executor::reference}) {
    CAPTURE(nki::executor_name(ex));
    nki::Tensor c = copy_kernel()[1].with({ex, nullptr}).run({a}).outputs.at(0);
    std::int64_t differ = 0, first = -1;
    for (std::int64_t i = 0; i < 128 * 512; ++i) {
      if (c.bits16()[i] != static_cast<std::uint16_t>(i)) {
        if (first < 0) first = i;
        ++differ;
      }
    }
    CAPTURE(first);
    CHECK(differ == 0);
  }
}
