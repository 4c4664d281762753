/**
 * \file Checked mode and masks: masked-off elements are undefined. What is computed from one is
 * undefined too; a store of such a value into a tensor the caller sees is err_uninitialized_read,
 * naming the element, the op whose mask left it undefined and the line that read it.
 */
#include "test_support.h"

namespace nl = nki::language;

namespace {
const char* kFile = "tests/simulator/checked_masked_off_test.cpp";

nki::LaunchOptions checked() {
  nki::LaunchOptions o;
  o.checked = true;
  return o;
}

nki::LaunchResult run(const nki::Kernel& k, nki::Executor ex, const std::vector<nki::Tensor>& args) {
  return k.launch({}).with({ex, nullptr}).run(args);
}
}  // namespace

TEST_CASE("checked masked-off - a sum over a masked load passes unchecked, checked names the element and the line") {
  static int load_line = 0, sum_line = 0, store_line = 0;
  const nki::Kernel k = nki::jit(
      "sum_of_masked",
      [](nl::tensor a) {
        auto out = nl::ndarray({8, 1}, a.dtype(), nl::shared_hbm, "out");
        auto g = nl::mgrid(8, 16);
        load_line = __LINE__ + 1;
        auto x = nl::load(a[g.p, g.x], {.mask = g.x < 10});
        sum_line = __LINE__ + 1;
        auto s = nl::sum(x, 1, {.keepdims = true});  // relies on zeros past column 10
        store_line = __LINE__ + 1;
        nl::store(out.all(), s);
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({8, 16}, nki::DType::fp32, test::random_floats(8 * 16, 7));
  // Unchecked, both executors run it (and agree).
  const auto h = run(k, nki::Executor::halide, {a});
  const auto r = run(k, nki::Executor::reference, {a});
  CHECK(test::first_difference(h.outputs[0], r.outputs[0]) == -1);
  const std::string msg = test::user_error_of([&] { k.launch({}).with(checked()).run({a}); });
  CHECK(msg == fmt::format("sum_of_masked ({0}:{1}): err_uninitialized_read: instance (no grid) nl::sum reads element "
                           "[0,10] of the tile of nl::load at {0}:{2}, which its mask left undefined (masked-off "
                           "elements are not computed); the result reaches element [0,0] of tensor out [8,1] through "
                           "nl::store at {0}:{3}",
                           kFile, sum_line, load_line, store_line));
}

TEST_CASE("checked masked-off - storing a masked tile without the mask names the first masked-off element") {
  static int load_line = 0, store_line = 0;
  const nki::Kernel k = nki::jit(
      "store_unmasked",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
        auto g = nl::mgrid(8, 16);
        load_line = __LINE__ + 1;
        auto x = nl::load(a[g.p, g.x], {.mask = g.p < 3});
        store_line = __LINE__ + 1;
        nl::store(out[g.p, g.x], nl::exp(x, {.mask = g.p < 3}));
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({8, 16}, nki::DType::bf16, test::random_floats(8 * 16, 8));
  run(k, nki::Executor::halide, {a});
  run(k, nki::Executor::reference, {a});
  const std::string msg = test::user_error_of([&] { k.launch({}).with(checked()).run({a}); });
  CHECK(msg == fmt::format("store_unmasked ({0}:{1}): err_uninitialized_read: instance (no grid) nl::store reads element "
                           "[3,0] of the tile of nl::exp at {0}:{1}, which its mask left undefined (masked-off elements "
                           "are not computed), and stores it to element [3,0] of tensor out [8,16]",
                           kFile, store_line));
  (void)load_line;
}

TEST_CASE("checked masked-off - NKI's pattern: masked load, unmasked math, masked store passes and matches unchecked") {
  // As NKI's rmsnorm tutorial: the rows past the end hold garbage through every op, and are never stored.
  const nki::Kernel k = nki::jit(
      "rows_past_the_end",
      [](nl::tensor a) {
        const std::int64_t rows = a.shape()[0], f = a.shape()[1];
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
        auto ip = nl::arange(128)[nl::_, nl::newaxis];
        auto jf = nl::arange(f)[nl::newaxis, nl::_];
        for (auto i : nl::affine_range((rows + 127) / 128)) {
          auto in = i * 128 + ip < rows;
          auto x = nl::load(a[i * 128 + ip, jf], {.mask = in, .dtype = nl::float32});
          auto e = nl::exp(nl::subtract(x, nl::max(x, 1, {.keepdims = true})));
          auto y = nl::multiply(e, nl::reciprocal(nl::sum(e, 1, {.keepdims = true})));
          auto buf = nl::ndarray({nl::par_dim(128), f}, nl::float32, nl::sbuf, "buf");
          buf[nl::_, nl::_] = y;  // the undefined rows go through SBUF too
          nl::store(out[i * 128 + ip, jf], buf[nl::_, nl::_], {.mask = in});
        }
        return out;
      },
      {"a"});
  for (std::int64_t rows : {100, 200}) {
    CAPTURE(rows);
    auto a = nki::Tensor::from_floats({rows, 24}, nki::DType::bf16,
                                      test::random_floats(static_cast<std::size_t>(rows * 24), 9));
    const auto unchecked = run(k, nki::Executor::reference, {a});
    const auto r = k.launch({}).with(checked()).run({a});
    CHECK(test::first_difference(r.outputs[0], unchecked.outputs[0]) == -1);
  }
}

TEST_CASE("checked masked-off - an undefined element written to SBUF and read back is reported at the write") {
  static int add_line = 0, write_line = 0, store_line = 0;
  const nki::Kernel k = nki::jit(
      "through_sbuf",
      [](nl::tensor a) {
        auto out = nl::ndarray({4, 8}, a.dtype(), nl::shared_hbm, "out");
        auto g = nl::mgrid(4, 8);
        auto x = nl::load(a[g.p, g.x]);
        add_line = __LINE__ + 1;
        auto y = nl::add(x, 1.0, {.mask = g.x != 5});
        auto buf = nl::ndarray({nl::par_dim(4), 8}, a.dtype(), nl::sbuf, "buf");
        write_line = __LINE__ + 1;
        buf[nl::_, nl::_] = y;
        store_line = __LINE__ + 1;
        nl::store(out[g.p, g.x], nl::multiply(buf[nl::_, nl::_], 2.0));
        return out;
      },
      {"a"});
  auto a = nki::Tensor::from_floats({4, 8}, nki::DType::fp32, test::random_floats(4 * 8, 10));
  const std::string msg = test::user_error_of([&] { k.launch({}).with(checked()).run({a}); });
  CHECK(msg == fmt::format("through_sbuf ({0}:{1}): err_uninitialized_read: instance (no grid) `=` reads element [0,5] "
                           "of the tile of nl::add at {0}:{2}, which its mask left undefined (masked-off elements are "
                           "not computed); the result reaches element [0,5] of tensor out [4,8] through nl::store at "
                           "{0}:{3}",
                           kFile, write_line, add_line, store_line));
}

TEST_CASE("checked masked-off - a masked matmul read by a full copy: every output column depends on the undefined rows") {
  static int mm_line = 0, copy_line = 0;
  const nki::Kernel k = nki::jit(
      "masked_stationary",
      [](nl::tensor st, nl::tensor mv) {
        auto out = nl::ndarray({8, 16}, nl::float32, nl::shared_hbm, "out");
        auto g = nl::mgrid(4, 8);
        mm_line = __LINE__ + 1;
        auto s = nl::load(st[g.p, g.x], {.mask = g.p < 2});  // K rows 2 and 3 undefined
        copy_line = __LINE__ + 1;
        nl::store(out.all(), nl::copy(nki::isa::nc_matmul(s, nl::load(mv.all()))));
        return out;
      },
      {"st", "mv"});
  auto st = nki::Tensor::from_floats({4, 8}, nki::DType::bf16, test::random_floats(4 * 8, 11));
  auto mv = nki::Tensor::from_floats({4, 16}, nki::DType::bf16, test::random_floats(4 * 16, 12));
  const std::string msg = test::user_error_of([&] { k.launch({}).with(checked()).run({st, mv}); });
  CHECK(msg == fmt::format("masked_stationary ({0}:{1}): err_uninitialized_read: instance (no grid) nl::matmul reads "
                           "element [2,0] of the tile of nl::load at {0}:{2}, which its mask left undefined (masked-off "
                           "elements are not computed); the result reaches element [0,0] of tensor out [8,16] through "
                           "nl::store at {0}:{1}",
                           kFile, copy_line, mm_line));
}
