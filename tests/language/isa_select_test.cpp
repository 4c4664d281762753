/** \file isa::tensor_copy_predicated, isa::select_reduce and isa::range_select: selects, their row maximum, their errors. */
#include "lang_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {
constexpr float kFp32Min = -3.4028234663852886e38f;
}

TEST_CASE("isa::tensor_copy_predicated - src where the predicate holds, dst kept elsewhere; scalar src, reversed") {
  // o1: tile src; o2: scalar 7 with the predicate reversed.
  const nki::Kernel k = nki::jit("copy_predicated", [](nl::tensor d, nl::tensor s, nl::tensor p) {
    auto o1 = nl::ndarray(d.shape(), d.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(d.shape(), d.dtype(), nl::shared_hbm, "o2");
    auto b1 = nl::ndarray(d.shape(), d.dtype(), nl::sbuf, "b1");
    auto b2 = nl::ndarray(d.shape(), d.dtype(), nl::sbuf, "b2");
    b1.all() = nl::load(d.all());
    b2.all() = nl::load(d.all());
    auto pred = nl::load(p.all());
    isa::tensor_copy_predicated(b1.all(), nl::load(s.all()), pred);
    isa::tensor_copy_predicated(b2.all(), 7.0, pred, true);
    nl::store(o1.all(), b1);
    nl::store(o2.all(), b2);
    return std::make_tuple(o1, o2);
  });
  const std::int64_t p = 128, f = 96;
  const auto n = static_cast<std::size_t>(p * f);
  const std::vector<float> d = lt::as_dtype(test::random_floats(n, 71), DType::bf16);
  const std::vector<float> s = lt::as_dtype(test::random_floats(n, 72), DType::bf16);
  const std::vector<float> pr = lt::random_ints(n, 73, 0, 3);  // 0 false; 1..3 true
  std::vector<double> w1(n), w2(n);
  for (std::size_t i = 0; i < n; ++i) {
    w1[i] = pr[i] != 0 ? s[i] : d[i];
    w2[i] = pr[i] != 0 ? d[i] : 7.0;
  }
  lt::check_both(k, lt::no_grid(),
                 {lt::make({p, f}, DType::bf16, d), lt::make({p, f}, DType::bf16, s), lt::make({p, f}, DType::uint8, pr)},
                 {w1, w2}, "copy_predicated");
}

TEST_CASE("isa::select_reduce - predicate ? on_true : on_false, reversed, with the row maximum in reduce_res") {
  // o1: scalar on_false, max into reduce_res; o2: [P, 1] on_false, reversed, into bf16.
  const nki::Kernel k = nki::jit("select_reduce", [](nl::tensor x, nl::tensor p, nl::tensor fv) {
    const std::int64_t parts = x.shape()[0];
    auto o1 = nl::ndarray(x.shape(), nl::float32, nl::shared_hbm, "o1");
    auto m1 = nl::ndarray({parts, 1}, nl::float32, nl::shared_hbm, "m1");
    auto o2 = nl::ndarray(x.shape(), nl::bfloat16, nl::shared_hbm, "o2");
    auto res = nl::ndarray({parts, 1}, nl::float32, nl::sbuf, "res");
    auto xt = nl::load(x.all());
    auto pred = nl::load(p.all());
    nl::store(o1.all(), isa::select_reduce(pred, xt, -2.5,
                                           {.reduce_res = res.all(), .reduce_cmd = isa::reduce_cmd::reset_reduce,
                                            .reduce_op = nl::maximum}));
    nl::store(m1.all(), res);
    nl::store(o2.all(), isa::select_reduce(pred, xt, nl::load(fv.all()), {.reverse_pred = true, .dtype = nl::bfloat16}));
    return std::make_tuple(o1, m1, o2);
  });
  const std::int64_t p = 64, f = 130;
  const auto n = static_cast<std::size_t>(p * f);
  const std::vector<float> x = test::random_floats(n, 81, -3.0f, 3.0f);
  std::vector<float> pr = lt::random_ints(n, 82, 0, 1);
  for (std::int64_t j = 0; j < f; ++j) pr[static_cast<std::size_t>(j)] = 0;  // row 0 all false: its max is on_false
  const std::vector<float> fv = test::random_floats(static_cast<std::size_t>(p), 83);
  std::vector<double> w1(n), w2(n), m1(static_cast<std::size_t>(p), -std::numeric_limits<double>::infinity());
  for (std::int64_t i = 0; i < p; ++i) {
    for (std::int64_t j = 0; j < f; ++j) {
      const auto at = static_cast<std::size_t>(i * f + j);
      w1[at] = pr[at] != 0 ? x[at] : -2.5;
      w2[at] = pr[at] != 0 ? fv[static_cast<std::size_t>(i)] : x[at];
      m1[static_cast<std::size_t>(i)] = std::max(m1[static_cast<std::size_t>(i)], w1[at]);
    }
  }
  lt::check_both(k, lt::no_grid(),
                 {lt::make({p, f}, DType::fp32, x), lt::make({p, f}, DType::uint8, pr), lt::make({p, 1}, DType::fp32, fv)},
                 {w1, m1, w2}, "select_reduce");
}

TEST_CASE("isa::range_select - on_true where range_start + f lies between the bounds, FP32_MIN elsewhere; the row max") {
  // Rows keep b0 <= 5 + f < b1 (o1, fp32, with the max) and 5 + f == b0 (o2, bf16: FP32_MIN rounds to -inf).
  const nki::Kernel k = nki::jit("range_select", [](nl::tensor x, nl::tensor b) {
    const std::int64_t parts = x.shape()[0];
    auto o1 = nl::ndarray(x.shape(), nl::float32, nl::shared_hbm, "o1");
    auto m1 = nl::ndarray({parts, 1}, nl::float32, nl::shared_hbm, "m1");
    auto o2 = nl::ndarray(x.shape(), nl::bfloat16, nl::shared_hbm, "o2");
    auto res = nl::ndarray({parts, 1}, nl::float32, nl::sbuf, "res");
    auto xt = nl::load(x.all());
    auto bt = nl::load(b.all());  // [P, 2]
    auto b0 = bt[nl::_, nl::ds(0, 1)];
    auto b1 = bt[nl::_, nl::ds(1, 1)];
    nl::store(o1.all(), isa::range_select(xt, nl::greater_equal, nl::less, b0, b1,
                                          {.reduce_res = res.all(), .range_start = 5}));
    nl::store(m1.all(), res);
    nl::store(o2.all(), isa::range_select(xt, nl::equal, nl::greater, b0, b0,
                                          {.range_start = 5, .dtype = nl::bfloat16}));
    return std::make_tuple(o1, m1, o2);
  });
  const std::int64_t p = 128, f = 40;
  const std::vector<float> x = test::random_floats(static_cast<std::size_t>(p * f), 91, -4.0f, 4.0f);
  std::vector<float> b(static_cast<std::size_t>(p * 2));
  for (std::int64_t i = 0; i < p; ++i) {  // lower bound anywhere in [0, 50), upper after it; some rows empty
    b[static_cast<std::size_t>(2 * i)] = static_cast<float>(i % 50);
    b[static_cast<std::size_t>(2 * i + 1)] = static_cast<float>(i % 50 + i % 7);
  }
  std::vector<double> w1, w2, m1;
  for (std::int64_t i = 0; i < p; ++i) {
    double m = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < f; ++j) {
      const float idx = static_cast<float>(5 + j), lo = b[static_cast<std::size_t>(2 * i)],
                  hi = b[static_cast<std::size_t>(2 * i + 1)];
      const float v = x[static_cast<std::size_t>(i * f + j)];
      w1.push_back(idx >= lo && idx < hi ? v : kFp32Min);
      w2.push_back(idx == lo && idx > lo ? v : kFp32Min);
      m = std::max(m, w1.back());
    }
    m1.push_back(m);
  }
  lt::check_both(k, lt::no_grid(), {lt::make({p, f}, DType::fp32, x), lt::make({p, 2}, DType::fp32, b)}, {w1, m1, w2},
                 "range_select");
}

namespace {
const char* kFile = "tests/language/isa_select_test.cpp";

template <class F>
std::string misuse(F body) {
  const nki::Kernel k = nki::jit("select_misuse", [&](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    nl::store(out.all(), body(a));
    return out;
  });
  return test::user_error_of([&] { k(lt::make({8, 16}, DType::fp32, test::random_floats(128, 5))); });
}
}  // namespace

TEST_CASE("isa::tensor_copy_predicated / select_reduce / range_select - misuse names NKI's error") {
  int line = 0;
  std::string e = misuse([&](nl::tensor a) {
    auto x = nl::load(a.all());
    auto buf = nl::ndarray(a.shape(), nl::float32, nl::sbuf, "buf");
    line = __LINE__ + 1;
    isa::tensor_copy_predicated(buf.all(), x, x);
    return x;
  });
  CHECK(e == fmt::format("select_misuse ({}:{}): err_unsupported_dtype: isa::tensor_copy_predicated: predicate is fp32; "
                         "it must be uint8, uint16 or uint32", kFile, line));
  e = misuse([&](nl::tensor a) {
    auto x = nl::load(a.all());
    line = __LINE__ + 1;
    isa::tensor_copy_predicated(a.all(), x, nl::copy(x, {.dtype = nl::uint8}));
    return x;
  });
  CHECK(e == fmt::format("select_misuse ({}:{}): err_unsupported_memory: isa::tensor_copy_predicated: dst is tensor in0 in "
                         "hbm_input; it must be an SBUF or PSUM window", kFile, line));
  e = misuse([&](nl::tensor a) {
    auto x = nl::load(a.all());
    line = __LINE__ + 1;
    return isa::select_reduce(nl::copy(x, {.dtype = nl::uint8}), x, 0.0, {.reduce_op = nl::add});
  });
  CHECK(e == fmt::format("select_misuse ({}:{}): err_unsupported_reduction_op: isa::select_reduce reduces with "
                         "nl::maximum only; got reduce_op add", kFile, line));
  e = misuse([&](nl::tensor a) {
    auto x = nl::load(a.all());
    auto res = nl::ndarray({8, 1}, nl::float32, nl::sbuf, "res");
    line = __LINE__ + 1;
    return isa::select_reduce(nl::copy(x, {.dtype = nl::uint8}), x, 0.0,
                              {.reduce_res = res.all(), .reduce_cmd = isa::reduce_cmd::reduce});
  });
  CHECK(e == fmt::format("select_misuse ({}:{}): err_unsupported_reduce_cmd: isa::select_reduce with reduce_res: only "
                         "reduce_cmd reset_reduce (registers reset, this instruction's maximum written out) is "
                         "supported; state kept across instructions is not", kFile, line));
  e = misuse([&](nl::tensor a) {
    auto x = nl::load(a.all());
    auto b = x[nl::_, nl::ds(0, 1)];
    line = __LINE__ + 1;
    return isa::range_select(x, nl::add, nl::less, b, b);
  });
  CHECK(e == fmt::format("select_misuse ({}:{}): err_unsupported_comparison_op: isa::range_select: comparison add; it "
                         "must be equal, less, less_equal, greater or greater_equal", kFile, line));
  e = misuse([&](nl::tensor a) {
    auto x = nl::load(a.all());
    auto b = x[nl::_, nl::ds(0, 2)];
    line = __LINE__ + 1;
    return isa::range_select(x, nl::less, nl::less, b, b);
  });
  CHECK(e == fmt::format("select_misuse ({}:{}): err_free_dim_mismatch: isa::range_select: bound0 must be a [8, 1] tile "
                         "(one element per partition), got [8,2]", kFile, line));
}
