/** \file Subscripting a tile (tile[p, f]): columns, windows, loop-variable starts, index arrays, and its errors. */
#include "lang_support.h"

namespace nl = nki::language;
using nki::DType;

namespace {

/** Host: x [p, f] row-major, element (i, j). */
struct Host {
  std::vector<float> v;
  std::int64_t f;
  double operator()(std::int64_t i, std::int64_t j) const { return v[static_cast<std::size_t>(i * f + j)]; }
};

}  // namespace

TEST_CASE("tile subscripts - the last column into a [P, 1] window, a window of rows and columns, a reversed row") {
  // o1 = t[:, F-1] written into a [P, 1] SBUF array; o2 = t[2:2+8, 5:5+16] * 2; o3[p, x] = t[p, F-1-x].
  const nki::Kernel k = nki::jit("subscript", [](nl::tensor a) {
    const std::int64_t p = a.shape()[0], f = a.shape()[1];
    auto o1 = nl::ndarray({p, 1}, a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray({8, 16}, a.dtype(), nl::shared_hbm, "o2");
    auto o3 = nl::ndarray({p, f}, a.dtype(), nl::shared_hbm, "o3");
    auto t = nl::load(a.all());
    auto last = nl::zeros({p, 1}, a.dtype(), nl::sbuf, "last");
    last.all() = t[nl::ds(0, p), f - 1];  // (P): the last column
    nl::store(o1.all(), last);
    nl::store(o2.all(), nl::multiply(t[nl::ds(2, 8), nl::ds(5, 16)], 2.0));
    auto [ip, ix] = nl::mgrid(p, f);
    nl::store(o3.all(), nl::copy(t[ip, (f - 1) - ix]));
    return std::make_tuple(o1, o2, o3);
  });
  const std::int64_t p = 16, f = 40;
  auto a = lt::make({p, f}, DType::fp32, test::random_floats(static_cast<std::size_t>(p * f), 91));
  const Host x{a.to_floats(), f};
  std::vector<double> w1, w2, w3;
  for (std::int64_t i = 0; i < p; ++i) w1.push_back(x(i, f - 1));
  for (std::int64_t i = 0; i < 8; ++i)
    for (std::int64_t j = 0; j < 16; ++j) w2.push_back(lt::fmul(static_cast<float>(x(2 + i, 5 + j)), 2.0f));
  for (std::int64_t i = 0; i < p; ++i)
    for (std::int64_t j = 0; j < f; ++j) w3.push_back(x(i, f - 1 - j));
  lt::check_both(k, lt::no_grid(), {a}, {w1, w2, w3}, "tile subscripts");
}

TEST_CASE("tile subscripts - a window that moves with an affine_range and with a sequential_range variable") {
  // out[:, 32 l : 32 l + 32] = t[:, 32 l : ...] + 1 (affine); then a running copy of the last column per block (sequential).
  const nki::Kernel k = nki::jit("subscript_loops", [](nl::tensor a) {
    const std::int64_t p = a.shape()[0], f = a.shape()[1], blocks = f / 32;
    auto o1 = nl::ndarray({p, f}, a.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray({p, blocks}, a.dtype(), nl::shared_hbm, "o2");
    auto t = nl::load(a.all());
    for (auto l : nl::affine_range(blocks))
      nl::store(o1[nl::_, nl::ds(l * 32, 32)], nl::add(t[nl::_, nl::ds(l * 32, 32)], 1.0));
    for (auto l : nl::sequential_range(blocks))
      nl::store(o2[nl::_, nl::ds(l, 1)], t[nl::_, l * 32 + 31]);
    return std::make_tuple(o1, o2);
  });
  const std::int64_t p = 128, f = 128;
  auto a = lt::make({p, f}, DType::fp32, test::random_floats(static_cast<std::size_t>(p * f), 92));
  const Host x{a.to_floats(), f};
  std::vector<double> w1, w2;
  for (std::int64_t i = 0; i < p; ++i)
    for (std::int64_t j = 0; j < f; ++j) w1.push_back(lt::fadd(static_cast<float>(x(i, j)), 1.0f));
  for (std::int64_t i = 0; i < p; ++i)
    for (std::int64_t b = 0; b < f / 32; ++b) w2.push_back(x(i, b * 32 + 31));
  lt::check_both(k, lt::no_grid(), {a}, {w1, w2}, "tile subscripts in loops");
}

TEST_CASE("tile subscripts - randomized windows of randomized tiles") {
  std::mt19937 rng(93);
  for (int round = 0; round < 6; ++round) {
    const std::int64_t p = 1 + static_cast<std::int64_t>(rng() % 128), f = 1 + static_cast<std::int64_t>(rng() % 200);
    const std::int64_t p0 = static_cast<std::int64_t>(rng() % static_cast<std::uint32_t>(p)), np = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint32_t>(p - p0));
    const std::int64_t f0 = static_cast<std::int64_t>(rng() % static_cast<std::uint32_t>(f)), nf = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint32_t>(f - f0));
    CAPTURE(round);
    CAPTURE(p);
    CAPTURE(f);
    const nki::Kernel k = nki::jit("subscript_random", [=](nl::tensor a) {
      auto out = nl::ndarray({np, nf}, a.dtype(), nl::shared_hbm, "out");
      nl::store(out.all(), nl::load(a.all())[nl::ds(p0, np), nl::ds(f0, nf)]);
      return out;
    });
    auto a = lt::make({p, f}, DType::bf16, test::random_floats(static_cast<std::size_t>(p * f), 900 + static_cast<std::uint32_t>(round)));
    const Host x{a.to_floats(), f};
    std::vector<double> want;
    for (std::int64_t i = 0; i < np; ++i)
      for (std::int64_t j = 0; j < nf; ++j) want.push_back(x(p0 + i, f0 + j));
    lt::check_both(k, lt::no_grid(), {a}, want, "random tile window");
  }
}

namespace {
const char* kFile = "tests/language/tile_subscript_test.cpp";

template <class F>
std::string subscript_error(F body) {
  const nki::Kernel k = nki::jit("subscript_misuse", [&](nl::tensor a) {
    auto out = nl::ndarray({128, 1}, a.dtype(), nl::shared_hbm, "out");
    nl::store(out.all(), body(nl::load(a.all())));
    return out;
  });
  return test::user_error_of([&] { k(lt::make({128, 64}, DType::fp32, test::random_floats(128 * 64, 9))); });
}
}  // namespace

TEST_CASE("tile subscripts - misuse names NKI's error") {
  static int line = 0;
  {
    const std::string e = subscript_error([](nl::tile t) {
      line = __LINE__ + 1;
      return t[nl::_, 64];
    });
    CHECK(e == fmt::format("subscript_misuse ({}:{}): err_tensor_access_out_of_bound: tile %t0 [128,64]: index 64 of "
                       "dimension 1 ranges over [64, 64]; the valid range is [0, 63]",
                       kFile, line));
  }
  {
    const std::string e = subscript_error([](nl::tile t) {
      nl::tile r = t;
      for (auto l : nl::affine_range(3)) {
        line = __LINE__ + 1;
        r = t[nl::_, nl::ds(l * 32, 1)];
      }
      return r;
    });
    CHECK(e == fmt::format("subscript_misuse ({}:{}): err_tensor_access_out_of_bound: tile %t0 [128,64]: index 32*l0 of "
                       "dimension 1 ranges over [0, 64]; the valid range is [0, 63]",
                       kFile, line));
  }
  {
    const std::string e = subscript_error([](nl::tile t) {
      line = __LINE__ + 1;
      return t[nl::_, 0, 0];
    });
    CHECK(e == fmt::format("subscript_misuse ({}:{}): err_index_rank_mismatch: tile %t0 of shape [128,64] has 2 "
                       "dimensions but was indexed with 3",
                       kFile, line));
  }
  {
    const std::string e = subscript_error([](nl::tile t) {
      line = __LINE__ + 1;
      return t[3, nl::ds(0, 64)];
    });
    CHECK(e == fmt::format("subscript_misuse ({}:{}): err_num_partition_mismatch: tile %t0 [128,64]: the subscript takes "
                       "the 64 partitions of the result from free dimension 1; a tile subscript keeps the partition "
                       "dimension first (select one partition with nl::ds(p, 1))",
                       kFile, line));
  }
  {
    const std::string e = subscript_error([](nl::tile t) {
      auto [ip, ix] = nl::mgrid(128, 1);
      line = __LINE__ + 1;
      return t[ip, nl::ds(0, 1)];
    });
    CHECK(e == fmt::format("subscript_misuse ({}:{}): err_unsupported_mixing_basic_advanced_tensor_indexing: tile %t0 is "
                       "indexed with both a slice and an index array of shape [128,1]; use only slices (nl::ds, _) or "
                       "only index arrays (arange, mgrid) in one access",
                       kFile, line));
  }
}
