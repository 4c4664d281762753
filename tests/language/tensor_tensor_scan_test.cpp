/** \file isa::tensor_tensor_scan: the recurrence along the free axis, scalar and tile initial values, reversed operands. */
#include "lang_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

using Op = lt::AluOp;

const nl::binary_fn& fn_of(Op op) {
  switch (op) {
    case Op::add: return nl::add;
    case Op::subtract: return nl::subtract;
    case Op::multiply: return nl::multiply;
    case Op::maximum: return nl::maximum;
    case Op::minimum: return nl::minimum;
  }
  return nl::add;
}


struct Scan {
  Op op0 = Op::multiply, op1 = Op::add;
  bool reverse0 = false, reverse1 = false;
};

/** The scan of rows of d0 and d1 [p, f] from per-row initial values, the carry in fp32, each element rounded to `out`. */
std::vector<double> host_scan(const Scan& s, const std::vector<float>& d0, const std::vector<float>& d1,
                              const std::vector<float>& init, std::int64_t p, std::int64_t f, DType out) {
  std::vector<double> r(static_cast<std::size_t>(p * f));
  for (std::int64_t i = 0; i < p; ++i) {
    float carry = init[static_cast<std::size_t>(i)];
    for (std::int64_t j = 0; j < f; ++j) {
      const auto at = static_cast<std::size_t>(i * f + j);
      const float x = s.reverse0 ? lt::host_alu(s.op0, carry, d0[at]) : lt::host_alu(s.op0, d0[at], carry);
      carry = s.reverse1 ? lt::host_alu(s.op1, d1[at], x) : lt::host_alu(s.op1, x, d1[at]);
      r[at] = lt::rd(carry, out);
    }
  }
  return r;
}

}  // namespace

TEST_CASE("isa::tensor_tensor_scan - multiply then add from a scalar and from a [P, 1] tile, reversed subtracts") {
  // o1: the mamba recurrence from 0.5; o2: from a tile; o3: carry - d0, then + d1; o4: x, then d1 - x, into bf16.
  const nki::Kernel k = nki::jit("scan", [](nl::tensor a, nl::tensor b, nl::tensor c) {
    auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o2");
    auto o3 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o3");
    auto o4 = nl::ndarray(a.shape(), nl::bfloat16, nl::shared_hbm, "o4");
    auto d0 = nl::load(a.all());
    auto d1 = nl::load(b.all());
    auto init = nl::load(c.all());  // (P, 1)
    nl::store(o1.all(), isa::tensor_tensor_scan(d0, d1, 0.5, nl::multiply, nl::add));
    nl::store(o2.all(), isa::tensor_tensor_scan(d0, d1, init, nl::multiply, nl::add));
    nl::store(o3.all(), isa::tensor_tensor_scan(d0, d1, init, nl::subtract, nl::add, {.reverse0 = true}));
    nl::store(o4.all(), isa::tensor_tensor_scan(d0, d1, -1.0, nl::multiply, nl::subtract,
                                                {.reverse1 = true, .dtype = nl::bfloat16}));
    return std::make_tuple(o1, o2, o3, o4);
  });
  for (const auto& [p, f] : {std::pair<std::int64_t, std::int64_t>{128, 300}, {37, 5}, {1, 1}}) {
    CAPTURE(p);
    CAPTURE(f);
    const auto n = static_cast<std::size_t>(p * f);
    auto a = lt::make({p, f}, DType::fp32, test::random_floats(n, 201, -1.0f, 1.0f));
    auto b = lt::make({p, f}, DType::fp32, test::random_floats(n, 202, -2.0f, 2.0f));
    auto c = lt::make({p, 1}, DType::fp32, test::random_floats(static_cast<std::size_t>(p), 203));
    const auto av = a.to_floats(), bv = b.to_floats(), cv = c.to_floats();
    const std::vector<float> half(static_cast<std::size_t>(p), 0.5f), minus1(static_cast<std::size_t>(p), -1.0f);
    lt::check_both(k, lt::no_grid(), {a, b, c},
                   {host_scan({}, av, bv, half, p, f, DType::fp32), host_scan({}, av, bv, cv, p, f, DType::fp32),
                    host_scan({Op::subtract, Op::add, true, false}, av, bv, cv, p, f, DType::fp32),
                    host_scan({Op::multiply, Op::subtract, false, true}, av, bv, minus1, p, f, DType::bf16)},
                   "tensor_tensor_scan");
  }
}

TEST_CASE("isa::tensor_tensor_scan - bf16 data, the carry kept in fp32 between elements") {
  // Adding 1/256 to 1.0 in bf16 would stay 1.0 at every step; the fp32 carry grows, each output rounded.
  const nki::Kernel k = nki::jit("scan_bf16", [](nl::tensor a, nl::tensor b) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    nl::store(out.all(), isa::tensor_tensor_scan(nl::load(a.all()), nl::load(b.all()), 1.0, nl::multiply, nl::add));
    return out;
  });
  const std::int64_t p = 4, f = 64;
  const auto n = static_cast<std::size_t>(p * f);
  auto a = lt::make({p, f}, DType::bf16, std::vector<float>(n, 1.0f));
  auto b = lt::make({p, f}, DType::bf16, std::vector<float>(n, 1.0f / 256.0f));
  std::vector<double> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = lt::rd(1.0 + static_cast<double>(i % f + 1) / 256.0, DType::bf16);
  lt::check_both(k, lt::no_grid(), {a, b}, want, "scan bf16");
}

TEST_CASE("isa::tensor_tensor_scan - one operand in PSUM (data1, then data0)") {
  // bt [F, P] transposed on the Tensor engine is a [P, F] PSUM tile (an exact copy).
  const nki::Kernel k = nki::jit("scan_psum", [](nl::tensor a, nl::tensor bt) {
    auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o2");
    auto x = nl::load(a.all());
    auto y = isa::nc_transpose(nl::load(bt.all()));  // (P, F) in PSUM
    nl::store(o1.all(), isa::tensor_tensor_scan(x, y, 0.0, nl::multiply, nl::add));
    nl::store(o2.all(), isa::tensor_tensor_scan(y, x, 1.0, nl::add, nl::multiply));
    return std::make_tuple(o1, o2);
  });
  const std::int64_t p = 64, f = 96;
  const auto n = static_cast<std::size_t>(p * f);
  auto a = lt::make({p, f}, DType::fp32, test::random_floats(n, 211, -1.0f, 1.0f));
  auto bt = lt::make({f, p}, DType::fp32, test::random_floats(n, 212, -1.0f, 1.0f));
  const auto av = a.to_floats(), btv = bt.to_floats();
  std::vector<float> b(n);
  for (std::int64_t i = 0; i < p; ++i)
    for (std::int64_t j = 0; j < f; ++j) b[static_cast<std::size_t>(i * f + j)] = btv[static_cast<std::size_t>(j * p + i)];
  const std::vector<float> zeros(static_cast<std::size_t>(p), 0.0f), ones(static_cast<std::size_t>(p), 1.0f);
  lt::check_both(k, lt::no_grid(), {a, bt},
                 {host_scan({}, av, b, zeros, p, f, DType::fp32),
                  host_scan({Op::add, Op::multiply, false, false}, b, av, ones, p, f, DType::fp32)},
                 "scan with a PSUM operand");
}

TEST_CASE("isa::tensor_tensor_scan - randomized ops, operand order, initial values and shapes") {
  std::mt19937 rng(2024);
  const Op ops[] = {Op::add, Op::subtract, Op::multiply, Op::maximum, Op::minimum};
  for (int round = 0; round < 6; ++round) {
    Scan s;
    s.op0 = ops[rng() % 5];
    s.op1 = ops[rng() % 5];
    s.reverse0 = rng() % 2 == 1;
    s.reverse1 = rng() % 2 == 1;
    const bool tile_initial = rng() % 2 == 1;
    const std::int64_t p = 1 + static_cast<std::int64_t>(rng() % 128), f = 1 + static_cast<std::int64_t>(rng() % 700);
    const double scalar_initial = static_cast<double>(static_cast<int>(rng() % 9) - 4) / 4.0;
    CAPTURE(round);
    CAPTURE(p);
    CAPTURE(f);
    const nki::Kernel k = nki::jit("scan_random", [s, tile_initial, scalar_initial](nl::tensor a, nl::tensor b, nl::tensor c) {
      auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
      auto d0 = nl::load(a.all());
      auto d1 = nl::load(b.all());
      const nl::operand initial = tile_initial ? nl::operand(nl::load(c.all())) : nl::operand(scalar_initial);
      nl::store(out.all(), isa::tensor_tensor_scan(d0, d1, initial, fn_of(s.op0), fn_of(s.op1),
                                                   {.reverse0 = s.reverse0, .reverse1 = s.reverse1}));
      return out;
    });
    const auto n = static_cast<std::size_t>(p * f);
    auto a = lt::make({p, f}, DType::fp32, test::random_floats(n, 300 + static_cast<std::uint32_t>(round), -1.0f, 1.0f));
    auto b = lt::make({p, f}, DType::fp32, test::random_floats(n, 400 + static_cast<std::uint32_t>(round), -1.0f, 1.0f));
    auto c = lt::make({p, 1}, DType::fp32, test::random_floats(static_cast<std::size_t>(p), 500 + static_cast<std::uint32_t>(round)));
    std::vector<float> init = c.to_floats();
    if (!tile_initial) init.assign(init.size(), static_cast<float>(scalar_initial));
    lt::check_both(k, lt::no_grid(), {a, b, c}, host_scan(s, a.to_floats(), b.to_floats(), init, p, f, DType::fp32),
                   "random scan");
  }
}

namespace {
const char* kFile = "tests/language/tensor_tensor_scan_test.cpp";

/** The error of a scan of a [128, 64] tile with the `bad` operands the body builds. */
template <class F>
std::string scan_error(int& line, F body) {
  const nki::Kernel k = nki::jit("scan_misuse", [&](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    nl::store(out.all(), body(a, line));
    return out;
  });
  return test::user_error_of([&] { k(lt::make({128, 64}, DType::fp32, test::random_floats(128 * 64, 7))); });
}
}  // namespace

TEST_CASE("isa::tensor_tensor_scan - misuse names NKI's error") {
  int line = 0;
  {
    const std::string e = scan_error(line, [](nl::tensor a, int& l) {
      auto x = nl::load(a.all());
      auto y = nl::load(a[nl::ds(0, 64), nl::_]);
      l = __LINE__ + 1;
      return isa::tensor_tensor_scan(x, y, 0.0, nl::multiply, nl::add);
    });
    CHECK(e == fmt::format("scan_misuse ({}:{}): err_num_partition_mismatch: isa::tensor_tensor_scan: data0 [128,64] and "
                       "data1 [64,64] have different partition counts",
                       kFile, line));
  }
  {
    const std::string e = scan_error(line, [](nl::tensor a, int& l) {
      auto x = nl::load(a.all());
      auto y = nl::load(a[nl::_, nl::ds(0, 32)]);
      l = __LINE__ + 1;
      return isa::tensor_tensor_scan(x, y, 0.0, nl::multiply, nl::add);
    });
    CHECK(e == fmt::format("scan_misuse ({}:{}): err_free_dim_mismatch: isa::tensor_tensor_scan: data0 [128,64] and data1 "
                       "[128,32] have different numbers of elements per partition",
                       kFile, line));
  }
  {
    const std::string e = scan_error(line, [](nl::tensor a, int& l) {
      auto x = nl::load(a.all());
      auto init = nl::load(a[nl::_, nl::ds(0, 2)]);
      l = __LINE__ + 1;
      return isa::tensor_tensor_scan(x, x, init, nl::multiply, nl::add);
    });
    CHECK(e == fmt::format("scan_misuse ({}:{}): err_free_dim_mismatch: isa::tensor_tensor_scan: initial is a scalar or a "
                       "tile of one element per partition ([128, 1]), got [128,2]",
                       kFile, line));
  }
  {
    const std::string e = scan_error(line, [](nl::tensor a, int& l) {
      auto x = nl::load(a.all());
      auto init = nl::load(a[nl::ds(0, 1), nl::ds(0, 1)]);
      l = __LINE__ + 1;
      return isa::tensor_tensor_scan(x, x, init, nl::multiply, nl::add);
    });
    CHECK(e == fmt::format("scan_misuse ({}:{}): err_num_partition_mismatch: isa::tensor_tensor_scan: initial [1,1] has 1 "
                       "partitions; the data have 128",
                       kFile, line));
  }
  {
    const std::string e = scan_error(line, [](nl::tensor a, int& l) {
      auto x = nl::load(a.all());
      auto ps = nl::matmul(nl::load(a[nl::_, nl::ds(0, 64)]), x, true);  // [64, 64] in PSUM
      auto ps2 = nl::matmul(nl::load(a[nl::_, nl::ds(0, 64)]), x, true);
      l = __LINE__ + 1;
      [[maybe_unused]] auto s = isa::tensor_tensor_scan(ps, ps2, 0.0, nl::multiply, nl::add);
      return nl::copy(nl::load(a.all()));
    });
    CHECK(e == fmt::format("scan_misuse ({}:{}): err_unsupported_memory: isa::tensor_tensor_scan: data0 and data1 are both "
                       "in PSUM; at most one of them may be (copy one to SBUF first)",
                       kFile, line));
  }
  {
    const std::string e = scan_error(line, [](nl::tensor a, int& l) {
      auto x = nl::load(a.all());
      l = __LINE__ + 1;
      return isa::tensor_tensor_scan(2.0, x, 0.0, nl::multiply, nl::add);
    });
    CHECK(e == fmt::format("scan_misuse ({}:{}): err_scalar_only_operation: isa::tensor_tensor_scan: data0 is a scalar; it "
                       "must be a tile",
                       kFile, line));
  }
  {
    const std::string e = scan_error(line, [](nl::tensor a, int& l) {
      auto x = nl::load(a.all());
      auto r = nl::sum(x, 1);  // (128)
      l = __LINE__ + 1;
      return isa::tensor_tensor_scan(r, r, 0.0, nl::multiply, nl::add);
    });
    CHECK(e == fmt::format("scan_misuse ({}:{}): err_unsupported_tile_rank: isa::tensor_tensor_scan: data0 must be a 2-D "
                       "tile [P, F], got shape [128]",
                       kFile, line));
  }
}
