/** \file isa::activate2: op((data op0 imm0) op1 imm1) on the Scalar engine, with an optional reduction. */
#include <random>

#include "lang_support.h"
#include "nki/isa_activate2.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;
using K = nki::ir::BinaryKind;

namespace {

/** One fp32 step of the tensor-scalar stage, as the host computes it (no contraction). */
float alu(K k, float a, float b) {
  volatile float r = 0.0f;
  if (k == K::add) r = a + b;
  if (k == K::subtract) r = a - b;
  if (k == K::multiply) r = a * b;
  return r;
}

struct Combo {
  std::optional<nl::binary_fn> op0, op1;
  bool reverse0 = false, reverse1 = false;
};

/** Host: (x op0 imm0) op1 imm1 with the reversals, bypass (nl::bypass or nullopt) skipped. */
float stage1(Combo c, float x, float i0, float i1) {
  if (c.op0 && c.op0->kind == K::bypass) c.op0.reset();
  if (c.op1 && c.op1->kind == K::bypass) c.op1.reset();
  if (c.op0) x = c.reverse0 ? alu(c.op0->kind, i0, x) : alu(c.op0->kind, x, i0);
  if (c.op1) x = c.reverse1 ? alu(c.op1->kind, i1, x) : alu(c.op1->kind, x, i1);
  return x;
}

float f32_exp(float x) { return lt::canon(std::exp(x)); }

/** Runs exp(stage1) over a [p, f] input with the immediates scalars (1.5, -0.75) or columns of a [p, 2] tile. */
void check_combo(const Combo& c, bool tile_imms, std::int64_t p, std::int64_t f, std::uint32_t seed, const std::string& tag) {
  const nki::Kernel k = nki::jit("activate2_" + tag, [c, tile_imms](nl::tensor a, nl::tensor imm) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto x = nl::load(a.all());
    auto im = nl::load(imm.all());
    const nl::operand i0 = tile_imms ? nl::operand(im[nl::_, nl::ds(0, 1)]) : nl::operand(1.5);
    const nl::operand i1 = tile_imms ? nl::operand(im[nl::_, nl::ds(1, 1)]) : nl::operand(-0.75);
    nl::store(out.all(), isa::activate2(nl::exp, x, i0, i1, c.op0, c.op1, {.reverse0 = c.reverse0, .reverse1 = c.reverse1}));
    return out;
  });
  const auto xs = test::random_floats(static_cast<std::size_t>(p * f), seed, -2.0f, 2.0f);
  const auto ims = test::random_floats(static_cast<std::size_t>(p * 2), seed + 1, -1.5f, 1.5f);
  std::vector<double> want;
  for (std::int64_t r = 0; r < p; ++r) {
    const float i0 = tile_imms ? ims[static_cast<std::size_t>(2 * r)] : 1.5f;
    const float i1 = tile_imms ? ims[static_cast<std::size_t>(2 * r + 1)] : -0.75f;
    for (std::int64_t q = 0; q < f; ++q) want.push_back(f32_exp(stage1(c, xs[static_cast<std::size_t>(r * f + q)], i0, i1)));
  }
  lt::check_both(k, lt::no_grid(), {lt::make({p, f}, DType::fp32, xs), lt::make({p, 2}, DType::fp32, ims)}, want, tag);
}

const std::vector<Combo>& combos() {
  static const std::vector<Combo> all = {
      {nl::multiply, nl::add},           {nl::multiply, nl::add, true, true},
      {nl::multiply, nl::subtract},      {nl::multiply, nl::subtract, false, true},
      {nl::multiply, nl::bypass},        {nl::add, std::nullopt},
      {nl::subtract, std::nullopt},      {nl::subtract, std::nullopt, true, false},
      {std::nullopt, std::nullopt},      {nl::bypass, nl::bypass},
  };
  return all;
}

}  // namespace

TEST_CASE("isa::activate2 - the six op pairs, reversed, with scalar and [P, 1] immediates") {
  for (std::size_t i = 0; i < combos().size(); ++i) {
    for (const bool tiles : {false, true}) {
      CAPTURE(i);
      CAPTURE(tiles);
      check_combo(combos()[i], tiles, 16, 24, static_cast<std::uint32_t>(40 + i), fmt::format("pair{}_{}", i, tiles ? "t" : "s"));
    }
  }
}

TEST_CASE("isa::activate2 - relu_param is the slope of relu below zero, a scalar or a [P, 1] tile") {
  const nki::Kernel k = nki::jit("activate2_prelu", [](nl::tensor a, nl::tensor al) {
    auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o2");
    auto x = nl::load(a.all());
    auto alpha = nl::load(al.all());
    nl::store(o1.all(), isa::activate2(nl::relu, x, 2.0, 0.25, nl::multiply, nl::subtract, {.relu_param = 0.125}));
    nl::store(o2.all(), isa::activate2(nl::relu, x, 0.5, 0.0, nl::add, std::nullopt, {.relu_param = alpha}));
    return std::make_tuple(o1, o2);
  });
  const std::int64_t p = 8, f = 12;
  const auto xs = test::random_floats(static_cast<std::size_t>(p * f), 7, -3.0f, 3.0f);
  const auto al = test::random_floats(static_cast<std::size_t>(p), 8, 0.0f, 1.0f);
  std::vector<double> w1, w2;
  for (std::int64_t r = 0; r < p; ++r) {
    for (std::int64_t q = 0; q < f; ++q) {
      const float x = xs[static_cast<std::size_t>(r * f + q)];
      const float v1 = alu(K::subtract, alu(K::multiply, x, 2.0f), 0.25f);
      w1.push_back(v1 > 0.0f ? v1 : alu(K::multiply, v1, 0.125f));
      const float v2 = alu(K::add, x, 0.5f);
      w2.push_back(v2 > 0.0f ? v2 : alu(K::multiply, v2, al[static_cast<std::size_t>(r)]));
    }
  }
  lt::check_both(k, lt::no_grid(), {lt::make({p, f}, DType::fp32, xs), lt::make({p, 1}, DType::fp32, al)}, {w1, w2},
                 "activate2 relu_param");
}

TEST_CASE("isa::activate2 - reduce_op add, maximum, minimum, abs_max, abs_min of the fp32 values; output rounded") {
  const std::vector<std::pair<nl::binary_fn, const char*>> reds = {
      {nl::add, "add"}, {nl::maximum, "maximum"}, {nl::minimum, "minimum"}, {nl::abs_max, "abs_max"}, {nl::abs_min, "abs_min"}};
  for (const auto& [red, rname] : reds) {
    CAPTURE(rname);
    const nl::binary_fn rop = red;
    const nki::Kernel k = nki::jit(std::string("activate2_reduce_") + rname, [rop](nl::tensor a) {
      auto o = nl::ndarray(a.shape(), DType::bf16, nl::shared_hbm, "o");
      auto s = nl::ndarray({a.shape()[0], 1}, nl::float32, nl::shared_hbm, "s");
      auto res = nl::ndarray({nl::par_dim(a.shape()[0]), 1}, nl::float32, nl::sbuf, "res");
      auto y = isa::activate2(nl::tanh, nl::load(a.all()), 0.5, 0.1, nl::multiply, nl::add,
                              {.dtype = DType::bf16, .reduce_op = rop, .reduce_res = res[nl::_, nl::_],
                               .reduce_cmd = isa::reduce_cmd::reset_reduce});
      nl::store(o.all(), y);
      nl::store(s.all(), res);
      return std::make_tuple(o, s);
    });
    const std::int64_t p = 32, f = 40;
    const auto xs = test::random_floats(static_cast<std::size_t>(p * f), 77, -3.0f, 3.0f);
    std::vector<double> wo, ws;
    for (std::int64_t r = 0; r < p; ++r) {
      float acc = rop.kind == K::add ? 0.0f : rop.kind == K::minimum || rop.kind == K::abs_min ? INFINITY : -INFINITY;
      for (std::int64_t q = 0; q < f; ++q) {
        const float v = lt::canon(std::tanh(alu(K::add, alu(K::multiply, xs[static_cast<std::size_t>(r * f + q)], 0.5f), 0.1f)));
        wo.push_back(v);
        if (rop.kind == K::add) acc = lt::fadd(acc, v);
        if (rop.kind == K::maximum) acc = std::max(acc, v);
        if (rop.kind == K::minimum) acc = std::min(acc, v);
        if (rop.kind == K::abs_max) acc = std::max(acc, std::fabs(v));
        if (rop.kind == K::abs_min) acc = std::min(acc, std::fabs(v));
      }
      ws.push_back(acc);
    }
    lt::check_both(k, lt::no_grid(), {lt::make({p, f}, DType::fp32, xs)}, {wo, ws}, std::string("activate2 reduce ") + rname);
  }
}

TEST_CASE("isa::activate2 - random pairs, shapes and immediates agree with the host") {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 6; ++trial) {
    const Combo c = combos()[rng() % combos().size()];
    const std::int64_t p = 1 + static_cast<std::int64_t>(rng() % 128), f = 1 + static_cast<std::int64_t>(rng() % 70);
    CAPTURE(trial);
    check_combo(c, rng() % 2 == 0, p, f, 900 + static_cast<std::uint32_t>(trial), fmt::format("random{}", trial));
  }
}

namespace {
const char* kFile = "tests/language/isa_activate2_test.cpp";

template <class F>
std::string misuse(F body) {
  const nki::Kernel k = nki::jit("activate2_misuse", [&](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    nl::store(out.all(), body(nl::load(a.all())));
    return out;
  });
  return test::user_error_of([&] { k(lt::make({8, 16}, DType::fp32, test::random_floats(128, 5))); });
}
}  // namespace

TEST_CASE("isa::activate2 - misuse names NKI's error") {
  int line = 0;
  const auto err = [&](const std::string& what) { return fmt::format("activate2_misuse ({}:{}): {}", kFile, line, what); };
  std::string e = misuse([&](nl::tile x) {
    line = __LINE__ + 1;
    return isa::activate2(nl::exp, x, 1.0, 2.0, std::nullopt, nl::add);
  });
  CHECK(e == err("err_unsupported_alu_op: isa::activate2: op1 add needs op0: with op0 bypass the tensor-scalar stage is off"));
  e = misuse([&](nl::tile x) {
    line = __LINE__ + 1;
    return isa::activate2(nl::exp, x, 1.0, 2.0, nl::multiply, std::nullopt, {.reverse1 = true});
  });
  CHECK(e == err("err_unsupported_alu_op: isa::activate2: reverse1 needs op1 set; it is bypass"));
  e = misuse([&](nl::tile x) {
    line = __LINE__ + 1;
    return isa::activate2(nl::exp, x, 1.0, 2.0, nl::add, nl::multiply);
  });
  CHECK(e == err("err_unsupported_alu_op: isa::activate2: op0 add with op1 multiply; the pairs are (multiply, add), "
                 "(multiply, subtract), (multiply, bypass), (add, bypass), (subtract, bypass) and (bypass, bypass)"));
  e = misuse([&](nl::tile x) {
    line = __LINE__ + 1;
    return isa::activate2(nl::exp, x, x[nl::ds(0, 4), nl::ds(0, 1)], 2.0, nl::multiply, nl::add);
  });
  CHECK(e == err("err_num_partition_mismatch: isa::activate2: imm0 [4,1] has 4 partitions; the data has 8"));
  e = misuse([&](nl::tile x) {
    line = __LINE__ + 1;
    return isa::activate2(nl::exp, x, 1.0, x[nl::_, nl::ds(0, 2)], nl::multiply, nl::add);
  });
  CHECK(e == err("err_free_dim_mismatch: isa::activate2: imm1 is a scalar or a [8, 1] tile, got [8,2]"));
  e = misuse([&](nl::tile x) {
    auto i1 = nl::copy(x[nl::_, nl::ds(0, 1)], {.dtype = DType::bf16});
    line = __LINE__ + 1;
    return isa::activate2(nl::exp, x, x[nl::_, nl::ds(0, 1)], i1, nl::multiply, nl::add);
  });
  CHECK(e == err("err_unsupported_dtype: isa::activate2: imm0 is fp32 and imm1 bf16; tiles of immediates have one dtype"));
  e = misuse([&](nl::tile x) {
    line = __LINE__ + 1;
    return isa::activate2(nl::exp, x, 1.0, 2.0, nl::multiply, nl::add, {.relu_param = 0.5});
  });
  CHECK(e == err("err_unsupported_activation: isa::activate2: relu_param is the slope of nl::relu below zero; exp takes no parameter"));
  e = misuse([&](nl::tile x) {
    auto res = nl::ndarray({nl::par_dim(8), 1}, nl::float32, nl::sbuf, "res");
    line = __LINE__ + 1;
    return isa::activate2(nl::exp, x, 1.0, 2.0, nl::multiply, nl::add,
                          {.reduce_op = nl::multiply, .reduce_res = res[nl::_, nl::_], .reduce_cmd = isa::reduce_cmd::reset_reduce});
  });
  CHECK(e == err("err_unsupported_reduction_op: isa::activate2 reduces with add, maximum, minimum, abs_max or abs_min; got "
                 "reduce_op multiply"));
  e = misuse([&](nl::tile x) {
    auto res = nl::ndarray({nl::par_dim(8), 1}, nl::float32, nl::sbuf, "res");
    line = __LINE__ + 1;
    return isa::activate2(nl::exp, x, 1.0, 2.0, nl::multiply, nl::add,
                          {.reduce_op = nl::add, .reduce_res = res[nl::_, nl::_], .reduce_cmd = isa::reduce_cmd::reduce});
  });
  CHECK(e == err("err_unsupported_reduce_cmd: isa::activate2 with reduce_op: only reduce_cmd reset_reduce (registers reset, "
                 "this instruction's values reduced) is supported; state kept across instructions is not"));
  e = misuse([&](nl::tile x) {
    auto res = nl::ndarray({nl::par_dim(8), 1}, nl::float32, nl::sbuf, "res");
    line = __LINE__ + 1;
    return isa::activate2(nl::exp, x, 1.0, 2.0, nl::multiply, nl::add, {.reduce_res = res[nl::_, nl::_]});
  });
  CHECK(e == err("err_invalid_reduce_res: isa::activate2: reduce_res without reduce_op: nothing to reduce"));
}
