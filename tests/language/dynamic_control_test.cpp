/** \file Registers, dynamic_range, fori_loop, while_loop and no_reorder: trip counts read at run time, in both executors. */
#include <sstream>

#include "lang_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

/** A [1, 1] int32 input holding `v`. */
nki::Tensor scalar_i32(std::int64_t v) { return lt::make({1, 1}, DType::int32, {static_cast<float>(v)}); }

/** Python's len(range(lo, hi, step)) for step > 0. */
std::int64_t trips(std::int64_t lo, std::int64_t hi, std::int64_t step) { return hi <= lo ? 0 : (hi - lo + step - 1) / step; }

}  // namespace

TEST_CASE("isa::register_alloc / register_move / register_load / register_store - values, copies and wrapping") {
  // r0 = 7; r1 = x (int32); r2 = r1; r3 = y (uint32 0xFFFFFF80, wraps to -128); r4 = 300.
  const nki::Kernel k = nki::jit("registers", [](nl::tensor x, nl::tensor y) {
    auto o1 = nl::ndarray({1, 1}, nl::int32, nl::shared_hbm, "o1");
    auto o2 = nl::ndarray({1, 1}, nl::int32, nl::shared_hbm, "o2");
    auto o3 = nl::ndarray({1, 1}, nl::int8, nl::shared_hbm, "o3");
    auto o4 = nl::ndarray({1, 1}, nl::uint8, nl::shared_hbm, "o4");
    auto o5 = nl::ndarray({1, 1}, nl::int32, nl::shared_hbm, "o5");
    auto o6 = nl::ndarray({1}, nl::int32, nl::shared_hbm, "o6");
    auto r0 = isa::register_alloc(7);
    auto r1 = isa::register_alloc();
    isa::register_load(r1, x);
    auto r2 = isa::register_alloc();
    isa::register_move(r2, r1);
    isa::register_move(r1, 5);  // r2 keeps the value it copied
    auto r3 = isa::register_alloc();
    auto sb = nl::ndarray({1, 1}, nl::uint32, nl::sbuf, "sb");
    sb.all() = nl::load(y.all());
    isa::register_load(r3, sb);  // from SBUF
    auto r4 = isa::register_alloc(300);
    isa::register_store(o1, r2);
    isa::register_store(o2, r0);
    isa::register_store(o3, r3);  // -128 into int8
    isa::register_store(o4, r4);  // 300 into uint8: its low byte, 44
    // An SBUF element written by a register, then read back by a load.
    auto back = nl::ndarray({1, 1}, nl::int32, nl::sbuf, "back");
    isa::register_store(back, r1);
    nl::store(o5.all(), back.all());
    auto fresh = isa::register_alloc();  // never written: 0
    isa::register_store(o6, fresh);
    return std::make_tuple(o1, o2, o3, o4, o5, o6);
  });
  const nki::Tensor x = scalar_i32(-123456);
  nki::Tensor y(nki::Shape{1, 1}, DType::uint32);
  const std::uint32_t big = 0xFFFFFF80u;
  std::memcpy(y.data(), &big, 4);
  const std::vector<std::vector<double>> want = {{-123456}, {7}, {-128}, {44}, {5}, {0}};
  lt::check_both(k, lt::no_grid(), {x, y}, want, "registers");
  // Checked mode: a register_store defines the SBUF element the later read sees, and writes the outputs.
  nki::LaunchOptions checked{nki::Executor::reference, nullptr};
  checked.checked = true;
  const nki::LaunchResult r = k.launch(lt::no_grid()).with(checked).run({x, y});
  for (std::size_t o = 0; o < want.size(); ++o) lt::check_exact(r.outputs.at(o), want[o], "registers checked");
}

TEST_CASE("nl::fori_loop - the trip count from a register, the induction register stored each iteration") {
  // acc += x once per iteration of range(2, n, 3); `last` holds the last induction value (-1 if none ran).
  const nki::Kernel k = nki::jit("fori", [](nl::tensor n, nl::tensor x) {
    auto out = nl::ndarray(x.shape(), nl::float32, nl::shared_hbm, "out");
    auto last_out = nl::ndarray({1, 1}, nl::int32, nl::shared_hbm, "last_out");
    auto acc = nl::zeros(x.shape(), nl::float32, nl::sbuf, "acc");
    auto last = nl::full({1, 1}, -1, nl::int32, nl::sbuf, "last");
    auto xt = nl::load(x.all());
    auto hi = isa::register_alloc();
    isa::register_load(hi, n);
    nl::fori_loop(2, hi, [&](isa::VirtualRegister i) {
      acc.all() = nl::add(acc.all(), xt);
      isa::register_store(last, i);
      isa::register_move(i, 1000);  // writing the induction register does not change the loop
    }, 3);
    nl::store(out.all(), acc);
    nl::store(last_out.all(), last.all());
    return std::make_tuple(out, last_out);
  });
  const std::vector<float> x = lt::random_ints(128 * 32, 11, -8, 8);
  for (std::int64_t n : {0, 2, 3, 5, 11, -4}) {
    CAPTURE(n);
    const std::int64_t t = trips(2, n, 3);
    std::vector<double> want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = static_cast<double>(t) * x[i] + 0.0;  // acc starts at +0
    lt::check_both(k, lt::no_grid(), {scalar_i32(n), lt::make({128, 32}, DType::fp32, x)},
                   std::vector<std::vector<double>>{want, {t == 0 ? -1.0 : static_cast<double>(2 + 3 * (t - 1))}}, "fori");
  }
}

TEST_CASE("nl::dynamic_range - register bounds per iteration of a sequential loop, nested dynamic loops") {
  // For row j of b: for i in dynamic_range(b[j, 0], b[j, 1]): for q in dynamic_range(i): acc[j] += 1.
  const nki::Kernel k = nki::jit("dyn_range", [](nl::tensor b) {
    const std::int64_t rows = b.shape()[0];
    auto out = nl::ndarray({rows, 4}, nl::float32, nl::shared_hbm, "out");
    auto acc = nl::zeros({1, 4}, nl::float32, nl::sbuf, "acc");
    for (auto j : nl::sequential_range(rows)) {
      acc.all() = nl::multiply(acc.all(), 0.0);
      auto lo = isa::register_alloc();
      auto hi = isa::register_alloc();
      isa::register_load(lo, b[nl::ds(j, 1), nl::ds(0, 1)]);
      isa::register_load(hi, b[nl::ds(j, 1), nl::ds(1, 1)]);
      for (auto i : nl::dynamic_range(lo, hi)) {
        for (auto q : nl::dynamic_range(i)) {
          (void)q;
          acc.all() = nl::add(acc.all(), 1.0);
        }
      }
      nl::store(out[nl::ds(j, 1), nl::ds(0, 4)], acc.all());
    }
    return out;
  });
  const std::vector<float> bounds = {0, 4, 3, 3, 2, 6, -5, 3, 7, 2};
  std::vector<double> want;
  for (std::size_t j = 0; j < 5; ++j) {
    double s = 0;
    for (auto i = static_cast<std::int64_t>(bounds[2 * j]); i < static_cast<std::int64_t>(bounds[2 * j + 1]); ++i)
      s += static_cast<double>(std::max<std::int64_t>(i, 0));
    for (int c = 0; c < 4; ++c) want.push_back(s);
  }
  const nki::Tensor b = lt::make({5, 2}, DType::int32, bounds);
  lt::check_both(k, lt::no_grid(), {b}, want, "dyn_range");
  // The outer loop unrolled by 2 in the compiled code (two copies, then a tail): the register
  // loads of each copy read their own row; and checked mode sees no misuse.
  nki::LaunchOptions unrolled{nki::Executor::halide, nullptr};
  unrolled.layer_unroll_factor = 2;
  lt::check_exact(k.launch(lt::no_grid()).with(unrolled).run({b}).outputs.at(0), want, "dyn_range unrolled");
  nki::LaunchOptions checked{nki::Executor::reference, nullptr};
  checked.checked = true;
  lt::check_exact(k.launch(lt::no_grid()).with(checked).run({b}).outputs.at(0), want, "dyn_range checked");
}

TEST_CASE("nl::while_loop - a countdown in SBUF drives the condition, init 0 never runs the body") {
  // cnt = c; while cnt != 0: acc += x; seen = r; cnt -= 1; r = cnt.
  const nki::Kernel k = nki::jit("while", [](nl::tensor c, nl::tensor x) {
    auto out = nl::ndarray(x.shape(), nl::float32, nl::shared_hbm, "out");
    auto seen_out = nl::ndarray({1, 1}, nl::int32, nl::shared_hbm, "seen_out");
    auto init_out = nl::ndarray({1, 1}, nl::int32, nl::shared_hbm, "init_out");
    auto acc = nl::zeros(x.shape(), nl::float32, nl::sbuf, "acc");
    auto seen = nl::full({1, 1}, -7, nl::int32, nl::sbuf, "seen");
    auto cnt = nl::ndarray({1, 1}, nl::int32, nl::sbuf, "cnt");
    cnt.all() = nl::load(c.all());
    auto xt = nl::load(x.all());
    auto r = isa::register_alloc();
    isa::register_load(r, cnt);
    nl::while_loop(r, [&](isa::VirtualRegister v) {
      acc.all() = nl::add(acc.all(), xt);
      isa::register_store(seen, v);
      cnt.all() = nl::subtract(cnt.all(), 1);
      auto next = isa::register_alloc();
      isa::register_load(next, cnt);
      return next;
    });
    nl::store(out.all(), acc);
    nl::store(seen_out.all(), seen.all());
    isa::register_store(init_out, r);  // the loop leaves its init register as it was
    return std::make_tuple(out, seen_out, init_out);
  });
  const std::vector<float> x = lt::random_ints(64 * 16, 12, -5, 5);
  for (std::int64_t c : {0, 1, 6}) {
    CAPTURE(c);
    std::vector<double> want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = static_cast<double>(c) * x[i] + 0.0;  // acc starts at +0
    lt::check_both(k, lt::no_grid(), {scalar_i32(c), lt::make({64, 16}, DType::fp32, x)},
                   std::vector<std::vector<double>>{want, {c == 0 ? -7.0 : 1.0}, {static_cast<double>(c)}}, "while");
  }
}

TEST_CASE("nl::while_loop - a condition that never becomes 0 stops at the iteration limit") {
  const nki::Kernel k = nki::jit("forever", [](nl::tensor x) {
    auto out = nl::ndarray({1, 1}, nl::int32, nl::shared_hbm, "out");
    auto one = isa::register_alloc(1);
    nl::while_loop(one, [&](isa::VirtualRegister v) { return v; });
    isa::register_store(out, one);
    (void)x;
    return out;
  });
  for (nki::Executor ex : lt::executors) {
    const std::string e = test::user_error_of([&] { (void)lt::run_on(k, lt::no_grid(), ex, {scalar_i32(0)}); });
    CHECK_MESSAGE(e.find("err_while_loop_limit") != std::string::npos, e);
    CHECK_MESSAGE(e.find("1048576 iterations") != std::string::npos, e);
  }
}

TEST_CASE("nl::fori_loop - randomized trip counts read per instance from input data") {
  constexpr std::int64_t grid = 8, f = 24;
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    const std::int64_t step = std::uniform_int_distribution<int>(1, 3)(rng);
    std::vector<float> bounds(static_cast<std::size_t>(grid * 2));
    for (float& b : bounds) b = static_cast<float>(std::uniform_int_distribution<int>(-3, 12)(rng));
    const nki::Kernel k = nki::jit("fori_random", [step](nl::tensor b, nl::tensor x) {
      auto out = nl::ndarray(x.shape(), nl::float32, nl::shared_hbm, "out");
      auto last = nl::ndarray({x.shape()[0], 1}, nl::int32, nl::shared_hbm, "last");
      auto pid = nl::program_id(0);
      auto acc = nl::zeros({1, x.shape()[1]}, nl::float32, nl::sbuf, "acc");
      auto xt = nl::load(x[nl::ds(pid, 1), nl::ds(0, x.shape()[1])]);
      auto lo = isa::register_alloc();
      auto hi = isa::register_alloc();
      isa::register_load(lo, b[nl::ds(pid, 1), nl::ds(0, 1)]);
      isa::register_load(hi, b[nl::ds(pid, 1), nl::ds(1, 1)]);
      auto mark = isa::register_alloc(-99);
      nl::fori_loop(lo, hi, [&](isa::VirtualRegister i) {
        acc.all() = nl::add(acc.all(), xt);
        isa::register_move(mark, i);
      }, step);
      nl::store(out[nl::ds(pid, 1), nl::ds(0, x.shape()[1])], acc.all());
      isa::register_store(last[nl::ds(pid, 1), nl::ds(0, 1)], mark);
      return std::make_tuple(out, last);
    });
    const std::vector<float> x = lt::random_ints(static_cast<std::size_t>(grid * f), seed + 100, -9, 9);
    std::vector<double> want(x.size()), want_last(static_cast<std::size_t>(grid));
    for (std::int64_t g = 0; g < grid; ++g) {
      const auto lo = static_cast<std::int64_t>(bounds[static_cast<std::size_t>(2 * g)]);
      const auto hi = static_cast<std::int64_t>(bounds[static_cast<std::size_t>(2 * g + 1)]);
      const std::int64_t t = trips(lo, hi, step);
      for (std::int64_t q = 0; q < f; ++q)
        want[static_cast<std::size_t>(g * f + q)] = static_cast<double>(t) * x[static_cast<std::size_t>(g * f + q)] + 0.0;
      want_last[static_cast<std::size_t>(g)] = t == 0 ? -99.0 : static_cast<double>(lo + (t - 1) * step);
    }
    CAPTURE(seed);
    lt::check_both(k, lt::grid1(grid), {lt::make({grid, 2}, DType::int32, bounds), lt::make({grid, f}, DType::fp32, x)},
                   std::vector<std::vector<double>>{want, want_last}, "fori_random");
  }
}

TEST_CASE("nl::no_reorder - a block in program order gives the results of the same kernel without it") {
  auto body = [](nl::tensor x, bool block) {
    auto out = nl::ndarray(x.shape(), nl::float32, nl::shared_hbm, "out");
    auto run = [&] {
      auto a = nl::load(x.all());
      auto b = nl::multiply(a, 2.0);
      auto c = nl::add(a, b);
      for (auto i : nl::affine_range(1)) {  // static loops are allowed inside
        (void)i;
        nl::store(out.all(), nl::subtract(c, 1.0));
      }
    };
    if (block) {
      nl::no_reorder scope;
      run();
    } else {
      run();
    }
    return out;
  };
  const nki::Kernel with = nki::jit("with_block", [&](nl::tensor x) { return body(x, true); });
  const nki::Kernel lambda = nki::jit("with_lambda", [](nl::tensor x) {
    auto out = nl::ndarray(x.shape(), nl::float32, nl::shared_hbm, "out");
    nl::no_reorder([&] { nl::store(out.all(), nl::subtract(nl::add(nl::load(x.all()), nl::multiply(nl::load(x.all()), 2.0)), 1.0)); });
    return out;
  });
  const nki::Kernel without = nki::jit("without_block", [&](nl::tensor x) { return body(x, false); });
  const std::vector<float> x = lt::random_ints(32 * 8, 13, -20, 20);
  std::vector<double> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = 3.0 * x[i] - 1.0;
  for (const nki::Kernel* k : {&with, &lambda, &without})
    lt::check_both(*k, lt::no_grid(), {lt::make({32, 8}, DType::fp32, x)}, want, "no_reorder");
}

namespace {
template <class F>
std::string misuse(F body) {
  const nki::Kernel k = nki::jit("dyn_misuse", [&](nl::tensor a, nl::tensor f) {
    auto out = nl::ndarray({1, 1}, nl::int32, nl::shared_hbm, "out");
    body(a, f, out);
    return out;
  });
  return test::user_error_of([&] { k(lt::make({2, 1}, DType::int32, {1, 2}), lt::make({1, 1}, DType::fp32, {1})); });
}
void expect(const std::string& e, const char* name, const char* detail) {
  CHECK_MESSAGE(e.find(name) != std::string::npos, e);
  CHECK_MESSAGE(e.find(detail) != std::string::npos, e);
}
}  // namespace

TEST_CASE("isa::register_load / nl::fori_loop / nl::dynamic_range - misuse names the error") {
  auto r = [] { return isa::register_alloc(); };
  expect(misuse([&](nl::tensor a, nl::tensor, nl::tensor) { isa::register_load(r(), a); }), "err_register_tensor_shape",
         "tensor in0 [2,1] has 2 elements");
  expect(misuse([&](nl::tensor, nl::tensor f, nl::tensor) { isa::register_load(r(), f); }), "err_register_dtype",
         "tensor in1 is fp32");
  expect(misuse([&](nl::tensor, nl::tensor f, nl::tensor) { isa::register_store(f, r()); }), "err_register_dtype",
         "isa::register_store");
  expect(misuse([&](nl::tensor a, nl::tensor, nl::tensor o) {
           isa::register_store(o, r());
           isa::register_store(a, r());
         }),
         "err_register_tensor_shape", "isa::register_store");
  expect(misuse([&](nl::tensor, nl::tensor, nl::tensor o) {
           auto p = nl::zeros({1, 1}, nl::float32, nl::psum);
           isa::register_load(r(), p);
           isa::register_store(o, r());
         }),
         "err_register_memory", "psum");
  expect(misuse([&](nl::tensor, nl::tensor, nl::tensor o) {
           isa::register_store(o, r());
           nl::fori_loop(0, 4, [](isa::VirtualRegister) {}, 0);
         }),
         "err_invalid_loop_range", "the step is 0");
  expect(misuse([&](nl::tensor, nl::tensor, nl::tensor o) {
           isa::register_store(o, r());
           for (auto i : nl::dynamic_range(0, r(), -1)) (void)i;
         }),
         "err_invalid_loop_range", "the step is -1");
  expect(misuse([&](nl::tensor, nl::tensor, nl::tensor o) {
           for (auto i : nl::affine_range(4)) {
             (void)i;
             isa::register_store(o, r());
           }
         }),
         "err_unexpected_output_dependencies", "the write does not depend on the loop variable");
  expect(misuse([&](nl::tensor, nl::tensor, nl::tensor) { (void)isa::register_alloc(std::int64_t{1} << 40); }),
         "err_register_value_out_of_range", "1099511627776 does not fit");
  expect(misuse([&](nl::tensor, nl::tensor, nl::tensor o) {
           isa::register_store(o, r());
           nl::no_reorder scope;
           nl::while_loop(r(), [](isa::VirtualRegister v) { return v; });
         }),
         "err_dynamic_loop_in_no_reorder", "nl::while_loop");
}

TEST_CASE("nl::device_print - one line per call and instance, in instance order, the same from both executors") {
  // Each of 4 instances prints its row of x (int32 [1, 3]) on two iterations, then a bf16 tile.
  const nki::Kernel k = nki::jit("printing", [](nl::tensor x) {
    auto out = nl::ndarray({1, 1}, nl::int32, nl::shared_hbm, "out");
    auto pid = nl::program_id(0);
    for (auto i : nl::sequential_range(2)) {
      (void)i;
      nl::device_print("row", x[nl::ds(pid, 1), nl::ds(0, 3)]);
    }
    auto h = nl::multiply(nl::load(x[nl::ds(pid, 1), nl::ds(0, 2)]), 0.5, {.dtype = nl::bfloat16});
    nl::device_print("half", h);
    auto sb = nl::ndarray({1, 2}, nl::int32, nl::sbuf, "sb");
    sb.all() = nl::load(x[nl::ds(pid, 1), nl::ds(1, 2)]);
    nl::device_print("sbuf", sb);
    isa::register_store(out, isa::register_alloc(1));
    return out;
  });
  const std::vector<float> x = {1, -2, 3, 40, 50, 60, -7, 0, 9, 10, 11, -12};
  std::string want;
  for (int g = 0; g < 4; ++g) {
    const auto v = [&](int q) { return static_cast<int>(x[static_cast<std::size_t>(g * 3 + q)]); };
    const std::string row = fmt::format("row [{}] int32[1,3]: {} {} {}\n", g, v(0), v(1), v(2));
    want += row + row + fmt::format("half [{}] bf16[1,2]: {} {}\n", g, v(0) * 0.5, v(1) * 0.5) +
            fmt::format("sbuf [{}] int32[1,2]: {} {}\n", g, v(1), v(2));
  }
  for (nki::Executor ex : lt::executors) {
    // Two cores: the lines still come in instance order, the cores on threads of their own or one
    // after the other on the calling thread (automatic: threads first, then as the launch before found).
    for (nki::CoreThreads how : {nki::CoreThreads::automatic, nki::CoreThreads::automatic, nki::CoreThreads::automatic,
                                 nki::CoreThreads::threads, nki::CoreThreads::caller}) {
      std::ostringstream os;
      nki::LaunchOptions o{ex, nullptr};
      o.unannotated_cores = 2;
      o.device_print = &os;
      o.core_threads = how;
      (void)k.launch(lt::grid1(4)).with(o).run({lt::make({4, 3}, DType::int32, x)});
      CHECK(os.str() == want);
    }
  }
}
