/** \file Loops: affine_range, sequential_range, static_range, nesting, and loops inside a multi-core grid. */
#include "lang_support.h"

namespace nl = nki::language;
using lt::rd;
using nki::DType;

namespace {

/** out = x * 2 + 1 over [n * 128, F] tiles, one affine_range iteration per 128 rows. */
nki::Kernel affine_rows() {
  return nki::jit("affine_rows", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    const std::int64_t f = a.shape()[1];
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(f)[nl::newaxis, nl::_];
    for (auto i : nl::affine_range(a.shape()[0] / 128)) {
      auto x = nl::load(a[i * 128 + ip, jf]);
      nl::store(out[i * 128 + ip, jf], x * 2.0f + 1.0f);
    }
    return out;
  });
}

}  // namespace

TEST_CASE("affine_range over row tiles matches the host for several shapes and dtypes") {
  const nki::Kernel k = affine_rows();
  for (DType dt : {DType::fp32, DType::bf16, DType::fp16}) {
    for (nki::Shape s : {nki::Shape{128, 16}, nki::Shape{384, 40}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const auto n = static_cast<std::size_t>(s[0] * s[1]);
      auto a = lt::make(s, dt, test::random_floats(n, 5));
      const auto av = a.to_floats();
      std::vector<double> want(n);
      for (std::size_t x = 0; x < n; ++x) want[x] = rd(rd(av[x] * 2.0f, dt) + 1.0f, dt);
      lt::check_both(k, lt::no_grid(), {a}, want, "affine_rows");
    }
  }
}

TEST_CASE("sequential_range carries an SBUF accumulator across iterations in order") {
  // acc (dtype of the input) = acc + x_i, rounded each iteration; out[i] holds the running sum after step i.
  const nki::Kernel k = nki::jit("running_sum", [](nl::tensor a) {
    const std::int64_t n = a.shape()[0] / 128, f = a.shape()[1];
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto acc = nl::zeros({128, f}, a.dtype(), nl::sbuf, "acc");
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(f)[nl::newaxis, nl::_];
    for (auto i : nl::sequential_range(n)) {
      auto x = nl::load(a[i * 128 + ip, jf]);
      acc[ip, jf] = nl::add(acc[ip, jf], x);
      nl::store(out[i * 128 + ip, jf], acc[ip, jf]);
    }
    return out;
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    for (std::int64_t n : {1, 4}) {
      const std::int64_t f = 24;
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(n);
      auto a = lt::make({n * 128, f}, dt, test::random_floats(static_cast<std::size_t>(n * 128 * f), 7));
      const auto av = a.to_floats();
      std::vector<double> want(av.size());
      for (std::int64_t p = 0; p < 128; ++p) {
        for (std::int64_t j = 0; j < f; ++j) {
          float acc = 0.0f;
          for (std::int64_t i = 0; i < n; ++i) {
            const auto x = static_cast<std::size_t>((i * 128 + p) * f + j);
            acc = rd(acc + av[x], dt);
            want[x] = acc;
          }
        }
      }
      lt::check_both(k, lt::no_grid(), {a}, want, "running_sum");
    }
  }
}

TEST_CASE("static_range unrolls with plain integers usable in indices and arithmetic") {
  const nki::Kernel k = nki::jit("static_unrolled", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(a.shape()[1])[nl::newaxis, nl::_];
    for (std::int64_t i : nl::static_range(a.shape()[0] / 128)) {
      auto x = nl::load(a[i * 128 + ip, jf]);
      nl::store(out[i * 128 + ip, jf], x * static_cast<float>(i + 1));  // iteration i scales by i + 1
    }
    return out;
  });
  for (DType dt : {DType::fp32, DType::fp16}) {
    CAPTURE(nki::dtype_name(dt));
    auto a = lt::make({384, 8}, dt, test::random_floats(384 * 8, 9));
    const auto av = a.to_floats();
    std::vector<double> want(av.size());
    for (std::size_t x = 0; x < av.size(); ++x) want[x] = rd(av[x] * static_cast<float>(x / (128 * 8) + 1), dt);
    lt::check_both(k, lt::no_grid(), {a}, want, "static_unrolled");
  }
}

TEST_CASE("affine_range loops nested two deep tile rows and columns") {
  // out[r, c] = a[r, c] - b[r, c] over [rows / 128] x [cols / 32] tiles of [128, 32].
  const nki::Kernel k = nki::jit("nested_tiles", [](nl::tensor a, nl::tensor b) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(32)[nl::newaxis, nl::_];
    for (auto i : nl::affine_range(a.shape()[0] / 128)) {
      for (auto j : nl::affine_range(a.shape()[1] / 32)) {
        auto x = nl::load(a[i * 128 + ip, j * 32 + jf]);
        auto y = nl::load(b[i * 128 + ip, j * 32 + jf]);
        nl::store(out[i * 128 + ip, j * 32 + jf], nl::subtract(x, y, {.dtype = nl::float32}));
      }
    }
    return out;
  });
  for (DType dt : {DType::bf16, DType::fp32}) {
    for (nki::Shape s : {nki::Shape{128, 32}, nki::Shape{256, 96}}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(nki::shape_str(s));
      const auto n = static_cast<std::size_t>(s[0] * s[1]);
      auto a = lt::make(s, dt, test::random_floats(n, 1));
      auto b = lt::make(s, dt, test::random_floats(n, 2));
      const auto av = a.to_floats(), bv = b.to_floats();
      std::vector<double> want(n);
      for (std::size_t x = 0; x < n; ++x) want[x] = av[x] - bv[x];
      lt::check_both(k, lt::no_grid(), {a, b}, want, "nested_tiles");
    }
  }
}

TEST_CASE("a sequential_range nested in an affine_range: per-tile column sums in a carried accumulator") {
  // For each row tile i (affine), acc[128, 1] = sum over column blocks j (sequential) of the block's row sums.
  const nki::Kernel k = nki::jit("nested_acc", [](nl::tensor a) {
    const std::int64_t tiles = a.shape()[0] / 128, blocks = a.shape()[1] / 16;
    auto out = nl::ndarray({a.shape()[0], 1}, nl::float32, nl::shared_hbm, "out");
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(16)[nl::newaxis, nl::_];
    for (auto i : nl::affine_range(tiles)) {
      auto acc = nl::zeros({128, 1}, nl::float32, nl::sbuf, "acc");
      for (auto j : nl::sequential_range(blocks)) {
        auto x = nl::load(a[i * 128 + ip, j * 16 + jf]);
        auto s = nl::sum(x, 1, {.dtype = nl::float32, .keepdims = true});
        acc[nl::_, nl::_] = acc[nl::_, nl::_] + s;
      }
      nl::store(out[i * 128 + ip, 0], acc[nl::_, nl::_]);
    }
    return out;
  });
  for (nki::Shape s : {nki::Shape{128, 16}, nki::Shape{256, 64}}) {
    CAPTURE(nki::shape_str(s));
    auto a = lt::make(s, DType::fp32, test::random_floats(static_cast<std::size_t>(s[0] * s[1]), 3));
    const auto av = a.to_floats();
    std::vector<double> want(static_cast<std::size_t>(s[0]));
    for (std::int64_t r = 0; r < s[0]; ++r) {
      float acc = 0.0f;
      for (std::int64_t j = 0; j < s[1] / 16; ++j) {
        float blk = 0.0f;
        for (std::int64_t c = 0; c < 16; ++c) blk = lt::fadd(blk, av[static_cast<std::size_t>(r * s[1] + j * 16 + c)]);
        acc = lt::fadd(acc, blk);
      }
      want[static_cast<std::size_t>(r)] = acc;
    }
    lt::check_both(k, lt::no_grid(), {a}, want, "nested_acc");
  }
}

TEST_CASE("grid with nc(2) and loops combined: each instance loops over its own row tiles") {
  // Instance pid handles rows [pid * n * 128, (pid + 1) * n * 128) in n row tiles; within a tile,
  // columns in blocks of 64 (nested affine loop). out = relu(a) * pid-independent scalar 0.5 + 3.
  const nki::Kernel k = nki::jit("grid_loops", [](nl::tensor a) {
    const std::int64_t per = a.shape()[0] / nl::num_programs(0) / 128;
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(64)[nl::newaxis, nl::_];
    auto base = nl::program_id(0) * (per * 128);
    for (auto i : nl::affine_range(per)) {
      for (auto j : nl::affine_range(a.shape()[1] / 64)) {
        auto x = nl::load(a[base + i * 128 + ip, j * 64 + jf]);
        nl::store(out[base + i * 128 + ip, j * 64 + jf], nl::relu(x) * 0.5f + 3.0f);
      }
    }
    return out;
  });
  for (DType dt : {DType::fp32, DType::bf16}) {
    for (std::int64_t per : {1, 2}) {
      CAPTURE(nki::dtype_name(dt));
      CAPTURE(per);
      const nki::Shape s{2 * per * 128, 128};
      const auto n = static_cast<std::size_t>(s[0] * s[1]);
      auto a = lt::make(s, dt, test::random_floats(n, 4));
      const auto av = a.to_floats();
      std::vector<double> want(n);
      for (std::size_t x = 0; x < n; ++x) {
        const float r = av[x] > 0.0f ? av[x] : 0.0f;
        want[x] = rd(rd(r * 0.5f, dt) + 3.0f, dt);
      }
      lt::check_both(k, nki::GridSpec{{nki::GridAxis(std::vector<nki::GridFactor>{{2, true}})}}, {a}, want,
                     "grid_loops nc(2)");
      lt::check_both(k, nki::GridSpec{{nki::GridAxis(2)}}, {a}, want, "grid_loops 2");
    }
  }
}

TEST_CASE("loop variables of two loops and a program id combine in one affine index") {
  // out[(pid * 2 + i) * 128 + p, j * 8 + f] = a[...] + (i * 10 + j): the offset comes from iota of the loop vars.
  const nki::Kernel k = nki::jit("loop_index_math", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(8)[nl::newaxis, nl::_];
    for (auto i : nl::affine_range(2)) {
      for (auto j : nl::affine_range(a.shape()[1] / 8)) {
        auto row = (nl::program_id(0) * 2 + i) * 128 + ip;
        auto off = nki::isa::iota(i * 10 + j + 0 * ip + 0 * jf, nl::float32);
        nl::store(out[row, j * 8 + jf], nl::load(a[row, j * 8 + jf]) + off);
      }
    }
    return out;
  });
  const nki::Shape s{512, 24};
  auto a = lt::make(s, DType::fp32, test::random_floats(512 * 24, 8));
  const auto av = a.to_floats();
  std::vector<double> want(av.size());
  for (std::int64_t r = 0; r < 512; ++r) {
    for (std::int64_t c = 0; c < 24; ++c) {
      const std::int64_t i = (r / 128) % 2, j = c / 8;
      want[static_cast<std::size_t>(r * 24 + c)] = av[static_cast<std::size_t>(r * 24 + c)] + static_cast<float>(i * 10 + j);
    }
  }
  lt::check_both(k, lt::grid1(2), {a}, want, "loop_index_math");
}

TEST_CASE("affine_range, sequential_range and static_range with start, stop and step walk Python's range") {
  // Row tiles of a [6 * 128, F] input, written in program order: range(1, 6, 2) = 1, 3, 5 with x * 2, then
  // range(4, -1, -2) = 4, 2, 0 with x * 3, then the static range(5, 1, -3) = 5, 2 with x * 5.
  const nki::Kernel k = nki::jit("stepped_ranges", [](nl::tensor a) {
    auto out = nl::zeros(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(a.shape()[1])[nl::newaxis, nl::_];
    for (auto t : nl::affine_range(1, 6, 2)) nl::store(out[t * 128 + ip, jf], nl::load(a[t * 128 + ip, jf]) * 2.0f);
    for (auto t : nl::sequential_range(4, -1, -2))
      nl::store(out[t * 128 + ip, jf], nl::load(a[t * 128 + ip, jf]) * 3.0f);
    for (std::int64_t t : nl::static_range(5, 1, -3))
      nl::store(out[t * 128 + ip, jf], nl::load(a[t * 128 + ip, jf]) * 5.0f);
    return out;
  });
  const std::int64_t f = 16;
  auto a = lt::make({6 * 128, f}, DType::fp32, test::random_floats(6 * 128 * f, 7));
  const auto av = a.to_floats();
  const float factor[6] = {3.0f, 2.0f, 5.0f, 2.0f, 3.0f, 5.0f};
  std::vector<double> want(av.size());
  for (std::size_t x = 0; x < av.size(); ++x) want[x] = av[x] * factor[x / (128 * f)];
  lt::check_both(k, lt::no_grid(), {a}, want, "stepped_ranges");
  std::vector<std::int64_t> visited;
  for (std::int64_t i : nl::static_range(2, 9, 3)) visited.push_back(i);
  CHECK(visited == std::vector<std::int64_t>{2, 5, 8});
  CHECK(std::ranges::distance(nl::static_range(-3)) == 0);
}
