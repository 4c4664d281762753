/** \file isa::tensor_scalar_cumulative (a running op1 of op0(src, imm0)) and isa::tensor_partition_reduce (across partitions). */
#include "lang_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

using Op = lt::AluOp;

/** reg = op1(op0(x, imm0) (or op0(imm0, x)), reg) from `init[row]`, each value rounded to `out`. */
std::vector<double> host_cumulative(const std::vector<float>& x, std::int64_t p, std::int64_t f, Op op0,
                                    const std::vector<float>& imm0, bool reverse0, Op op1,
                                    const std::vector<float>& init, DType out) {
  std::vector<double> r(x.size());
  for (std::int64_t i = 0; i < p; ++i) {
    float reg = init[static_cast<std::size_t>(i)];
    const float s = imm0[static_cast<std::size_t>(i)];
    for (std::int64_t j = 0; j < f; ++j) {
      const auto at = static_cast<std::size_t>(i * f + j);
      const float y = reverse0 ? lt::host_alu(op0, s, x[at]) : lt::host_alu(op0, x[at], s);
      reg = lt::host_alu(op1, y, reg);
      r[at] = lt::rd(reg, out);
    }
  }
  return r;
}

}  // namespace

TEST_CASE("isa::tensor_scalar_cumulative - running sums, products, max and min, reset and loaded registers") {
  // o1: cumsum of x * 2; o2: running max of x - s (s a [P, 1] tile), into bf16; o3: reg = (s - x) - reg from imm1 = 3;
  // o4: running product of x + 0.5 from a [P, 1] imm1; o5: running min of x.
  const nki::Kernel k = nki::jit("cumulative", [](nl::tensor a, nl::tensor b) {
    auto o1 = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), nl::bfloat16, nl::shared_hbm, "o2");
    auto o3 = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "o3");
    auto o4 = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "o4");
    auto o5 = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "o5");
    auto x = nl::load(a.all());
    auto s = nl::load(b.all());
    nl::store(o1.all(), isa::tensor_scalar_cumulative(x, nl::multiply, nl::add, 2.0));
    nl::store(o2.all(), isa::tensor_scalar_cumulative(x, nl::subtract, nl::maximum, s, 0.0, {.dtype = nl::bfloat16}));
    nl::store(o3.all(), isa::tensor_scalar_cumulative(x, nl::subtract, nl::subtract, s, 3.0,
                                                      {.reverse0 = true, .reduce_cmd = isa::reduce_cmd::load_reduce}));
    nl::store(o4.all(), isa::tensor_scalar_cumulative(x, nl::add, nl::multiply, 0.5, s,
                                                      {.reduce_cmd = isa::reduce_cmd::load_reduce}));
    nl::store(o5.all(), isa::tensor_scalar_cumulative(x, nl::add, nl::minimum, 0.0));
    return std::make_tuple(o1, o2, o3, o4, o5);
  });
  for (const auto& [p, f] : {std::pair<std::int64_t, std::int64_t>{128, 257}, {5, 9}, {1, 1}}) {
    CAPTURE(p);
    CAPTURE(f);
    const auto n = static_cast<std::size_t>(p * f);
    const std::vector<float> x = test::random_floats(n, 41, -1.5f, 1.5f);
    const std::vector<float> s = test::random_floats(static_cast<std::size_t>(p), 42);
    const auto all = [&](float v) { return std::vector<float>(static_cast<std::size_t>(p), v); };
    const float inf = std::numeric_limits<float>::infinity();
    lt::check_both(k, lt::no_grid(), {lt::make({p, f}, DType::fp32, x), lt::make({p, 1}, DType::fp32, s)},
                   {host_cumulative(x, p, f, Op::multiply, all(2), false, Op::add, all(0), DType::fp32),
                    host_cumulative(x, p, f, Op::subtract, s, false, Op::maximum, all(-inf), DType::bf16),
                    host_cumulative(x, p, f, Op::subtract, s, true, Op::subtract, all(3), DType::fp32),
                    host_cumulative(x, p, f, Op::add, all(0.5f), false, Op::multiply, s, DType::fp32),
                    host_cumulative(x, p, f, Op::add, all(0), false, Op::minimum, all(inf), DType::fp32)},
                   "cumulative");
  }
}

TEST_CASE("isa::tensor_partition_reduce - sum, max and min across partitions, wide tiles in 128-column pieces") {
  const nki::Kernel k = nki::jit("partition_reduce", [](nl::tensor a) {
    const std::int64_t f = a.shape()[1];
    auto o1 = nl::ndarray({1, f}, a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray({1, f}, a.dtype(), nl::shared_hbm, "o2");
    auto o3 = nl::ndarray({1, f}, nl::float32, nl::shared_hbm, "o3");
    auto x = nl::load(a.all());
    nl::store(o1.all(), isa::tensor_partition_reduce(nl::add, x));
    nl::store(o2.all(), isa::tensor_partition_reduce(nl::maximum, x));
    nl::store(o3.all(), isa::tensor_partition_reduce(nl::minimum, x, {.dtype = nl::float32}));
    return std::make_tuple(o1, o2, o3);
  });
  for (const auto& [p, f, dt] : {std::tuple<std::int64_t, std::int64_t, DType>{128, 300, DType::fp32},
                                 {7, 128, DType::bf16}, {1, 1, DType::fp32}}) {
    CAPTURE(p);
    CAPTURE(f);
    const std::vector<float> x = lt::as_dtype(test::random_floats(static_cast<std::size_t>(p * f), 51), dt);
    std::vector<double> sum(static_cast<std::size_t>(f)), mx(sum.size()), mn(sum.size());
    for (std::int64_t j = 0; j < f; ++j) {
      float s = 0.0f, hi = -std::numeric_limits<float>::infinity(), lo = std::numeric_limits<float>::infinity();
      for (std::int64_t i = 0; i < p; ++i) {
        const float v = x[static_cast<std::size_t>(i * f + j)];
        s = lt::fadd(s, v);
        hi = std::max(hi, v);
        lo = std::min(lo, v);
      }
      sum[static_cast<std::size_t>(j)] = s;
      mx[static_cast<std::size_t>(j)] = hi;
      mn[static_cast<std::size_t>(j)] = lo;
    }
    lt::check_both(k, lt::no_grid(), {lt::make({p, f}, dt, x)}, {sum, mx, mn}, "partition_reduce");
  }
}

namespace {
const char* kFile = "tests/language/isa_cumulative_partition_reduce_test.cpp";

template <class F>
std::string misuse(F body) {
  const nki::Kernel k = nki::jit("cumulative_misuse", [&](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    nl::store(out.all(), body(a));
    return out;
  });
  return test::user_error_of([&] { k(lt::make({8, 16}, DType::fp32, test::random_floats(128, 5))); });
}
}  // namespace

TEST_CASE("isa::tensor_scalar_cumulative / tensor_partition_reduce - misuse names NKI's error") {
  int line = 0;
  std::string e = misuse([&](nl::tensor a) {
    line = __LINE__ + 1;
    return isa::tensor_scalar_cumulative(nl::load(a.all()), nl::add, nl::divide, 1.0);
  });
  CHECK(e == fmt::format("cumulative_misuse ({}:{}): err_unsupported_reduction_op: isa::tensor_scalar_cumulative: op1 "
                         "divide does not accumulate; it must be add, subtract, multiply, maximum or minimum",
                         kFile, line));
  e = misuse([&](nl::tensor a) {
    line = __LINE__ + 1;
    return isa::tensor_scalar_cumulative(nl::load(a.all()), nl::add, nl::add, 1.0, 0.0,
                                         {.reduce_cmd = isa::reduce_cmd::reduce});
  });
  CHECK(e == fmt::format("cumulative_misuse ({}:{}): err_unsupported_reduce_cmd: isa::tensor_scalar_cumulative with "
                         "reduce_cmd reduce: the register starts at op1's identity (reset_reduce) or at imm1 "
                         "(load_reduce); state kept across instructions is not supported",
                         kFile, line));
  e = misuse([&](nl::tensor a) {
    line = __LINE__ + 1;
    return isa::tensor_scalar_cumulative(nl::load(a.all()), nl::add, nl::add, 1.0, 0.0, {.dtype = nl::int32});
  });
  CHECK(e == fmt::format("cumulative_misuse ({}:{}): err_unsupported_dtype: isa::tensor_scalar_cumulative: int32 "
                         "input or output is not supported (the Vector engine accumulates bf16, fp16, fp32, fp8 and "
                         "8- or 16-bit integers)",
                         kFile, line));
  e = misuse([&](nl::tensor a) {
    line = __LINE__ + 1;
    return isa::tensor_partition_reduce(nl::multiply, nl::load(a.all()));
  });
  CHECK(e == fmt::format("cumulative_misuse ({}:{}): err_unsupported_reduction_op: isa::tensor_partition_reduce with op "
                         "multiply; supported are add, average, maximum, minimum",
                         kFile, line));
}
