/** \file tensor.reshape and tensor.view(dtype): HBM tensors over another tensor's storage, no data copied. */
#include <algorithm>
#include <cstring>

#include "lang_support.h"

namespace nl = nki::language;
using nki::DType;

namespace {

/** The bytes of `t` as elements of `dt` (a host reinterpretation: memcpy, as numpy's view). */
std::vector<double> bytes_as(const nki::Tensor& t, DType dt) {
  const int eb = nki::dtype_bytes(dt);
  const std::int64_t n = t.bytes() / eb;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = nki::load_element(t.data() + i * eb, dt);
  return v;
}

nki::LaunchOptions checked() {
  nki::LaunchOptions o{nki::Executor::reference, nullptr};
  o.checked = true;
  return o;
}

}  // namespace

TEST_CASE("tensor.reshape - an argument read and an output written through reshaped views, row-major") {
  // out = a + 1, both seen as [rows * cols / 4, 4]: the values land where the [rows, cols] layout has them.
  const nki::Kernel k = nki::jit("reshape_add", [](nl::tensor a) {
    const nki::Shape s = a.shape();
    auto out = nl::ndarray(s, a.dtype(), nl::shared_hbm, "out");
    const nki::Shape flat{s[0] * s[1] / 4, 4};
    auto in_view = a.reshape(flat);
    auto out_view = out.reshape(flat);
    nl::store(out_view.all(), nl::add(nl::load(in_view.all()), 1.0f));
    return out;
  });
  for (const auto& [rows, cols, dt] : {std::tuple{6, 8, DType::fp32}, std::tuple{16, 12, DType::bf16}, std::tuple{2, 64, DType::int32}}) {
    const nki::Shape s{rows, cols};
    const nki::Tensor a = lt::make(s, dt, test::random_floats(static_cast<std::size_t>(rows * cols), 31, -50, 50));
    std::vector<double> want = lt::values_of(a);
    for (double& w : want) w = nki::round_to_dtype(static_cast<double>(lt::fadd(static_cast<float>(w), 1.0f)), dt);
    lt::check_both(k, lt::no_grid(), {a}, want, fmt::format("reshape_add {}x{} {}", rows, cols, nki::dtype_name(dt)));
    const nki::LaunchResult r = k.launch(lt::no_grid()).with(checked()).run({a});
    lt::check_exact(r.outputs.at(0), want, "reshape_add checked");
  }
}

TEST_CASE("tensor.reshape - a returned view has the view's shape, each instance writing its rows through it") {
  // Instance i writes rows [2i, 2i + 2) of the [8, 6] output through a [4, 12] view: row i of the view.
  const nki::Kernel k = nki::jit("reshape_rows", [](nl::tensor a) {
    auto out = nl::ndarray({8, 6}, a.dtype(), nl::shared_hbm, "out");
    auto v = out.reshape({4, 12});
    auto row = nl::program_id(0) + nl::arange(1)[nl::_, nl::newaxis];
    auto col = nl::arange(12)[nl::newaxis, nl::_];
    nl::store(v[row, col], nl::multiply(nl::load(a.reshape({4, 12})[row, col]), 2.0f));
    return v;
  });
  const nki::Tensor a = lt::make({8, 6}, DType::fp32, test::random_floats(48, 32));
  std::vector<double> want = lt::values_of(a);
  for (double& w : want) w *= 2.0;
  const std::vector<nki::Tensor> got = lt::check_both(k, lt::grid1(4), {a}, want, "reshape_rows");
  CHECK(got.at(0).shape() == nki::Shape{4, 12});
  const nki::LaunchResult r = k.launch(lt::grid1(4)).with(checked()).run({a});
  lt::check_exact(r.outputs.at(0), want, "reshape_rows checked");
}

TEST_CASE("tensor.reshape - checked mode sees one storage: a write through the view and one of the tensor conflict") {
  // Instance p writes row p of out [2, 8], and through a [4, 4] view the other instance's row
  // (view rows 2(1 - p) and 2(1 - p) + 1). On one core instance 0 runs first: instance 1's
  // write of its own row meets instance 0's write through the view.
  static int line_view = 0, line_base = 0;
  const nki::Kernel k = nki::jit("reshape_conflict", [](nl::tensor a) {
    auto out = nl::ndarray({2, 8}, a.dtype(), nl::shared_hbm, "out");
    auto p = nl::program_id(0);
    auto row = p + nl::arange(1)[nl::_, nl::newaxis];
    auto col = nl::arange(8)[nl::newaxis, nl::_];
    line_base = __LINE__ + 1;
    nl::store(out[row, col], nl::load(a[row, col]));
    auto v = out.reshape({4, 4});
    auto vrow = 2 - 2 * p + nl::arange(2)[nl::_, nl::newaxis];
    auto vcol = nl::arange(4)[nl::newaxis, nl::_];
    line_view = __LINE__ + 1;
    nl::store(v[vrow, vcol], nl::load(a.reshape({4, 4})[vrow, vcol]));
    return out;
  });
  const nki::sim::Device one_core("trn2", 1);
  const nki::Tensor a = nki::Tensor::from_floats({2, 8}, DType::fp32, test::random_floats(16, 33), one_core);
  const std::string msg = test::user_error_of([&] { k.launch(lt::grid1(2)).with(checked()).run({a}); });
  const std::string file = "tests/language/tensor_views_test.cpp";
  CHECK(msg == fmt::format("reshape_conflict ({0}:{1}): err_instances_write_same_element: element [1,0] of tensor out "
                           "[2,8] is written by instance [0] ({0}:{2}) and by instance [1] ({0}:{1})",
                           file, line_base, line_view));
}

TEST_CASE("tensor.view - fp32 bytes read as uint8 (4x the last dimension) and uint8 bytes as int32, bit-exact") {
  // Expansion: NaN payloads, infinities, -0.0 and denormals are just bytes to a uint8 view.
  const nki::Kernel expand = nki::jit("view_bytes", [](nl::tensor a) {
    auto v = a.view(nl::uint8);
    auto out = nl::ndarray(v.shape(), nl::uint8, nl::shared_hbm, "out");
    nl::store(out.all(), nl::load(v.all()));
    return out;
  });
  nki::Tensor f({4, 8}, DType::fp32);
  std::vector<std::uint32_t> bits(32);
  const std::vector<float> r = test::random_floats(32, 34, -1e6f, 1e6f);
  for (std::size_t i = 0; i < bits.size(); ++i) std::memcpy(&bits[i], &r[i], 4);
  bits[0] = 0x7fc00001u, bits[1] = 0xffffffffu, bits[2] = 0x7f800001u, bits[3] = 0x80000000u, bits[4] = 0xff800000u,
  bits[5] = 0x00000001u;
  std::memcpy(f.data(), bits.data(), 4 * bits.size());
  const std::vector<nki::Tensor> got = lt::check_both(expand, lt::no_grid(), {f}, bytes_as(f, DType::uint8), "view fp32 as uint8");
  CHECK(got.at(0).shape() == nki::Shape{4, 32});
  CHECK(std::memcmp(got.at(0).data(), f.data(), 128) == 0);

  // Contraction: 4 bytes to an int32, negative values included; the result is the same bytes.
  const nki::Kernel contract = nki::jit("view_words", [](nl::tensor a) {
    auto v = a.view(nl::int32);
    auto out = nl::ndarray(v.shape(), nl::int32, nl::shared_hbm, "out");
    nl::store(out.all(), nl::load(v.all()));
    return out;
  });
  const nki::Tensor u = lt::make({3, 16}, DType::uint8, lt::random_ints(48, 35, 0, 255));
  const std::vector<double> words = bytes_as(u, DType::int32);
  CHECK(std::any_of(words.begin(), words.end(), [](double w) { return w < 0; }));
  const std::vector<nki::Tensor> w = lt::check_both(contract, lt::no_grid(), {u}, words, "view uint8 as int32");
  CHECK(w.at(0).shape() == nki::Shape{3, 4});
}

TEST_CASE("tensor.view - an int32 output written as bytes through a uint8 view, bf16 read as int16") {
  // Each instance writes one row's bytes; the int32 output holds them (negative words included).
  const nki::Kernel k = nki::jit("view_write", [](nl::tensor bytes, nl::tensor halves) {
    auto out = nl::ndarray({4, 4}, nl::int32, nl::shared_hbm, "out");
    auto raw = nl::ndarray(halves.shape(), nl::int16, nl::shared_hbm, "raw");
    auto row = nl::program_id(0) + nl::arange(1)[nl::_, nl::newaxis];
    auto col = nl::arange(16)[nl::newaxis, nl::_];
    nl::store(out.view(nl::uint8)[row, col], nl::load(bytes[row, col]));
    nl::store(raw[row, nl::arange(8)[nl::newaxis, nl::_]], nl::load(halves.view(nl::int16)[row, nl::arange(8)[nl::newaxis, nl::_]]));
    return std::make_tuple(out, raw);
  });
  const nki::Tensor b = lt::make({4, 16}, DType::uint8, lt::random_ints(64, 36, 0, 255));
  nki::Tensor h({4, 8}, DType::bf16);
  const std::vector<float> hv = test::random_floats(32, 37, -3, 3);
  for (std::size_t i = 0; i < hv.size(); ++i) nki::store_element(h.data() + 2 * i, DType::bf16, hv[i]);
  const std::uint16_t nan_bits = 0xffc1;
  std::memcpy(h.data(), &nan_bits, 2);
  const std::vector<std::vector<double>> want{bytes_as(b, DType::int32), bytes_as(h, DType::int16)};
  lt::check_both(k, lt::grid1(4), {b, h}, want, "view_write");
  const nki::LaunchResult r = k.launch(lt::grid1(4)).with(checked()).run({b, h});
  lt::check_exact(r.outputs.at(0), want[0], "view_write checked");
}

TEST_CASE("tensor.reshape and tensor.view misuse names NKI's error") {
  static int line = 0;
  const std::string where = "bad_view (tests/language/tensor_views_test.cpp:";
  const auto error_of = [&](auto body) {
    const nki::Kernel k = nki::jit(
        "bad_view",
        [body](nl::tensor a) {
          auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
          body(a);
          nl::store(out.all(), nl::load(a.all()));
          return out;
        },
        {"a"});
    return test::user_error_of([&] { k(nki::Tensor({4, 6}, DType::fp32)); });
  };
  std::string msg = error_of([](nl::tensor a) { line = __LINE__; a.reshape({5, 5}); });
  CHECK(msg ==
        fmt::format("{}{}): err_invalid_shape: tensor.reshape of tensor a [4,6] (24 elements) to [5,5] (25 elements): "
                    "the element counts differ",
                    where, line));
  msg = error_of([](nl::tensor a) { line = __LINE__; a.reshape({-1, 4}); });
  CHECK(msg ==
        fmt::format("{}{}): err_invalid_shape: tensor.reshape of tensor a [4,6] to [-1,4]: every dimension must be a "
                    "positive size",
                    where, line));
  msg = error_of([](nl::tensor) {
    auto s = nl::ndarray({4, 6}, nl::float32, nl::sbuf, "s");
    line = __LINE__ + 1;
    s.reshape({4, 2, 3});
  });
  CHECK(msg == fmt::format("{}{}): err_unsupported_memory: tensor.reshape of tensor s [4,6] in sbuf: only kernel "
                          "arguments, shared_hbm ndarrays and shared constants can be reinterpreted",
                          where, line));
  msg = error_of([](nl::tensor) {
    auto p = nl::ndarray({4, 6}, nl::float32, nl::private_hbm, "p");
    line = __LINE__ + 1;
    p.view(nl::int32);
  });
  CHECK(msg == fmt::format("{}{}): err_unsupported_memory: tensor.view of tensor p [4,6] in private_hbm: only kernel "
                          "arguments, shared_hbm ndarrays and shared constants can be reinterpreted",
                          where, line));
  msg = error_of([](nl::tensor a) {
    auto bytes = a.reshape({8, 3}).view(nl::uint8);  // [8, 12]
    line = __LINE__ + 1;
    bytes.view(nl::float8_e4m3).view(nl::int16).reshape({8, 2, 3}).view(nl::int32);
  });
  CHECK(msg == fmt::format("{}{}): err_invalid_shape: tensor.view of tensor a.reshape.view.view.view.reshape int16 "
                          "[8,2,3] as int32: the last dimension holds 6 bytes, not a multiple of int32's 4 bytes",
                          where, line));
}
