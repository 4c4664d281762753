/** \file isa::quantize_mx: group scales and packed codes against a host quantizer, both executors, and misuse. */
#include "lang_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

namespace {

/** The largest unbiased exponent of the element format (NKI's E_max). */
int emax(DType packed) { return packed == DType::fp8_e5m2_x4 ? 15 : 8; }

/** Host: the code nearest to q among the non-negative codes 0..max_code of a format (ties to even), sign on top. */
std::uint32_t nearest(double q, float (*to_float)(std::uint8_t), int max_code) {
  const double a = std::fabs(q);
  int code = 0;
  double best = a;
  for (int c = 1; c <= max_code; ++c) {
    const double d = std::fabs(static_cast<double>(to_float(static_cast<std::uint8_t>(c))) - a);
    if (d < best || (d == best && (c & 1) == 0)) best = d, code = c;
  }
  return static_cast<std::uint32_t>(code | (std::signbit(q) ? 0x80 : 0));
}

struct HostMx {
  std::vector<double> words;   // [P, F/4] packed words
  std::vector<double> scales;  // [P/8, F/4] scale values 2^(code - 127), or codes
  std::vector<int> codes;
};

/** Host quantize_mx of src [P, F] (values as the tile holds them). */
HostMx host_quantize(const std::vector<double>& src, std::int64_t P, std::int64_t F, DType packed, DType scale_dtype) {
  const std::int64_t Fp = F / 4;
  HostMx h;
  h.words.assign(static_cast<std::size_t>(P * Fp), 0.0);
  for (std::int64_t g = 0; g < P / 8; ++g) {
    for (std::int64_t j = 0; j < Fp; ++j) {
      double amax = 0.0;
      bool special = false;
      for (std::int64_t p = 8 * g; p < 8 * g + 8; ++p) {
        for (std::int64_t i = 0; i < 4; ++i) {
          const double v = src[static_cast<std::size_t>(p * F + 4 * j + i)];
          special = special || !std::isfinite(v);
          amax = std::max(amax, std::fabs(v));
        }
      }
      int code = 0;
      if (special) code = 255;
      else if (amax > 0) code = std::clamp(std::ilogb(amax) - (emax(packed) - 1) + 127, 0, 254);
      h.codes.push_back(code);
      h.scales.push_back(scale_dtype == DType::uint8 ? code : code == 255 ? std::nan("") : std::ldexp(1.0, code - 127));
      for (std::int64_t p = 8 * g; p < 8 * g + 8; ++p) {
        std::uint32_t word = 0;
        for (int i = 0; i < 4; ++i) {
          const double v = src[static_cast<std::size_t>(p * F + 4 * j + i)];
          std::uint32_t c;
          if (code == 255) {
            c = packed == DType::fp8_e5m2_x4 ? 0x7e : 0x7f;  // the format's NaN
          } else {
            const double q = std::ldexp(v, 127 - code);
            c = packed == DType::fp8_e5m2_x4 ? nearest(q, nki::fp8_e5m2_bits_to_float, 0x7b)
                                             : nearest(q, nki::fp8_e4m3fn_bits_to_float, 0x7e);
          }
          word |= c << (8 * i);
        }
        h.words[static_cast<std::size_t>(p * Fp + j)] = word;
      }
    }
  }
  return h;
}

nki::Kernel quantize_kernel(DType packed, DType scale_dtype) {
  return nki::jit("quantize_mx", [=](nl::tensor a) {
    const std::int64_t P = a.shape()[0], F = a.shape()[1];
    auto data = nl::ndarray({P, F / 4}, packed, nl::shared_hbm, "data");
    auto scale = nl::ndarray({P / 8, F / 4}, scale_dtype, nl::shared_hbm, "scale");
    auto q = isa::quantize_mx(nl::load(a.all()), packed, {.scale_dtype = scale_dtype});
    CHECK(q.data.dtype() == packed);
    CHECK(q.scale.dtype() == scale_dtype);
    nl::store(data.all(), q.data);
    nl::store(scale.all(), q.scale);
    return std::make_tuple(data, scale);
  });
}

}  // namespace

TEST_CASE("isa::quantize_mx - fp8 e4m3fn and e5m2 codes and e8m0 scales match a host quantizer") {
  for (DType packed : {DType::fp8_e4m3fn_x4, DType::fp8_e5m2_x4}) {
    for (DType src_dtype : {DType::bf16, DType::fp16}) {
      CAPTURE(nki::dtype_name(packed));
      CAPTURE(nki::dtype_name(src_dtype));
      const std::int64_t P = 64, F = 16;
      // Groups of very different magnitudes, an all-zero group, ties and negatives.
      auto v = test::random_floats(static_cast<std::size_t>(P * F), 101, -1.0f, 1.0f);
      for (std::int64_t p = 0; p < P; ++p)
        for (std::int64_t f = 0; f < F; ++f) {
          float& x = v[static_cast<std::size_t>(p * F + f)];
          x = std::ldexp(x, static_cast<int>((p / 8) * 3 + f / 4) - 12);
          if (p < 8 && f < 4) x = 0.0f;
        }
      v[static_cast<std::size_t>(8 * F + 4)] = 3.0f;  // group (1, 1): its largest magnitude is 1.5 * 2^1
      auto a = lt::make({P, F}, src_dtype, v);
      const HostMx h = host_quantize(lt::values_of(a), P, F, packed, DType::fp8_e8m0fnu);
      CHECK(h.codes[0] == 0);  // the all-zero group: 2^-127
      lt::check_both(quantize_kernel(packed, DType::fp8_e8m0fnu), lt::no_grid(), {a}, {h.words, h.scales}, "quantize_mx");
    }
  }
}

TEST_CASE("isa::quantize_mx - uint8 scale codes, 128 partitions, and quantize then dequantize stays within half a step") {
  const std::int64_t P = 128, F = 8;
  auto v = test::random_floats(static_cast<std::size_t>(P * F), 102, -300.0f, 300.0f);
  auto a = lt::make({P, F}, DType::bf16, v);
  const auto src = lt::values_of(a);
  const HostMx h = host_quantize(src, P, F, DType::fp8_e4m3fn_x4, DType::uint8);
  const auto out = lt::check_both(quantize_kernel(DType::fp8_e4m3fn_x4, DType::uint8), lt::no_grid(), {a},
                                  {h.words, h.scales}, "quantize_mx_uint8");
  // Dequantized, each value is within half a step of the e4m3fn grid (3 mantissa bits) scaled by its group.
  const auto words = lt::values_of(out[0]), codes = lt::values_of(out[1]);
  for (std::int64_t p = 0; p < P; ++p)
    for (std::int64_t f = 0; f < F; ++f) {
      const auto w = static_cast<std::uint32_t>(words[static_cast<std::size_t>(p * 2 + f / 4)]);
      const int code = static_cast<int>(codes[static_cast<std::size_t>((p / 8) * 2 + f / 4)]);
      const double deq = std::ldexp(nki::fp8_e4m3fn_bits_to_float(static_cast<std::uint8_t>(w >> (8 * (f % 4)))), code - 127);
      const double x = src[static_cast<std::size_t>(p * F + f)];
      const double step = std::ldexp(1.0, std::max(std::ilogb(std::max(std::fabs(x), 1e-30)), code - 127 - 6) - 3);
      CHECK(std::fabs(deq - x) <= step / 2);
    }
}

TEST_CASE("isa::quantize_mx - a NaN or infinity makes its group's scale NaN") {
  const std::int64_t P = 32, F = 8;
  auto v = test::random_floats(static_cast<std::size_t>(P * F), 103, -2.0f, 2.0f);
  v[3] = std::numeric_limits<float>::infinity();  // group (0, 0)
  v[static_cast<std::size_t>(9 * F + 5)] = lt::qnan();  // group (1, 1)
  auto a = lt::make({P, F}, DType::fp16, v);
  const HostMx h = host_quantize(lt::values_of(a), P, F, DType::fp8_e5m2_x4, DType::fp8_e8m0fnu);
  CHECK(h.codes[0] == 255);
  CHECK(h.codes[3] == 255);
  lt::check_both(quantize_kernel(DType::fp8_e5m2_x4, DType::fp8_e8m0fnu), lt::no_grid(), {a}, {h.words, h.scales},
                 "quantize_mx_nan");
}

namespace {
const char* kFile = "tests/language/isa_quantize_mx_test.cpp";

template <class F>
std::string misuse(nki::Shape s, DType dt, F body) {
  const nki::Kernel k = nki::jit("quantize_misuse", [&](nl::tensor a) {
    auto out = nl::ndarray({1, 1}, nl::float32, nl::shared_hbm, "out");
    body(a);
    return out;
  });
  return test::user_error_of([&] { k(lt::make(s, dt, std::vector<float>(static_cast<std::size_t>(s[0] * s[1]), 1.0f))); });
}
}  // namespace

TEST_CASE("isa::quantize_mx - misuse names NKI's error") {
  int line = 0;
  auto expect = [&](const std::string& e, const std::string& rest) {
    CHECK(e == fmt::format("quantize_misuse ({}:{}): {}", kFile, line, rest));
  };
  std::string e = misuse({32, 8}, DType::fp32, [&](nl::tensor a) {
    line = __LINE__ + 1;
    isa::quantize_mx(nl::load(a.all()), nl::float8_e4m3fn_x4);
  });
  expect(e, "err_unsupported_dtype: isa::quantize_mx: src is fp32; it must be fp16 or bf16");
  e = misuse({32, 8}, DType::bf16, [&](nl::tensor a) {
    line = __LINE__ + 1;
    isa::quantize_mx(nl::load(a.all()), nl::float4_e2m1fn_x4);
  });
  expect(e, "err_unsupported_dtype: isa::quantize_mx: dst dtype fp4_e2m1fn_x4; it must be fp8_e5m2_x4 or fp8_e4m3fn_x4");
  e = misuse({32, 8}, DType::bf16, [&](nl::tensor a) {
    line = __LINE__ + 1;
    isa::quantize_mx(nl::load(a.all()), nl::float8_e5m2_x4, {.scale_dtype = nl::int8});
  });
  expect(e, "err_unsupported_dtype: isa::quantize_mx: scale dtype int8; it must be fp8_e8m0fnu or uint8");
  e = misuse({48, 8}, DType::bf16, [&](nl::tensor a) {
    line = __LINE__ + 1;
    isa::quantize_mx(nl::load(a.all()), nl::float8_e5m2_x4);
  });
  expect(e, "err_num_partition_exceed_arch_limit: isa::quantize_mx: src [48,8] has 48 partitions; MX data needs a "
            "multiple of 32, at most 128");
  e = misuse({32, 6}, DType::bf16, [&](nl::tensor a) {
    line = __LINE__ + 1;
    isa::quantize_mx(nl::load(a.all()), nl::float8_e5m2_x4);
  });
  expect(e, "err_invalid_shape: isa::quantize_mx: src [32,6] has 6 values per partition; it must be a multiple of 4 "
            "(4 per packed element)");
  e = misuse({32, 8}, DType::bf16, [&](nl::tensor a) {
    line = __LINE__ + 1;
    isa::quantize_mx(a.all(), nl::float8_e5m2_x4);
  });
  CHECK(e.find("err_unsupported_memory") != std::string::npos);
}
