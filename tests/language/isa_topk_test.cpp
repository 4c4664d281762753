/** \file isa::topk: the k largest of each 16-partition snake, ascending, with their snake positions. */
#include <random>

#include "lang_support.h"
#include "nki/isa_index_ops.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

/** Host: per group of 16 partitions, the k largest of the snake (value e at [16g + e % 16, e / 16]), ascending. */
std::pair<std::vector<double>, std::vector<double>> host_topk(const std::vector<float>& x, std::int64_t p,
                                                              std::int64_t cols, std::int64_t n, std::int64_t k) {
  std::vector<double> vals, idx;
  for (std::int64_t g = 0; g < p; g += 16) {
    std::vector<std::pair<float, std::int64_t>> snake;
    for (std::int64_t e = 0; e < n; ++e) snake.emplace_back(x[static_cast<std::size_t>((g + e % 16) * cols + e / 16)], e);
    // Descending by value, the smaller position first among equals; the first k, reversed.
    std::stable_sort(snake.begin(), snake.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<double> v, i;
    for (std::int64_t r = k - 1; r >= 0; --r) {
      v.push_back(snake[static_cast<std::size_t>(r)].first);
      i.push_back(static_cast<double>(snake[static_cast<std::size_t>(r)].second));
    }
    for (int row = 0; row < 16; ++row) {
      vals.insert(vals.end(), v.begin(), v.end());
      idx.insert(idx.end(), i.begin(), i.end());
    }
  }
  return {vals, idx};
}

nki::Kernel topk_kernel(const std::string& name, std::int64_t n, std::int64_t k) {
  return nki::jit(name, [n, k](nl::tensor a) {
    auto v = nl::ndarray({a.shape()[0], k}, DType::bf16, nl::shared_hbm, "v");
    auto i = nl::ndarray({a.shape()[0], k}, DType::uint32, nl::shared_hbm, "i");
    const isa::topk_result r = isa::topk(nl::load(a.all()), n, k);
    nl::store(v.all(), r.values);
    nl::store(i.all(), r.indices);
    return std::make_tuple(v, i);
  });
}

void check_topk(const std::string& name, std::int64_t p, std::int64_t cols, std::int64_t n, std::int64_t k,
                const std::vector<float>& x) {
  const auto xs = lt::as_dtype(x, DType::bf16);
  const auto [v, i] = host_topk(xs, p, cols, n, k);
  lt::check_both(topk_kernel(name, n, k), lt::no_grid(), {lt::make({p, cols}, DType::bf16, xs)}, {v, i}, name);
}

}  // namespace

TEST_CASE("isa::topk - the k largest of a 16-partition snake, ascending, and their positions") {
  SUBCASE("NKI's example: n = 42 in 3 columns, k = 8; the unused snake slots are ignored") {
    std::vector<float> x = lt::random_ints(16 * 3, 1, -50, 50);
    for (std::int64_t e = 42; e < 48; ++e) x[static_cast<std::size_t>((e % 16) * 3 + e / 16)] = 1000;  // not in the snake
    check_topk("topk_example", 16, 3, 42, 8, x);
  }
  SUBCASE("repeated values and infinities, two groups") {
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> x(32 * 2, 3.0f);
    x[5] = inf;
    x[40] = -inf;
    x[41] = 7;
    check_topk("topk_repeats", 32, 2, 32, 3, x);
  }
}

TEST_CASE("isa::topk - random snakes, n and k agree with the host") {
  std::mt19937 rng(31);
  for (int trial = 0; trial < 2; ++trial) {
    const std::int64_t p = 16 * (1 + static_cast<std::int64_t>(rng() % 2));
    const std::int64_t n = 8 + static_cast<std::int64_t>(rng() % 60);
    const std::int64_t cols = (n + 15) / 16 + static_cast<std::int64_t>(rng() % 2);
    const std::int64_t k = 1 + static_cast<std::int64_t>(rng() % 4);
    CAPTURE(trial);
    check_topk(fmt::format("topk_random{}", trial), p, cols, n, k,
               lt::random_ints(static_cast<std::size_t>(p * cols), 70 + static_cast<std::uint32_t>(trial), -9, 9));
  }
}

namespace {
const char* kFile = "tests/language/isa_topk_test.cpp";

std::string misuse(const nki::Shape& shape, DType dt, std::int64_t n, std::int64_t k, int& line) {
  const nki::Kernel kern = nki::jit("topk_misuse", [&](nl::tensor a) {
    auto v = nl::ndarray({a.shape()[0], 8}, DType::bf16, nl::shared_hbm, "v");
    auto x = nl::load(a.all());
    line = __LINE__ + 1;
    nl::store(v.all(), isa::topk(x, n, k).values);
    return v;
  });
  return test::user_error_of([&] { kern(lt::make(shape, dt, std::vector<float>(static_cast<std::size_t>(shape[0] * shape[1]), 1.0f))); });
}
}  // namespace

TEST_CASE("isa::topk - misuse names NKI's error") {
  int line = 0;
  std::string e = misuse({16, 4}, DType::fp32, 40, 8, line);
  CHECK(e == fmt::format("topk_misuse ({}:{}): err_unsupported_dtype: isa::topk: src is fp32; it must be bf16", kFile, line));
  e = misuse({8, 4}, DType::bf16, 40, 8, line);
  CHECK(e == fmt::format("topk_misuse ({}:{}): err_num_partition_mismatch: isa::topk: src has 8 partitions; it must be a "
                         "multiple of 16 (one snake per 16 partitions)", kFile, line));
  e = misuse({16, 4}, DType::bf16, 7, 4, line);
  CHECK(e == fmt::format("topk_misuse ({}:{}): err_size_of_dimension_exceed_arch_limit: isa::topk: n is 7; it must be at "
                         "least 8 and below 65536", kFile, line));
  e = misuse({16, 4}, DType::bf16, 40, 41, line);
  CHECK(e == fmt::format("topk_misuse ({}:{}): err_size_of_dimension_exceed_arch_limit: isa::topk: k is 41; it must be at "
                         "least 1, below 32768 and at most n (40)", kFile, line));
  e = misuse({16, 2}, DType::bf16, 40, 8, line);
  CHECK(e == fmt::format("topk_misuse ({}:{}): err_free_dim_mismatch: isa::topk: src has 2 columns; a snake of n = 40 "
                         "values needs ceil(n / 16) = 3", kFile, line));
}
