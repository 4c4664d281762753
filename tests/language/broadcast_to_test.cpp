/** \file tile.broadcast_to / nl::broadcast_to: [1, F] across partitions, [P, 1] along the free axis, and its errors. */
#include "lang_support.h"

namespace nl = nki::language;
using nki::DType;

namespace {

/** Host: x [xp, xf] broadcast to [p, f] (each size-1 dimension repeated). */
std::vector<double> host_broadcast(const std::vector<float>& x, std::int64_t xp, std::int64_t xf, std::int64_t p,
                                   std::int64_t f) {
  std::vector<double> out(static_cast<std::size_t>(p * f));
  for (std::int64_t i = 0; i < p; ++i)
    for (std::int64_t j = 0; j < f; ++j)
      out[static_cast<std::size_t>(i * f + j)] = x[static_cast<std::size_t>((xp == 1 ? 0 : i) * xf + (xf == 1 ? 0 : j))];
  return out;
}

}  // namespace

TEST_CASE("broadcast_to - a row to every partition, a column along the free axis, a scalar tile to both") {
  // o1 = row [1, F] -> [P, F]; o2 = col [P, 1] -> [P, F]; o3 = [1, 1] -> [P, F] as bf16; o4 = x * row broadcast.
  const nki::Kernel k = nki::jit("broadcast", [](nl::tensor x, nl::tensor row, nl::tensor col) {
    const std::int64_t p = x.shape()[0], f = x.shape()[1];
    auto o1 = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "o2");
    auto o3 = nl::ndarray(x.shape(), nl::bfloat16, nl::shared_hbm, "o3");
    auto o4 = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "o4");
    auto r = nl::load(row.all());  // (1, F)
    auto c = nl::load(col.all());  // (P, 1)
    nl::store(o1.all(), r.broadcast_to({p, f}));
    nl::store(o2.all(), c.broadcast_to({p, f}));
    nl::store(o3.all(), nl::broadcast_to(nl::load(row[nl::ds(0, 1), nl::ds(0, 1)]), {p, f}, {.dtype = nl::bfloat16}));
    nl::store(o4.all(), nl::multiply(nl::load(x.all()), r.broadcast_to({p, f})));
    return std::make_tuple(o1, o2, o3, o4);
  });
  for (const auto& [p, f] : {std::pair<std::int64_t, std::int64_t>{128, 96}, {5, 3}}) {
    CAPTURE(p);
    const auto n = static_cast<std::size_t>(p * f);
    auto x = lt::make({p, f}, DType::fp32, test::random_floats(n, 61));
    auto row = lt::make({1, f}, DType::fp32, test::random_floats(static_cast<std::size_t>(f), 62));
    auto col = lt::make({p, 1}, DType::fp32, test::random_floats(static_cast<std::size_t>(p), 63));
    const auto xv = x.to_floats(), rv = row.to_floats(), cv = col.to_floats();
    std::vector<double> o4(n);
    for (std::size_t i = 0; i < n; ++i) o4[i] = lt::fmul(xv[i], rv[i % static_cast<std::size_t>(f)]);
    lt::check_both(k, lt::no_grid(), {x, row, col},
                   {host_broadcast(rv, 1, f, p, f), host_broadcast(cv, p, 1, p, f),
                    host_broadcast(rv, 1, 1, p, f), o4},
                   "broadcast_to");
  }
}

TEST_CASE("broadcast_to - to its own shape it is the tile itself") {
  const nki::Kernel k = nki::jit("broadcast_same", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
    auto t = nl::load(x.all());
    auto same = t.broadcast_to(x.shape());
    CHECK(same.id() == t.id());
    nl::store(out.all(), same);
    return out;
  });
  auto x = lt::make({8, 8}, DType::fp32, test::random_floats(64, 64));
  const auto xv = x.to_floats();
  lt::check_both(k, lt::no_grid(), {x}, std::vector<double>(xv.begin(), xv.end()), "broadcast_to same shape");
}

TEST_CASE("broadcast_to - randomized shapes: which dimensions are 1 and the sizes vary") {
  std::mt19937 rng(77);
  for (int round = 0; round < 6; ++round) {
    const std::int64_t p = 1 + static_cast<std::int64_t>(rng() % 128), f = 1 + static_cast<std::int64_t>(rng() % 300);
    const std::int64_t xp = rng() % 2 == 0 ? 1 : p, xf = rng() % 2 == 0 ? 1 : f;
    CAPTURE(round);
    CAPTURE(p);
    CAPTURE(f);
    CAPTURE(xp);
    CAPTURE(xf);
    const nki::Kernel k = nki::jit("broadcast_random", [p, f](nl::tensor x) {
      auto out = nl::ndarray({p, f}, x.dtype(), nl::shared_hbm, "out");
      nl::store(out.all(), nl::load(x.all()).broadcast_to({p, f}));
      return out;
    });
    auto x = lt::make({xp, xf}, DType::fp32, test::random_floats(static_cast<std::size_t>(xp * xf), 700 + static_cast<std::uint32_t>(round)));
    lt::check_both(k, lt::no_grid(), {x}, host_broadcast(x.to_floats(), xp, xf, p, f), "random broadcast_to");
  }
}

namespace {
const char* kFile = "tests/language/broadcast_to_test.cpp";

template <class F>
std::string broadcast_error(F body) {
  const nki::Kernel k = nki::jit("broadcast_misuse", [&](nl::tensor a) {
    auto out = nl::ndarray({128, 64}, a.dtype(), nl::shared_hbm, "out");
    nl::store(out.all(), body(a));
    return out;
  });
  return test::user_error_of([&] { k(lt::make({4, 64}, DType::fp32, test::random_floats(4 * 64, 8))); });
}
}  // namespace

TEST_CASE("broadcast_to - misuse names NKI's error") {
  static int line = 0;
  {
    const std::string e = broadcast_error([](nl::tensor a) {
      auto t = nl::load(a.all());  // (4, 64)
      line = __LINE__ + 1;
      return t.broadcast_to({128, 64});
    });
    CHECK(e == fmt::format("broadcast_misuse ({}:{}): err_num_partition_mismatch: nl::broadcast_to of a tile of shape "
                       "[4,64] to [128,64]: dimension 0 of size 4 is neither 128 nor 1",
                       kFile, line));
  }
  {
    const std::string e = broadcast_error([](nl::tensor a) {
      auto t = nl::load(a[nl::ds(0, 1), nl::ds(0, 32)]);  // (1, 32)
      line = __LINE__ + 1;
      return t.broadcast_to({128, 64});
    });
    CHECK(e == fmt::format("broadcast_misuse ({}:{}): err_free_dim_mismatch: nl::broadcast_to of a tile of shape [1,32] "
                       "to [128,64]: dimension 1 of size 32 is neither 64 nor 1",
                       kFile, line));
  }
  {
    const std::string e = broadcast_error([](nl::tensor a) {
      auto t = nl::load(a[nl::ds(0, 1), nl::_]);  // (1, 64)
      line = __LINE__ + 1;
      return t.broadcast_to({128, 1, 64});
    });
    CHECK(e == fmt::format("broadcast_misuse ({}:{}): err_invalid_shape: nl::broadcast_to of a tile of shape [1,64] to "
                       "[128,1,64]: the target shape has the tile's rank (2)",
                       kFile, line));
  }
  {
    const std::string e = broadcast_error([](nl::tensor a) {
      auto t = nl::load(a[nl::ds(0, 1), nl::_]);
      line = __LINE__ + 1;
      return t.broadcast_to({256, 64});
    });
    CHECK(e == fmt::format("broadcast_misuse ({}:{}): err_num_partition_exceed_arch_limit: number of partitions 256 "
                       "exceeds architecture limitation of 128",
                       kFile, line));
  }
  {
    const std::string e = broadcast_error([](nl::tensor) {
      line = __LINE__ + 1;
      return nl::broadcast_to(1.0, {128, 64});
    });
    CHECK(e == fmt::format("broadcast_misuse ({}:{}): err_scalar_only_operation: nl::broadcast_to needs a tile, got a scalar",
                       kFile, line));
  }
}
