/** \file nl::average (element-wise and as a reduction's op) and nl::bypass (a stage that does nothing). */
#include "lang_support.h"
#include "nki/profile.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

TEST_CASE("nl::average is (x + y) / 2 in fp32 element-wise, on tiles and with a scalar") {
  const nki::Kernel k = nki::jit("average_tt", [](nl::tensor x, nl::tensor y) {
    auto out = nl::ndarray({2, x.shape()[0], x.shape()[1]}, nl::float32, nl::shared_hbm, "out");
    auto a = nl::load(x.all()), b = nl::load(y.all());
    auto ip = nl::arange(x.shape()[0])[nl::_, nl::newaxis];
    auto jf = nl::arange(x.shape()[1])[nl::newaxis, nl::_];
    nl::store(out[0, ip, jf], isa::tensor_tensor(a, b, nl::average, {.dtype = nl::float32}));
    nl::store(out[1, ip, jf], nl::average(a, 3.0f, {.dtype = nl::float32}));
    return out;
  });
  const std::int64_t p = 64, f = 20;
  const std::vector<float> xv = test::random_floats(p * f, 11), yv = test::random_floats(p * f, 12);
  std::vector<double> want(2 * xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i) {
    want[i] = lt::fmul(lt::fadd(xv[i], yv[i]), 0.5f);
    want[xv.size() + i] = lt::fmul(lt::fadd(xv[i], 3.0f), 0.5f);
  }
  lt::check_both(k, lt::no_grid(), {lt::make({p, f}, DType::fp32, xv), lt::make({p, f}, DType::fp32, yv)}, want,
                 "average");
}

TEST_CASE("nl::average as a reduction: the mean across partitions and along the free axis") {
  const nki::Kernel k = nki::jit("average_reduce", [](nl::tensor x) {
    const std::int64_t p = x.shape()[0], f = x.shape()[1];
    auto across = nl::ndarray({1, f}, nl::float32, nl::shared_hbm, "across");
    auto along = nl::ndarray({p, 1}, nl::float32, nl::shared_hbm, "along");
    auto t = nl::load(x.all());
    nl::store(across.all(), isa::tensor_partition_reduce(nl::average, t, {.dtype = nl::float32}));
    nl::store(along.all(), isa::tensor_reduce(nl::average, t, 1, {.keepdims = true, .dtype = nl::float32}));
    return std::make_tuple(across, along);
  });
  const std::int64_t p = 48, f = 36;
  const std::vector<float> xv = test::random_floats(p * f, 13);
  std::vector<double> across(f), along(p);
  for (std::int64_t j = 0; j < f; ++j) {  // fp32 sums in partition order, then one division
    float s = 0.0f;
    for (std::int64_t i = 0; i < p; ++i) s = lt::fadd(s, xv[i * f + j]);
    across[j] = s / static_cast<float>(p);
  }
  for (std::int64_t i = 0; i < p; ++i) {
    float s = 0.0f;
    for (std::int64_t j = 0; j < f; ++j) s = lt::fadd(s, xv[i * f + j]);
    along[i] = s / static_cast<float>(f);
  }
  lt::check_both(k, lt::no_grid(), {lt::make({p, f}, DType::fp32, xv)}, {across, along}, "average reduce");
}

namespace {
nki::Kernel tensor_scalar_with(nl::binary_fn op0, nl::binary_fn op1, isa::engine e) {
  return nki::jit("ts_bypass", [=](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), nl::bfloat16, nl::shared_hbm, "out");
    nl::store(out.all(), isa::tensor_scalar(nl::load(x.all()), op0, 3.0f, op1, 0.25f, {.dtype = nl::bfloat16, .engine = e}));
    return out;
  });
}
}  // namespace

TEST_CASE("nl::bypass skips a stage of tensor_scalar: one instruction, the other stage's result rounded once") {
  const std::int64_t p = 32, f = 16;
  const std::vector<float> xv = test::random_floats(p * f, 14);
  const nki::Tensor x = lt::make({p, f}, DType::fp32, xv);
  std::vector<double> mul(xv.size()), add(xv.size()), same(xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i) {
    mul[i] = lt::fmul(xv[i], 3.0f);
    add[i] = lt::fadd(xv[i], 0.25f);
    same[i] = xv[i];
  }
  lt::check_both(tensor_scalar_with(nl::multiply, nl::bypass, isa::vector_engine), lt::no_grid(), {x}, mul, "op1 bypass");
  lt::check_both(tensor_scalar_with(nl::bypass, nl::add, isa::vector_engine), lt::no_grid(), {x}, add, "op0 bypass");
  lt::check_both(tensor_scalar_with(nl::bypass, nl::bypass, isa::vector_engine), lt::no_grid(), {x}, same, "both");
  // The Scalar engine does multiply then add; either stage may be bypassed.
  lt::check_both(tensor_scalar_with(nl::multiply, nl::bypass, isa::scalar_engine), lt::no_grid(), {x}, mul, "scalar");
  const nki::sim::ProfileReport one =
      nki::profile(tensor_scalar_with(nl::multiply, nl::bypass, isa::vector_engine).launch(nki::GridSpec{}),
                   {{x.shape(), x.dtype()}}, "trn2");
  const nki::sim::ProfileReport two =
      nki::profile(tensor_scalar_with(nl::multiply, nl::add, isa::vector_engine).launch(nki::GridSpec{}),
                   {{x.shape(), x.dtype()}}, "trn2");
  CHECK(one.instructions == 3);  // load, tensor_scalar, store
  CHECK(two.instructions == 4);  // the two stages are charged as two instructions today
}

TEST_CASE("nl::bypass element-wise passes its first operand through") {
  const nki::Kernel k = nki::jit("bypass_tt", [](nl::tensor x, nl::tensor y) {
    auto out = nl::ndarray(x.shape(), nl::float32, nl::shared_hbm, "out");
    nl::store(out.all(), nl::bypass(nl::load(x.all()), nl::load(y.all()), {.dtype = nl::float32}));
    return out;
  });
  const std::vector<float> xv = test::random_floats(8 * 8, 15), yv = test::random_floats(8 * 8, 16);
  lt::check_both(k, lt::no_grid(), {lt::make({8, 8}, DType::fp32, xv), lt::make({8, 8}, DType::fp32, yv)},
                 std::vector<double>(xv.begin(), xv.end()), "bypass");
}
