/** \file Comparison, logical and power binary_fn objects, and isa::tensor_tensor with every binary op. */
#include "lang_support.h"

namespace nl = nki::language;
using lt::rd;
using nki::DType;

namespace {

float host_bin(const std::string& name, float a, float b) {
  float r = 0.0f;
  if (name == "add") r = a + b;
  if (name == "subtract") r = a - b;
  if (name == "multiply") r = a * b;
  if (name == "divide") r = a / b;
  if (name == "maximum") r = std::isnan(a) ? a : std::isnan(b) ? b : (a >= b ? a : b);
  if (name == "minimum") r = std::isnan(a) ? a : std::isnan(b) ? b : (a <= b ? a : b);
  if (name == "power") r = std::pow(a, b);
  if (name == "equal") r = a == b ? 1.0f : 0.0f;
  if (name == "not_equal") r = a != b ? 1.0f : 0.0f;
  if (name == "greater") r = a > b ? 1.0f : 0.0f;
  if (name == "greater_equal") r = a >= b ? 1.0f : 0.0f;
  if (name == "less") r = a < b ? 1.0f : 0.0f;
  if (name == "less_equal") r = a <= b ? 1.0f : 0.0f;
  if (name == "logical_and") r = (a != 0.0f && b != 0.0f) ? 1.0f : 0.0f;
  if (name == "logical_or") r = (a != 0.0f || b != 0.0f) ? 1.0f : 0.0f;
  return lt::canon(r);
}

const std::pair<const char*, nl::binary_fn> all_ops[] = {
    {"add", nl::add},           {"subtract", nl::subtract},
    {"multiply", nl::multiply}, {"divide", nl::divide},
    {"maximum", nl::maximum},   {"minimum", nl::minimum},
    {"power", nl::power},       {"equal", nl::equal},
    {"not_equal", nl::not_equal}, {"greater", nl::greater},
    {"greater_equal", nl::greater_equal}, {"less", nl::less},
    {"less_equal", nl::less_equal}, {"logical_and", nl::logical_and},
    {"logical_or", nl::logical_or}};

/** Small integers (many equal pairs, zeros for the logical ops) plus a few specials. */
std::vector<float> operands(std::size_t n, std::uint32_t seed) {
  auto v = lt::random_ints(n, seed, -3, 3);
  const float inf = std::numeric_limits<float>::infinity();
  const float s[] = {lt::qnan(), inf, -inf, 0.5f, -0.0f, 2.0f};
  for (std::size_t i = 0; i < std::size(s); ++i) v[i * 5 + seed % 3] = s[i];
  return v;
}

}  // namespace

namespace {
void binary_case(std::size_t first, std::size_t last) {
  for (std::size_t i = first; i < last; ++i) {
    auto [name_c, op] = all_ops[i];
    const std::string name = name_c;
    CAPTURE(name);
    const nki::Kernel k = nki::jit(std::string("bin_") + name, [op](nl::tensor a, nl::tensor b) {
      auto o1 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o1");
      auto o2 = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "o2");
      auto x = nl::load(a.all());
      auto y = nl::load(b.all());
      nl::store(o1.all(), op(x, y));
      nl::store(o2.all(), nki::isa::tensor_tensor(x, y, op));
      return std::make_tuple(o1, o2);
    });
    for (DType dt : {DType::fp32, DType::bf16}) {
      CAPTURE(nki::dtype_name(dt));
      const nki::Shape s{128, 16};
      auto a = lt::make(s, dt, operands(128 * 16, 101));
      auto b = lt::make(s, dt, operands(128 * 16, 102));
      const auto av = a.to_floats(), bv = b.to_floats();
      std::vector<double> want(av.size());
      for (std::size_t x = 0; x < av.size(); ++x) want[x] = host_bin(name, av[x], bv[x]);
      lt::check_both(k, lt::no_grid(), {a, b}, {want, want}, std::string("bin ") + name);
    }
  }
}
}  // namespace

TEST_CASE("binary_fn objects and isa::tensor_tensor: add, subtract, multiply, divide") { binary_case(0, 4); }
TEST_CASE("binary_fn objects and isa::tensor_tensor: maximum, minimum, power") { binary_case(4, 7); }
TEST_CASE("binary_fn objects and isa::tensor_tensor: equal, not_equal, greater") { binary_case(7, 10); }
TEST_CASE("binary_fn objects and isa::tensor_tensor: greater_equal, less, less_equal") { binary_case(10, 13); }
TEST_CASE("binary_fn objects and isa::tensor_tensor: logical_and, logical_or") { binary_case(13, 15); }

TEST_CASE("comparisons with a dtype option produce 0/1 in bool and uint8 tiles") {
  const nki::Kernel k = nki::jit("cmp_dtype", [](nl::tensor a, nl::tensor b) {
    auto o1 = nl::ndarray(a.shape(), nl::bool_, nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(a.shape(), nl::uint8, nl::shared_hbm, "o2");
    auto x = nl::load(a.all());
    auto y = nl::load(b.all());
    auto c = nl::less(x, y, {.dtype = nl::bool_});
    CHECK(c.dtype() == DType::boolean);
    nl::store(o1.all(), c);
    nl::store(o2.all(), nl::greater_equal(x, y, {.dtype = nl::uint8}));
    return std::make_tuple(o1, o2);
  });
  auto a = lt::make({100, 10}, DType::fp32, operands(1000, 103));
  auto b = lt::make({100, 10}, DType::fp32, operands(1000, 104));
  const auto av = a.to_floats(), bv = b.to_floats();
  std::vector<double> w1(av.size()), w2(av.size());
  for (std::size_t x = 0; x < av.size(); ++x) {
    w1[x] = av[x] < bv[x] ? 1.0 : 0.0;
    w2[x] = av[x] >= bv[x] ? 1.0 : 0.0;
  }
  lt::check_both(k, lt::no_grid(), {a, b}, {w1, w2}, "cmp_dtype");
}

TEST_CASE("binary ops broadcast a [P, 1] tile and a scalar along the free dimension") {
  const nki::Kernel k = nki::jit("bin_broadcast", [](nl::tensor a, nl::tensor col) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto x = nl::load(a.all());
    auto c = nl::load(col.all());
    nl::store(out.all(), nl::power(nl::abs(x - c), 0.5f) / c);
    return out;
  });
  for (DType dt : {DType::fp32, DType::fp16}) {
    CAPTURE(nki::dtype_name(dt));
    auto a = lt::make({128, 50}, dt, test::random_floats(128 * 50, 105));
    auto col = lt::make({128, 1}, dt, test::random_floats(128, 106, 0.5f, 4.0f));
    const auto av = a.to_floats(), cv = col.to_floats();
    std::vector<double> want(av.size());
    for (std::size_t x = 0; x < av.size(); ++x) {
      const float c = cv[x / 50];
      const float d = rd(av[x] - c, dt);
      want[x] = rd(rd(std::pow(rd(std::fabs(d), dt), 0.5f), dt) / c, dt);
    }
    lt::check_both(k, lt::no_grid(), {a, col}, want, "bin_broadcast");
  }
}
