/** \file isa::max8, isa::nc_find_index8 and isa::nc_match_replace8: the 8 largest values, their positions, replacing them. */
#include "lang_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

using Rows = std::vector<float>;

/** Host: the 8 largest of each row (with repeats), descending. */
std::vector<double> host_max8(const Rows& x, std::int64_t p, std::int64_t f) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < p; ++i) {
    Rows row(x.begin() + i * f, x.begin() + (i + 1) * f);
    std::sort(row.begin(), row.end(), [](float a, float b) { return a > b; });
    out.insert(out.end(), row.begin(), row.begin() + 8);
  }
  return out;
}

/**
 * Host: for vals taken in `order`, the first position not yet taken holding the value
 * (all ones when none); the taken positions per row in `taken`.
 */
std::vector<double> host_find(const Rows& x, const Rows& vals, std::int64_t p, std::int64_t f,
                              const std::vector<int>& order, double none, std::vector<std::vector<bool>>* taken) {
  std::vector<double> out(static_cast<std::size_t>(p * 8), none);
  if (taken) taken->assign(static_cast<std::size_t>(p), std::vector<bool>(static_cast<std::size_t>(f), false));
  for (std::int64_t i = 0; i < p; ++i) {
    std::vector<bool> used(static_cast<std::size_t>(f), false);
    for (int j : order) {
      const float v = vals[static_cast<std::size_t>(i * 8 + j)];
      for (std::int64_t q = 0; q < f; ++q) {
        if (!used[static_cast<std::size_t>(q)] && x[static_cast<std::size_t>(i * f + q)] == v) {
          used[static_cast<std::size_t>(q)] = true;
          out[static_cast<std::size_t>(i * 8 + j)] = static_cast<double>(q);
          break;
        }
      }
    }
    if (taken) (*taken)[static_cast<std::size_t>(i)] = used;
  }
  return out;
}

const std::vector<int> kAscending{0, 1, 2, 3, 4, 5, 6, 7};
const std::vector<int> kDescending{7, 6, 5, 4, 3, 2, 1, 0};

}  // namespace

TEST_CASE("isa::max8 - the 8 largest per partition, descending, repeats kept") {
  const nki::Kernel k = nki::jit("max8", [](nl::tensor a) {
    auto out = nl::ndarray({a.shape()[0], 8}, a.dtype(), nl::shared_hbm, "out");
    nl::store(out.all(), isa::max8(nl::load(a.all())));
    return out;
  });
  SUBCASE("repeats and infinities") {
    const float inf = std::numeric_limits<float>::infinity();
    const Rows x = {5, 5, 5, 1, 2, 3, -inf, 0, 9, 7,            // 9 7 5 5 5 3 2 1
                    -1, -2, -3, -4, -5, -6, -7, -8, -9, -inf,   // -1 ... -8
                    4, 4, 4, 4, 4, 4, 4, 4, 4, 4,               // all 4
                    -inf, -inf, -inf, -inf, -inf, -inf, -inf, inf, -inf, 1};
    lt::check_both(k, lt::no_grid(), {lt::make({4, 10}, DType::fp32, x)}, host_max8(x, 4, 10), "max8 rows");
  }
  SUBCASE("random bf16, many repeats") {
    const Rows x = lt::as_dtype(lt::random_ints(128 * 300, 11, -20, 20), DType::bf16);
    lt::check_both(k, lt::no_grid(), {lt::make({128, 300}, DType::bf16, x)}, host_max8(x, 128, 300), "max8 bf16");
  }
  SUBCASE("random fp32") {
    const Rows x = test::random_floats(64 * 1000, 12);
    lt::check_both(k, lt::no_grid(), {lt::make({64, 1000}, DType::fp32, x)}, host_max8(x, 64, 1000), "max8 fp32");
  }
}

TEST_CASE("isa::nc_find_index8 - first positions, duplicate vals ascending, all ones when absent") {
  const auto kernel = [](DType idx) {
    return nki::jit("find8", [idx](nl::tensor a, nl::tensor v) {
      auto out = nl::ndarray({a.shape()[0], 8}, idx, nl::shared_hbm, "out");
      nl::store(out.all(), isa::nc_find_index8(nl::load(a.all()), nl::load(v.all()), {.dtype = idx}));
      return out;
    });
  };
  SUBCASE("the docstring's duplicates, an absent value, NaN") {
    const float nan = lt::qnan();
    const Rows x = {1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8, nan,  //
                    0, 0, 0, 1, 1, 1, 2, 2, 2, 7, 7, 7};
    const Rows v = {3, 8, 8, 8, 8, 8, 8, 8,  //
                    7, 2, 0, 0, 5, 0, 0, nan};
    const std::vector<double> want = {2, 4, 5, 6, 7, 8, 9, 10,  //
                                      9, 6, 0, 1, 4294967295.0, 2, 4294967295.0, 4294967295.0};
    CHECK(host_find(x, v, 2, 12, kAscending, 4294967295.0, nullptr) == want);
    lt::check_both(kernel(DType::uint32), lt::no_grid(), {lt::make({2, 12}, DType::fp32, x), lt::make({2, 8}, DType::fp32, v)},
                   want, "find8 uint32");
    std::vector<double> want16 = want;
    for (double& w : want16) w = w == 4294967295.0 ? 65535.0 : w;
    lt::check_both(kernel(DType::uint16), lt::no_grid(), {lt::make({2, 12}, DType::fp32, x), lt::make({2, 8}, DType::fp32, v)},
                   want16, "find8 uint16");
  }
  SUBCASE("random: vals drawn from the data and beyond it") {
    const std::int64_t p = 128, f = 200;
    const Rows x = lt::random_ints(static_cast<std::size_t>(p * f), 21, 0, 60);
    const Rows v = lt::random_ints(static_cast<std::size_t>(p * 8), 22, 0, 70);
    lt::check_both(kernel(DType::uint32), lt::no_grid(), {lt::make({p, f}, DType::fp32, x), lt::make({p, 8}, DType::fp32, v)},
                   host_find(x, v, p, f, kAscending, 4294967295.0, nullptr), "find8 random");
  }
}

TEST_CASE("isa::nc_find_index8 - a mask leaves data elements out of the search") {
  // Only the first 6 columns are searched: a value that occurs later is not found.
  const nki::Kernel k = nki::jit("find8_masked", [](nl::tensor a, nl::tensor v) {
    auto out = nl::ndarray({a.shape()[0], 8}, nl::uint32, nl::shared_hbm, "out");
    const auto g = nl::mgrid(a.shape()[0], a.shape()[1]);
    nl::store(out.all(), isa::nc_find_index8(nl::load(a.all()), nl::load(v.all()), {.mask = g.x < 6}));
    return out;
  });
  const Rows x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 1};
  const Rows v = {1, 1, 7, 6, 2, 9, 0, 3};
  lt::check_both(k, lt::no_grid(), {lt::make({1, 10}, DType::fp32, x), lt::make({1, 8}, DType::fp32, v)},
                 {0, 4294967295.0, 4294967295.0, 5, 1, 4294967295.0, 4294967295.0, 2}, "find8 masked");
}

TEST_CASE("isa::nc_match_replace8 - replaces first occurrences, dst_idx pairs duplicates from the last val") {
  const nki::Kernel k = nki::jit("match8", [](nl::tensor a, nl::tensor v) {
    const std::int64_t p = a.shape()[0];
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto idx_out = nl::ndarray({p, 8}, nl::uint32, nl::shared_hbm, "idx_out");
    auto idx = nl::ndarray({p, 8}, nl::uint32, nl::sbuf, "idx");
    nl::store(out.all(), isa::nc_match_replace8(nl::load(a.all()), nl::load(v.all()), -1.5, {.dst_idx = idx.all()}));
    nl::store(idx_out.all(), idx);
    return std::make_tuple(out, idx_out);
  });
  const auto host = [](const Rows& x, const Rows& v, std::int64_t p, std::int64_t f) {
    std::vector<std::vector<bool>> taken;
    const std::vector<double> idx = host_find(x, v, p, f, kDescending, 4294967295.0, &taken);
    std::vector<double> out(x.begin(), x.end());
    for (std::int64_t i = 0; i < p; ++i)
      for (std::int64_t q = 0; q < f; ++q)
        if (taken[static_cast<std::size_t>(i)][static_cast<std::size_t>(q)]) out[static_cast<std::size_t>(i * f + q)] = -1.5;
    return std::vector<std::vector<double>>{out, idx};
  };
  SUBCASE("the docstring's example") {
    const Rows x = {1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8};
    const Rows v = {3, 8, 8, 8, 8, 8, 8, 8};
    const auto want = host(x, v, 1, 11);
    CHECK(want[1] == std::vector<double>{2, 10, 9, 8, 7, 6, 5, 4});
    lt::check_both(k, lt::no_grid(), {lt::make({1, 11}, DType::fp32, x), lt::make({1, 8}, DType::fp32, v)}, want,
                   "match8 docstring");
  }
  SUBCASE("random bf16 with repeats and absent values") {
    const std::int64_t p = 96, f = 64;
    const Rows x = lt::random_ints(static_cast<std::size_t>(p * f), 31, -10, 10);
    const Rows v = lt::random_ints(static_cast<std::size_t>(p * 8), 32, -12, 12);
    lt::check_both(k, lt::no_grid(), {lt::make({p, f}, DType::bf16, x), lt::make({p, 8}, DType::bf16, v)},
                   host(x, v, p, f), "match8 random");
  }
}

namespace {
const char* kFile = "tests/language/isa_max8_find_index_test.cpp";

template <class F>
std::string misuse(const nki::Shape& shape, F body) {
  const nki::Kernel k = nki::jit("max8_misuse", [&](nl::tensor a) {
    auto out = nl::ndarray({shape[0], 8}, nl::float32, nl::shared_hbm, "out");
    nl::store(out.all(), body(a));
    return out;
  });
  return test::user_error_of([&] { k(lt::make(shape, DType::fp32, test::random_floats(static_cast<std::size_t>(shape[0] * shape[1]), 3))); });
}
}  // namespace

TEST_CASE("isa::max8 / nc_find_index8 / nc_match_replace8 - misuse names NKI's error") {
  int line = 0;
  std::string e = misuse({4, 7}, [&](nl::tensor a) {
    line = __LINE__ + 1;
    return isa::max8(nl::load(a.all()));
  });
  CHECK(e == fmt::format("max8_misuse ({}:{}): err_size_of_dimension_exceed_arch_limit: isa::max8: src has 7 elements "
                         "per partition; the instruction reads 8 to 16384", kFile, line));
  e = misuse({4, 16}, [&](nl::tensor a) {
    auto x = nl::load(a.all());
    line = __LINE__ + 1;
    return isa::nc_find_index8(x, x[nl::_, nl::ds(0, 4)]);
  });
  CHECK(e == fmt::format("max8_misuse ({}:{}): err_free_dim_mismatch: isa::nc_find_index8: vals must hold exactly 8 "
                         "values per partition ([4, 8]), got [4,4]", kFile, line));
  e = misuse({4, 16}, [&](nl::tensor a) {
    auto x = nl::load(a.all());
    line = __LINE__ + 1;
    return isa::nc_find_index8(x, x[nl::ds(0, 2), nl::ds(0, 8)]);
  });
  CHECK(e == fmt::format("max8_misuse ({}:{}): err_num_partition_mismatch: isa::nc_find_index8: vals [2,8] has 2 "
                         "partitions; the data has 4", kFile, line));
  e = misuse({4, 16}, [&](nl::tensor a) {
    auto x = nl::load(a.all());
    line = __LINE__ + 1;
    return isa::nc_find_index8(x, x[nl::_, nl::ds(0, 8)], {.dtype = nl::int32});
  });
  CHECK(e == fmt::format("max8_misuse ({}:{}): err_unsupported_dtype: isa::nc_find_index8: the indices are uint32 or "
                         "uint16, got dtype int32", kFile, line));
  e = misuse({4, 16}, [&](nl::tensor a) {
    auto x = nl::load(a.all());
    auto idx = nl::ndarray({4, 8}, nl::float32, nl::sbuf, "idx");
    line = __LINE__ + 1;
    return isa::nc_match_replace8(x, x[nl::_, nl::ds(0, 8)], 0.0, {.dst_idx = idx.all()})[nl::_, nl::ds(0, 8)];
  });
  CHECK(e == fmt::format("max8_misuse ({}:{}): err_unsupported_dtype: isa::nc_match_replace8: dst_idx idx is fp32; the "
                         "indices are uint32 or uint16", kFile, line));
  e = misuse({4, 16}, [&](nl::tensor) {
    line = __LINE__ + 1;
    return isa::max8(2.0);
  });
  CHECK(e == fmt::format("max8_misuse ({}:{}): err_scalar_only_operation: isa::max8: src is a scalar; it must be a tile",
                         kFile, line));
}
