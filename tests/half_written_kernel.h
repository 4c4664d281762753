/** \file A kernel with a bug the tests look for: it copies rows 0..63 of a [128, C] input and never writes rows 64..127. */
#pragma once

#include "nki/nki.h"

namespace test {

inline const nki::Kernel& half_written_kernel() {
  namespace nl = nki::language;
  static const nki::Kernel k = nki::jit(
      "half_written",
      [](nl::tensor a) {
        auto c = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "c");
        auto ix = nl::arange(64)[nl::_, nl::newaxis];
        auto iy = nl::arange(a.shape()[1])[nl::newaxis, nl::_];
        nl::store(c[ix, iy], nl::load(a[ix, iy]));
        return c;
      },
      {"a"});
  return k;
}

}  // namespace test
