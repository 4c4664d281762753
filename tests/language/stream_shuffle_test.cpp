/** \file isa::nc_stream_shuffle: partitions moved within quadrants of 32, 255 keeping the destination, errors, cost. */
#include "lang_support.h"
#include "nki/simulator/cost_model.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {
std::vector<std::int64_t> test_mask() {
  std::vector<std::int64_t> m(32);
  for (std::int64_t i = 0; i < 32; ++i) m[static_cast<std::size_t>(i)] = (i * 7 + 3) % 32;  // a permutation
  m[5] = 255;
  m[30] = 255;
  m[9] = m[10];  // two partitions from one
  return m;
}
}  // namespace

TEST_CASE("isa::nc_stream_shuffle - each quadrant shuffled by the same mask, 255 keeps dst, SBUF and PSUM") {
  const nki::Kernel k = nki::jit("stream_shuffle", [](nl::tensor s, nl::tensor d) {
    auto o1 = nl::ndarray(d.shape(), d.dtype(), nl::shared_hbm, "o1");
    auto o2 = nl::ndarray({32, 6}, nl::float32, nl::shared_hbm, "o2");
    auto buf = nl::ndarray(d.shape(), d.dtype(), nl::sbuf, "buf");
    auto ps = nl::ndarray({32, 6}, nl::float32, nl::psum, "ps");
    buf.all() = nl::load(d.all());
    isa::nc_stream_shuffle(buf.all(), nl::load(s.all()), test_mask());
    nl::store(o1.all(), buf);
    ps.all() = nl::load(d[nl::ds(0, 32), nl::_]);
    isa::nc_stream_shuffle(ps.all(), nl::load(s[nl::ds(32, 32), nl::_]), test_mask());
    nl::store(o2.all(), nl::copy(ps.all()));
    return std::make_tuple(o1, o2);
  });
  const std::int64_t p = 96, f = 6;
  const std::vector<float> s = test::random_floats(static_cast<std::size_t>(p * f), 31);
  const std::vector<float> d = test::random_floats(static_cast<std::size_t>(p * f), 32);
  const std::vector<std::int64_t> m = test_mask();
  std::vector<double> w1(s.size()), w2(static_cast<std::size_t>(32 * f));
  for (std::int64_t i = 0; i < p; ++i) {
    const std::int64_t mi = m[static_cast<std::size_t>(i % 32)];
    for (std::int64_t j = 0; j < f; ++j) {
      const auto at = static_cast<std::size_t>(i * f + j);
      w1[at] = mi == 255 ? d[at] : s[static_cast<std::size_t>((i / 32 * 32 + mi) * f + j)];
      if (i < 32) w2[at] = mi == 255 ? d[at] : s[static_cast<std::size_t>((32 + mi) * f + j)];
    }
  }
  lt::check_both(k, lt::no_grid(), {lt::make({p, f}, DType::fp32, s), lt::make({p, f}, DType::fp32, d)}, {w1, w2},
                 "stream_shuffle");
}

namespace {
const char* kFile = "tests/language/stream_shuffle_test.cpp";

template <class F>
std::string misuse(F body) {
  const nki::Kernel k = nki::jit("shuffle_misuse", [&](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), nl::float32, nl::shared_hbm, "out");
    auto buf = nl::ndarray(a.shape(), nl::float32, nl::sbuf, "buf");
    buf.all() = nl::load(a.all());
    body(buf, nl::load(a.all()));
    nl::store(out.all(), buf);
    return out;
  });
  return test::user_error_of([&] { k(lt::make({8, 16}, DType::fp32, test::random_floats(128, 5))); });
}
}  // namespace

TEST_CASE("isa::nc_stream_shuffle - misuse names NKI's error") {
  int line = 0;
  std::vector<std::int64_t> ident(32);
  for (std::int64_t i = 0; i < 32; ++i) ident[static_cast<std::size_t>(i)] = i;
  std::string e = misuse([&](nl::tensor buf, nl::tile x) {
    line = __LINE__ + 1;
    isa::nc_stream_shuffle(buf.all(), x, std::vector<std::int64_t>(31, 0));
  });
  CHECK(e == fmt::format("shuffle_misuse ({}:{}): err_invalid_shape: isa::nc_stream_shuffle: shuffle_mask has 31 entries; "
                         "it has one per partition of a quadrant, 32", kFile, line));
  e = misuse([&](nl::tensor buf, nl::tile x) {
    std::vector<std::int64_t> m = ident;
    m[3] = 40;
    line = __LINE__ + 1;
    isa::nc_stream_shuffle(buf.all(), x, m);
  });
  CHECK(e == fmt::format("shuffle_misuse ({}:{}): err_invalid_shuffle_mask: isa::nc_stream_shuffle: shuffle_mask[3] is 40; "
                         "an entry is a partition 0-31 of the quadrant, or 255 to keep", kFile, line));
  e = misuse([&](nl::tensor buf, nl::tile x) {
    line = __LINE__ + 1;
    isa::nc_stream_shuffle(buf.all(), nl::copy(x, {.dtype = nl::bfloat16}), ident);
  });
  CHECK(e == fmt::format("shuffle_misuse ({}:{}): err_unsupported_dtype: isa::nc_stream_shuffle: src is bf16 and dst fp32; "
                         "the shuffle does not convert", kFile, line));
  e = misuse([&](nl::tensor buf, nl::tile x) {
    line = __LINE__ + 1;
    isa::nc_stream_shuffle(buf.all(), x[nl::_, nl::ds(0, 8)], ident);
  });
  CHECK(e == fmt::format("shuffle_misuse ({}:{}): err_free_dim_mismatch: isa::nc_stream_shuffle: src [8,8] and dst [8,16] "
                         "differ in elements per partition", kFile, line));
  e = misuse([&](nl::tensor buf, nl::tile x) {
    std::vector<std::int64_t> m = ident;
    m[2] = 9;
    line = __LINE__ + 1;
    isa::nc_stream_shuffle(buf.all(), x, m);
  });
  CHECK(e == fmt::format("shuffle_misuse ({}:{}): err_tensor_access_out_of_bound: isa::nc_stream_shuffle: dst partition 2 "
                         "takes src partition 9 (shuffle_mask[2] = 9), but src has 8 partitions", kFile, line));
}

TEST_CASE("isa::nc_stream_shuffle cost - one Vector pass, written into the destination") {
  const nki::Kernel k = nki::jit("shuffle_cost", [](nl::tensor s) {
    auto o = nl::ndarray(s.shape(), s.dtype(), nl::shared_hbm, "o");
    auto buf = nl::ndarray(s.shape(), s.dtype(), nl::sbuf, "buf");
    std::vector<std::int64_t> m(32);
    for (std::int64_t i = 0; i < 32; ++i) m[static_cast<std::size_t>(i)] = 31 - i;
    isa::nc_stream_shuffle(buf.all(), nl::load(s.all()), m);
    nl::store(o.all(), buf);
    return o;
  });
  const auto ir = k.trace({{128, 256}}, {DType::fp32}, nki::GridSpec{})->ir;
  const nki::sim::ProfileReport r = nki::sim::estimate(*ir, {{0, {{}}}}, nki::sim::target_spec("trn2"), false);
  const auto& eng = r.cores.at(0).engines;
  CHECK(eng[static_cast<std::size_t>(nki::sim::Engine::vector)].instructions == 1);  // the shuffle; its store fused
  CHECK(eng[static_cast<std::size_t>(nki::sim::Engine::vector)].busy_us ==
        doctest::Approx(static_cast<double>(nki::sim::vector_cycles(256, 1) + nki::sim::kAccessBubbleCycles) /
                        (nki::sim::target_spec("trn2").vector_ghz * 1e3)));
}
