/** \file isa::nonzero_with_count and isa::sequence_bounds: positions of non-zeros, bounds of runs of segment ids. */
#include <random>

#include "lang_support.h"
#include "nki/isa_index_ops.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

/** Host: row p of dst for partitions 0, 16, ...: positions + offset, padding, count; `fill` elsewhere. */
std::vector<double> host_nonzero(const std::vector<float>& x, std::int64_t p, std::int64_t n, std::int64_t offset,
                                 std::int64_t pad, double fill) {
  std::vector<double> out;
  for (std::int64_t r = 0; r < p; ++r) {
    if (r % 16 != 0) {
      out.insert(out.end(), static_cast<std::size_t>(n + 1), fill);
      continue;
    }
    std::vector<double> row;
    for (std::int64_t i = 0; i < n; ++i) {
      if (x[static_cast<std::size_t>(r * n + i)] != 0.0f) {
        row.push_back(static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(i + offset))));
      }
    }
    const auto count = static_cast<double>(row.size());
    row.resize(static_cast<std::size_t>(n), static_cast<double>(pad));
    row.push_back(count);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

nki::Kernel nonzero_kernel(const std::string& name, std::int32_t offset, std::int32_t pad) {
  return nki::jit(name, [offset, pad](nl::tensor a) {
    const std::int64_t p = a.shape()[0], n = a.shape()[1];
    auto out = nl::ndarray({p, n + 1}, DType::int32, nl::shared_hbm, "out");
    auto buf = nl::ndarray({nl::par_dim(p), n + 1}, DType::int32, nl::sbuf, "buf");
    buf[nl::_, nl::_] = 7;  // the partitions the instruction does not write keep this
    isa::nonzero_with_count(buf[nl::_, nl::_], nl::load(a.all()), offset, pad);
    nl::store(out.all(), buf);
    return out;
  });
}

/** Host: per position, the first position of its run of equal ids and one past the last; id 0: n and -1. */
std::vector<double> host_bounds(const std::vector<float>& ids) {
  const auto n = static_cast<std::int64_t>(ids.size());
  std::vector<double> start(ids.size()), end(ids.size());
  for (std::int64_t i = 0; i < n; ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (ids[u] == 0.0f) {
      start[u] = static_cast<double>(n);
      end[u] = -1;
      continue;
    }
    std::int64_t a = i, b = i;
    while (a > 0 && ids[static_cast<std::size_t>(a - 1)] == ids[u]) --a;
    while (b + 1 < n && ids[static_cast<std::size_t>(b + 1)] == ids[u]) ++b;
    start[u] = static_cast<double>(a);
    end[u] = static_cast<double>(b + 1);
  }
  start.insert(start.end(), end.begin(), end.end());
  return start;
}

nki::Kernel bounds_kernel(const std::string& name) {
  return nki::jit(name, [](nl::tensor a) {
    auto out = nl::ndarray({1, 2, a.shape()[1]}, a.dtype(), nl::shared_hbm, "out");
    nl::store(out.all(), isa::sequence_bounds(nl::load(a.all())));
    return out;
  });
}

}  // namespace

TEST_CASE("isa::nonzero_with_count - positions plus index_offset, padding, the count, on partitions 0, 16, ...") {
  SUBCASE("NKI's example row, offset 16") {
    const std::vector<float> x = {0, 1, 1, 0, 0, 1, 0, 0};
    lt::check_both(nonzero_kernel("nonzero_example", 16, -1), lt::no_grid(), {lt::make({1, 8}, DType::fp32, x)},
                   std::vector<double>{17, 18, 21, -1, -1, -1, -1, -1, 3}, "nonzero example");
  }
  SUBCASE("fp32 and int32 rows of 40 partitions: -0.0 is zero, NaN is not; other partitions untouched") {
    const std::int64_t p = 40, n = 20;
    std::vector<float> x = lt::random_ints(static_cast<std::size_t>(p * n), 3, -1, 1);
    x[0] = -0.0f;
    x[1] = std::numeric_limits<float>::quiet_NaN();
    const auto want = host_nonzero(x, p, n, 0, -1, 7);
    lt::check_both(nonzero_kernel("nonzero_fp32", 0, -1), lt::no_grid(), {lt::make({p, n}, DType::fp32, x)}, want, "fp32");
    x[1] = 5;
    lt::check_both(nonzero_kernel("nonzero_int32", 0, -1), lt::no_grid(), {lt::make({p, n}, DType::int32, x)},
                   host_nonzero(x, p, n, 0, -1, 7), "int32");
  }
  SUBCASE("offsets near the int32 limits are added exactly") {
    const std::int64_t p = 17, n = 9;
    const std::vector<float> x = lt::random_ints(static_cast<std::size_t>(p * n), 4, 0, 1);
    for (const std::int32_t off : {2147483000, -2147483600, 123456789, -7}) {
      CAPTURE(off);
      lt::check_both(nonzero_kernel(fmt::format("nonzero_off{}", off), off, 99), lt::no_grid(),
                     {lt::make({p, n}, DType::fp32, x)}, host_nonzero(x, p, n, off, 99, 7), "offset");
    }
  }
  SUBCASE("more than 128 elements per partition: the slots in several chunks") {
    const std::int64_t p = 2, n = 300;
    const std::vector<float> x = lt::random_ints(static_cast<std::size_t>(p * n), 5, 0, 2);
    lt::check_both(nonzero_kernel("nonzero_long", 1000, -1), lt::no_grid(), {lt::make({p, n}, DType::fp32, x)},
                   host_nonzero(x, p, n, 1000, -1, 7), "long rows");
  }
}

TEST_CASE("isa::nonzero_with_count - random rows, offsets and padding agree with the host") {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 5; ++trial) {
    const std::int64_t p = 1 + static_cast<std::int64_t>(rng() % 128), n = 1 + static_cast<std::int64_t>(rng() % 150);
    const auto off = static_cast<std::int32_t>(rng());
    const auto pad = static_cast<std::int32_t>(rng() % 2000) - 1000;
    const DType dt = rng() % 2 ? DType::fp32 : DType::int32;
    CAPTURE(trial);
    const std::vector<float> x = lt::random_ints(static_cast<std::size_t>(p * n), 600 + static_cast<std::uint32_t>(trial), -2, 2);
    lt::check_both(nonzero_kernel(fmt::format("nonzero_random{}", trial), off, pad), lt::no_grid(),
                   {lt::make({p, n}, dt, x)}, host_nonzero(x, p, n, off, pad, 7), "random nonzero");
  }
}

TEST_CASE("isa::sequence_bounds - start and one past the end of each run of ids, padding n and -1") {
  SUBCASE("runs, padding and a repeated id in separate runs") {
  const std::vector<float> ids = {1, 1, 1, 2, 2, 0, 0, 3, 1, 1, 5, 0};
  for (const DType dt : {DType::fp32, DType::int32}) {
    CAPTURE(nki::dtype_name(dt));
    const auto want = host_bounds(ids);
    CHECK(want == std::vector<double>{0, 0, 0, 3, 3, 12, 12, 7, 8, 8, 10, 12,  // starts
                                      3, 3, 3, 5, 5, -1, -1, 8, 10, 10, 11, -1});
    lt::check_both(bounds_kernel(fmt::format("bounds_{}", nki::dtype_name(dt))), lt::no_grid(),
                   {lt::make({1, 12}, dt, ids)}, want, "sequence_bounds");
  }
  }
  SUBCASE("int32 ids that differ only below fp32's precision are different segments") {
    const nki::Kernel k = bounds_kernel("bounds_big_ids");
    const std::vector<double> v = {16777217, 16777216, 16777216, 1};
    const nki::Tensor a = nki::Tensor::from_values(nki::sim::Device::default_device(), {1, 4}, DType::int32, v);
    lt::check_both(k, lt::no_grid(), {a}, std::vector<double>{0, 1, 1, 3, 1, 3, 3, 4}, "big ids");
  }
}

TEST_CASE("isa::sequence_bounds - random runs of ids, longer than 128, agree with the host") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 4; ++trial) {
    const std::int64_t n = 1 + static_cast<std::int64_t>(rng() % 300);
    std::vector<float> ids;
    while (static_cast<std::int64_t>(ids.size()) < n) {
      const auto id = static_cast<float>(rng() % 4);
      const auto len = 1 + rng() % 9;
      for (std::uint32_t i = 0; i < len && static_cast<std::int64_t>(ids.size()) < n; ++i) ids.push_back(id);
    }
    const DType dt = trial % 2 ? DType::fp32 : DType::int32;
    CAPTURE(trial);
    lt::check_both(bounds_kernel(fmt::format("bounds_random{}", trial)), lt::no_grid(), {lt::make({1, n}, dt, ids)},
                   host_bounds(ids), "random bounds");
  }
}

namespace {
const char* kFile = "tests/language/isa_nonzero_sequence_bounds_test.cpp";

template <class F>
std::string misuse(DType dt, F body) {
  const nki::Kernel k = nki::jit("index_misuse", [&](nl::tensor a) {
    auto out = nl::ndarray({8, 17}, DType::int32, nl::shared_hbm, "out");
    body(nl::load(a.all()), out);
    return out;
  });
  return test::user_error_of([&] { k(lt::make({8, 16}, dt, test::random_floats(128, 5))); });
}
}  // namespace

TEST_CASE("isa::nonzero_with_count / sequence_bounds - misuse names NKI's error") {
  int line = 0;
  const auto err = [&](const std::string& what) { return fmt::format("index_misuse ({}:{}): {}", kFile, line, what); };
  std::string e = misuse(DType::bf16, [&](nl::tile x, nl::tensor out) {
    auto buf = nl::ndarray({nl::par_dim(8), 17}, DType::int32, nl::sbuf, "buf");
    line = __LINE__ + 1;
    isa::nonzero_with_count(buf[nl::_, nl::_], x);
    nl::store(out.all(), buf);
  });
  CHECK(e == err("err_unsupported_dtype: isa::nonzero_with_count: src is bf16; it must be fp32 or int32"));
  e = misuse(DType::fp32, [&](nl::tile x, nl::tensor out) {
    auto buf = nl::ndarray({nl::par_dim(8), 17}, DType::fp32, nl::sbuf, "buf");
    line = __LINE__ + 1;
    isa::nonzero_with_count(buf[nl::_, nl::_], x);
    nl::store(out.all(), buf);
  });
  CHECK(e == err("err_unsupported_dtype: isa::nonzero_with_count: dst buf is fp32; it must be int32"));
  e = misuse(DType::fp32, [&](nl::tile x, nl::tensor out) {
    auto buf = nl::ndarray({nl::par_dim(8), 16}, DType::int32, nl::sbuf, "buf");
    line = __LINE__ + 1;
    isa::nonzero_with_count(buf.all(), x);
    nl::store(out[nl::_, nl::ds(0, 16)], buf);
  });
  CHECK(e == err("err_free_dim_mismatch: isa::nonzero_with_count: dst buf must hold one element more than src per "
                 "partition (17), got 16"));
  e = misuse(DType::fp32, [&](nl::tile x, nl::tensor out) {
    auto buf = nl::ndarray({nl::par_dim(4), 17}, DType::int32, nl::sbuf, "buf");
    line = __LINE__ + 1;
    isa::nonzero_with_count(buf.all(), x);
    nl::store(out[nl::ds(0, 4), nl::_], buf);
  });
  CHECK(e == err("err_num_partition_mismatch: isa::nonzero_with_count: dst buf has shape [4,17]; src has 8 partitions"));
  e = misuse(DType::fp32, [&](nl::tile x, nl::tensor out) {
    line = __LINE__ + 1;
    isa::nonzero_with_count(out.all(), x);
  });
  CHECK(e == err("err_unsupported_memory: isa::nonzero_with_count: dst is tensor out in shared_hbm; it must be in SBUF"));
  e = misuse(DType::fp32, [&](nl::tile x, nl::tensor out) {
    line = __LINE__ + 1;
    nl::store(out[nl::ds(0, 1), nl::ds(0, 16)], isa::sequence_bounds(x));
  });
  CHECK(e == err("err_invalid_shape: isa::sequence_bounds: segment_ids must be a [1, n] tile (one partition), got shape "
                 "[8,16]"));
  e = misuse(DType::bf16, [&](nl::tile x, nl::tensor out) {
    line = __LINE__ + 1;
    nl::store(out[nl::ds(0, 1), nl::ds(0, 16)], isa::sequence_bounds(x[nl::ds(0, 1), nl::_]));
  });
  CHECK(e == err("err_unsupported_dtype: isa::sequence_bounds: segment_ids is bf16; it must be fp32 or int32"));
}
