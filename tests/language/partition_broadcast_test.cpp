/**
 * \file Elementwise nl ops broadcast a tile of one partition across the partitions of the other
 * operand: [1, F] or [1, 1] with [P, F], and [P, 1] with [1, F], give [P, F] (NKI: x.shape and
 * y.shape broadcast to a common shape, that of the result).
 */
#include "lang_support.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
using lt::rd;
using nki::DType;

namespace {

void partition_broadcast_case(DType dt) {
  const nki::Kernel k = nki::jit("partition_broadcast", [](nl::tensor a, nl::tensor row, nl::tensor col, nl::tensor one) {
    auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o2");
    auto o3 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o3");
    auto o4 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o4");
    auto o5 = nl::ndarray(row.shape(), a.dtype(), nl::shared_hbm, "o5");
    auto x = nl::load(a.all());     // (P, F)
    auto r = nl::load(row.all());   // (1, F)
    auto c = nl::load(col.all());   // (P, 1)
    auto s = nl::load(one.all());   // (1, 1)
    auto sum = x + r;
    CHECK(sum.shape() == a.shape());
    nl::store(o1.all(), sum);
    nl::store(o2.all(), nl::multiply(s, x));
    auto outer = nl::subtract(c, r);
    CHECK(outer.shape() == a.shape());
    nl::store(o3.all(), outer);
    nl::store(o4.all(), nl::where(nl::greater(r, 0.0), x, c));  // a [1, F] condition
    nl::store(o5.all(), nl::maximum(r, s));                      // one partition stays one
    return std::make_tuple(o1, o2, o3, o4, o5);
  });
  for (nki::Shape shape : {nki::Shape{128, 64}, nki::Shape{5, 3}}) {
    CAPTURE(nki::dtype_name(dt));
    CAPTURE(nki::shape_str(shape));
    const std::int64_t P = shape[0], F = shape[1];
    auto rv = test::random_floats(static_cast<std::size_t>(F), 92);
    rv[0] = -0.0f;  // copied across partitions bit for bit
    auto a = lt::make(shape, dt, test::random_floats(static_cast<std::size_t>(P * F), 91));
    auto row = lt::make({1, F}, dt, rv);
    auto col = lt::make({P, 1}, dt, test::random_floats(static_cast<std::size_t>(P), 93));
    auto one = lt::make({1, 1}, dt, {2.5f});
    const auto av = a.to_floats(), r = row.to_floats(), c = col.to_floats();
    const float s = one.to_floats()[0];
    const auto n = static_cast<std::size_t>(P * F);
    std::vector<double> w1(n), w2(n), w3(n), w4(n), w5(static_cast<std::size_t>(F));
    for (std::int64_t p = 0; p < P; ++p)
      for (std::int64_t f = 0; f < F; ++f) {
        const auto i = static_cast<std::size_t>(p * F + f);
        const auto fi = static_cast<std::size_t>(f), pi = static_cast<std::size_t>(p);
        w1[i] = rd(lt::fadd(av[i], r[fi]), dt);
        w2[i] = rd(lt::fmul(s, av[i]), dt);
        w3[i] = rd(c[pi] - r[fi], dt);
        w4[i] = r[fi] > 0.0f ? av[i] : c[pi];
      }
    for (std::int64_t f = 0; f < F; ++f) {
      const auto fi = static_cast<std::size_t>(f);
      w5[fi] = r[fi] >= s ? r[fi] : s;
    }
    lt::check_both(k, lt::no_grid(), {a, row, col, one}, {w1, w2, w3, w4, w5}, "partition_broadcast");
  }
}

}  // namespace

TEST_CASE("partition broadcasting: [1, F], [1, 1] and [P, 1] with [P, F] or [1, F] tiles, fp32") {
  partition_broadcast_case(DType::fp32);
}
TEST_CASE("partition broadcasting: [1, F], [1, 1] and [P, 1] with [P, F] or [1, F] tiles, bf16") {
  partition_broadcast_case(DType::bf16);
}

TEST_CASE("partition broadcasting: the row is copied to every partition by its own op, a Tensor engine instruction") {
  const nki::Kernel k = nki::jit("row_plus_tile", [](nl::tensor a, nl::tensor row) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    nl::store(out.all(), nl::load(a.all()) + nl::load(row.all()));
    return out;
  });
  const auto ir = k.trace({{128, 512}, {1, 512}}, {DType::fp32, DType::fp32}, nki::GridSpec{})->ir;
  // load, load, the copy [1, 512] -> [128, 512], the add, the store.
  REQUIRE(ir->body.size() == 5);
  const auto* copy = std::get_if<nki::ir::ActivationOp>(&ir->body[2]);
  REQUIRE(copy != nullptr);
  CHECK(copy->kind == nki::ir::ActKind::copy);
  CHECK(ir->tiles[static_cast<std::size_t>(copy->data.tile)].shape == nki::Shape{1, 512});
  CHECK(ir->tiles[static_cast<std::size_t>(copy->result)].shape == nki::Shape{128, 512});
  // Cost: a matmul of a ones [1, 128] stationary by the fp32 [1, 512] row, plus the access bubble.
  nki::sim::Instruction in;
  REQUIRE(nki::sim::instruction_of(*ir, 2, nki::sim::target_spec("trn2"), in));
  CHECK(in.engine == nki::sim::Engine::tensor);
  CHECK(in.cycles == nki::sim::matmul_cycles(128, 512, true) + 60);
  CHECK(in.cycles == 4 * 512 + 60);
  CHECK(in.what == "partition_broadcast [1,512] to [128,512]");
}

TEST_CASE("partition broadcasting: random shapes, (x + row) * col - one, both executors exact") {
  const nki::Kernel k = nki::jit("random_broadcasts", [](nl::tensor a, nl::tensor row, nl::tensor col, nl::tensor one) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    auto t = nl::multiply(nl::load(a.all()) + nl::load(row.all()), nl::load(col.all()), {.dtype = nl::float32});
    nl::store(out.all(), nl::subtract(t, nl::load(one.all())));
    return out;
  });
  std::mt19937 rng(98);
  for (int iter = 0; iter < 6; ++iter) {
    const std::int64_t P = std::uniform_int_distribution<std::int64_t>(1, 128)(rng);
    const std::int64_t F = std::uniform_int_distribution<std::int64_t>(1, 40)(rng);
    const DType dt = iter % 2 == 0 ? DType::fp32 : DType::bf16;
    CAPTURE(P);
    CAPTURE(F);
    CAPTURE(nki::dtype_name(dt));
    const auto seed = static_cast<std::uint32_t>(rng());
    auto a = lt::make({P, F}, dt, test::random_floats(static_cast<std::size_t>(P * F), seed));
    auto row = lt::make({1, F}, dt, test::random_floats(static_cast<std::size_t>(F), seed + 1));
    auto col = lt::make({P, 1}, dt, test::random_floats(static_cast<std::size_t>(P), seed + 2));
    auto one = lt::make({1, 1}, dt, test::random_floats(1, seed + 3));
    const auto av = a.to_floats(), r = row.to_floats(), c = col.to_floats();
    const float s = one.to_floats()[0];
    std::vector<double> want(av.size());
    for (std::int64_t p = 0; p < P; ++p)
      for (std::int64_t f = 0; f < F; ++f) {
        const auto i = static_cast<std::size_t>(p * F + f);
        const float sum = rd(lt::fadd(av[i], r[static_cast<std::size_t>(f)]), dt);
        want[i] = lt::fadd(lt::fmul(sum, c[static_cast<std::size_t>(p)]), -s);
      }
    lt::check_both(k, lt::no_grid(), {a, row, col, one}, want, "random_broadcasts");
  }
}
