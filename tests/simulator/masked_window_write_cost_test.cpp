/** \file A masked op written straight into an on-chip window is one instruction: the write carries the op's mask. */
#include "test_support.h"

#include "nki/profile.h"
#include "nki/simulator/cost_model.h"

namespace nl = nki::language;

TEST_CASE("cost - buf[...] = nl::exp(x, mask) is the exp writing buf, with or without the mask") {
  for (bool masked : {false, true}) {
    CAPTURE(masked);
    const nki::Kernel k = nki::jit(masked ? "masked_exp_into_buf" : "exp_into_buf", [masked](nl::tensor a) {
      auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
      auto g = nl::mgrid(128, 512);
      auto buf = nl::zeros({128, 512}, a.dtype(), nl::sbuf, "buf");
      auto x = nl::load(a[g.p, g.x]);
      buf[g.p, g.x] = nl::exp(x, {.mask = masked ? (g.x < 100) : nl::predicate{}});
      nl::store(out[g.p, g.x], buf[g.p, g.x]);
      return out;
    });
    const auto r = nki::profile(k.launch({}), {{{128, 512}, nki::DType::bf16}}, "trn1");
    // memset of buf, the load, the exp (writing buf), the store: no separate copy into buf.
    CHECK(r.instructions == 4);
  }
}
