/**
 * \file nl.atomic_rmw's exact sums. Each updated element keeps a fixed-point sum of its fp32
 * addends wide enough to hold any of them exactly (LSB 2^-149, the smallest fp32 subnormal;
 * 320 bits: 2^128 with 40 bits of headroom), so addition is associative and the cores' order
 * does not matter.
 */
#include "core/atomic_add.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>

namespace nki {

namespace {

constexpr int kLimbs = 5;
constexpr int kLsbExponent = -149;

/** A two's complement fixed-point number, value = bits * 2^kLsbExponent, plus the non-finite addends seen. */
struct ExactSum {
  std::array<std::uint64_t, kLimbs> bits{};
  bool pos_inf = false, neg_inf = false, nan = false;

  void add(float x) {
    if (std::isnan(x)) nan = true;
    if (std::isinf(x)) (x > 0 ? pos_inf : neg_inf) = true;
    if (!std::isfinite(x) || x == 0.0f) return;
    int exp = 0;
    const double m = std::frexp(static_cast<double>(x), &exp);  // |m| in [0.5, 1): x = m * 2^exp
    const auto mant = static_cast<std::uint64_t>(std::ldexp(std::fabs(m), 24));  // 24 significant bits
    std::uint64_t mant_bits = mant;
    int shift = exp - 24 - kLsbExponent;  // x = mant * 2^(exp - 24)
    if (shift < 0) {  // a subnormal: its low bits are zeros
      mant_bits >>= -shift;
      shift = 0;
    }
    std::array<std::uint64_t, kLimbs> term{};
    const int limb = shift / 64, off = shift % 64;
    term[static_cast<std::size_t>(limb)] = mant_bits << off;
    if (off > 40 && limb + 1 < kLimbs) term[static_cast<std::size_t>(limb + 1)] = mant_bits >> (64 - off);
    if (x < 0) negate(term);
    std::uint64_t carry = 0;
    for (std::size_t i = 0; i < kLimbs; ++i) {
      const std::uint64_t a = bits[i], b = term[i];
      const std::uint64_t s = a + b;
      const std::uint64_t c1 = s < a ? 1 : 0;
      const std::uint64_t r = s + carry;
      carry = c1 + (r < s ? 1 : 0);
      bits[i] = r;
    }
  }

  static void negate(std::array<std::uint64_t, kLimbs>& v) {
    std::uint64_t carry = 1;
    for (std::uint64_t& limb : v) {
      limb = ~limb + carry;
      carry = carry != 0 && limb == 0 ? 1 : 0;
    }
  }

  /** The sum rounded to double by round-to-odd (so a later rounding to fp32 is the correct one). */
  double value() const {
    if (nan || (pos_inf && neg_inf)) return std::nan("");
    if (pos_inf) return INFINITY;
    if (neg_inf) return -INFINITY;
    std::array<std::uint64_t, kLimbs> mag = bits;
    const bool negative = (mag[kLimbs - 1] >> 63) != 0;
    if (negative) negate(mag);
    int top = -1;  // the highest set bit
    for (int i = kLimbs - 1; i >= 0 && top < 0; --i)
      if (mag[static_cast<std::size_t>(i)] != 0) top = i * 64 + 63 - std::countl_zero(mag[static_cast<std::size_t>(i)]);
    if (top < 0) return 0.0;
    auto bit = [&](int b) { return (mag[static_cast<std::size_t>(b / 64)] >> (b % 64)) & 1U; };
    const int low = top >= 52 ? top - 52 : 0;  // the 53 bits kept: [low, top]
    std::uint64_t kept = 0;
    for (int b = top; b >= low; --b) kept = (kept << 1) | bit(b);
    bool sticky = false;
    for (int b = low - 1; b >= 0 && !sticky; --b) sticky = bit(b) != 0;
    if (sticky) kept |= 1;  // round to odd
    const double v = std::ldexp(static_cast<double>(kept), low + kLsbExponent);
    return negative ? -v : v;
  }
};

struct Entry {
  ExactSum sum;
  std::array<std::byte, 8> written{};  ///< the element's bits as the last update left them
};

struct Sums {
  std::mutex mutex;
  std::map<const std::byte*, Entry> entries;
};
Sums& sums() {
  static Sums s;
  return s;
}

}  // namespace

void atomic_add_element(std::byte* dst, DType t, double value) {
  const auto bytes = static_cast<std::size_t>(dtype_bytes(t));
  Sums& s = sums();
  std::lock_guard lock(s.mutex);
  auto [it, fresh] = s.entries.try_emplace(dst);
  Entry& e = it->second;
  if (fresh || std::memcmp(e.written.data(), dst, bytes) != 0) {
    e.sum = {};
    e.sum.add(static_cast<float>(load_element(dst, t)));
  }
  e.sum.add(static_cast<float>(value));
  store_element(dst, t, static_cast<double>(static_cast<float>(e.sum.value())));
  std::memcpy(e.written.data(), dst, bytes);
}

void forget_atomic_sums(const std::byte* begin, const std::byte* end) {
  Sums& s = sums();
  std::lock_guard lock(s.mutex);
  s.entries.erase(s.entries.lower_bound(begin), s.entries.lower_bound(end));
}

void AtomicSumsScope::forget() const {
  if (!active_) return;
  for (const TensorBinding& t : tensors_)
    if (t.data != nullptr) forget_atomic_sums(t.data, t.data + shape_elements(t.shape) * dtype_bytes(t.dtype));
}

bool has_atomic_updates(const ir::KernelIR& k) {
  for (const ir::Op& op : k.body)
    if (const auto* s = std::get_if<ir::StoreOp>(&op); s != nullptr && s->atomic) return true;
  return false;
}

}  // namespace nki
