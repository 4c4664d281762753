/**
 * \file NKI's random numbers (nl.rand, nl.random_seed, nl.dropout, isa.rng, isa.rand2,
 * isa.dropout, isa.set_rng_seed, isa.rand_set_state, isa.rand_get_state).
 *
 * A counter-based generator traced as exact uint32 bitwise ops, so both executors compute
 * the same bits. Each call hashes four words with a Feistel network whose round function is
 * Simon's, f(x) = (rotl(x, 1) & rotl(x, 8)) ^ rotl(x, 2):
 *
 *   pre   = (key0 ^ n * 0x9E3779B9, key1 ^ n * 0x85EBCA6B)   n: the engine's calls since its seed
 *   (a,b) = 4 rounds over pre                                  (the call's key, mixed)
 *   bits  = L after 10 rounds over (position ^ a, stream ^ b)
 *
 * position is the element's row-major index in the tile (partition included), stream the
 * instance (program ids) and the iteration of every enclosing loop, so values differ between
 * elements, partitions, instances, iterations and calls. key0/key1 are built-in constants
 * (one pair per engine) until a seed or a state is set; a state is [P, 6] (GpSimd) or [P, 24] (Vector) uint32 words
 * folded into per-partition keys, and rand_get_state writes pre into words 0 and 1 (the rest
 * 0), so setting a state read back continues where it was read. Every op of one call but one
 * is marked fused: the cost model charges one instruction, on the engine NKI names.
 */
#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "nki/language.h"
#include "nki/trace.h"

namespace nki::language {

namespace {

constexpr DType u32 = DType::uint32;
// Each engine's key before any seed or state is set (two words per engine, so they differ).
constexpr std::uint32_t builtin_key[2][2] = {{0x6A09E667u, 0xBB67AE85u}, {0x3C6EF372u, 0xA54FF53Au}};
constexpr std::uint32_t seed_salt = 0x5BD1E995u;     // key1 = seed ^ salt, so key0 != key1
constexpr std::uint32_t call_step0 = 0x9E3779B9u;    // pre moves along by n * step per call
constexpr std::uint32_t call_step1 = 0x85EBCA6Bu;
constexpr int key_rounds = 4;
constexpr int hash_rounds = 10;
constexpr int vector_slot = 0, gpsimd_slot = 1;

const char* engine_label(int slot) { return slot == vector_slot ? "Vector" : "GpSimd"; }

/** The number of state words per partition of an engine's generator (NKI's XORWOW layout). */
std::int64_t state_words(int slot) { return slot == vector_slot ? 24 : 6; }

operand word(std::uint32_t v, source_location sl) { return operand(static_cast<std::int64_t>(v), sl); }

op_options as_u32() { return {.dtype = u32}; }

tile rotl(const operand& x, int r, source_location sl) {
  return bitwise_or(left_shift(x, r, as_u32(), sl), right_shift(x, 32 - r, as_u32(), sl), as_u32(), sl);
}

/** Simon's round function on traced uint32 tiles. */
tile round_f(const operand& x, source_location sl) {
  return bitwise_xor(bitwise_and(rotl(x, 1, sl), rotl(x, 8, sl), as_u32(), sl), rotl(x, 2, sl), as_u32(), sl);
}

std::uint32_t host_rotl(std::uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
std::uint32_t host_f(std::uint32_t x) { return (host_rotl(x, 1) & host_rotl(x, 8)) ^ host_rotl(x, 2); }

/** `rounds` Feistel rounds (l, r) -> (r ^ f(l), l) on traced words (tiles or scalars). */
std::pair<operand, operand> feistel(operand l, operand r, int rounds, source_location sl) {
  for (int i = 0; i < rounds; ++i) {
    if (l.is_scalar() && r.is_scalar()) {  // both known at trace time: fold on the host
      const auto lv = static_cast<std::uint32_t>(l.scalar), rv = static_cast<std::uint32_t>(r.scalar);
      l = word(rv ^ host_f(lv), sl);
      r = word(lv, sl);
      continue;
    }
    operand next = l.is_scalar() ? word(host_f(static_cast<std::uint32_t>(l.scalar)), sl)
                                 : operand(round_f(l, sl), sl);
    next = operand(bitwise_xor(r, next, as_u32(), sl), sl);
    r = l;
    l = next;
  }
  return {l, r};
}

/**
 * Marks the ops traced since `begin` as one instruction on `engine`: the first binary op
 * (of shape `full` when given) is the instruction, every other op is fused into it.
 */
void one_instruction(Trace& t, std::size_t begin, ir::Engine engine, const Shape* full) {
  bool charged = false;
  auto& body = t.ir().body;
  for (std::size_t i = begin; i < body.size(); ++i) {
    std::visit(
        [&](auto& o) {
          using O = std::decay_t<decltype(o)>;
          if constexpr (requires { o.fused; }) {
            if constexpr (std::is_same_v<O, ir::BinaryOp>) {
              if (!charged && (full == nullptr || tile_info(t, o.result).shape == *full)) {
                charged = true;
                o.engine = engine;
                return;
              }
            }
            o.fused = true;
          }
        },
        body[i]);
  }
}

/** The key tiles of an engine's state, checked to be usable here for a tile of `partitions`. */
void check_state(Trace& t, int slot, std::int64_t partitions, const char* op, const SourceLoc& loc) {
  const Trace::RngState& s = t.rng_state(slot);
  if (s.key0 < 0) return;
  if (!t.in_scope(t.tile_scope(s.key0))) {
    t.fail("err_local_variable_used_out_of_scope", loc,
           fmt::format("{}: the {} engine's random state was set inside a loop that has ended; set the seed or "
                       "state outside the loop",
                       op, engine_label(slot)));
  }
  const std::int64_t kp = tile_info(t, s.key0).shape[0];
  if (kp < partitions) {
    t.fail("err_num_partition_mismatch", loc,
           fmt::format("{}: the {} engine's random state holds {} partitions; the tile has {}", op,
                       engine_label(slot), kp, partitions));
  }
}

/** Partitions [0, p) of a [P', 1] key tile (lane p's state serves partition p). */
operand lanes(int key, std::int64_t p, source_location sl) {
  const tile k(key);
  if (k.shape()[0] == p) return operand(k, sl);
  return operand(k[ds(0, p), _], sl);
}

/** pre: the state's key words moved along by the call count (scalars while no seed is set). */
std::pair<operand, operand> pre_key(Trace& t, int slot, std::int64_t partitions, source_location sl) {
  const Trace::RngState& s = t.rng_state(slot);
  const auto n = static_cast<std::uint64_t>(s.calls);
  const auto c0 = static_cast<std::uint32_t>(n * call_step0), c1 = static_cast<std::uint32_t>(n * call_step1);
  if (s.key0 < 0) return {word(builtin_key[slot][0] ^ c0, sl), word(builtin_key[slot][1] ^ c1, sl)};
  const operand k0 = lanes(s.key0, partitions, sl), k1 = lanes(s.key1, partitions, sl);
  if (n == 0) return {k0, k1};
  return {operand(bitwise_xor(k0, word(c0, sl), as_u32(), sl), sl),
          operand(bitwise_xor(k1, word(c1, sl), as_u32(), sl), sl)};
}

/**
 * The expression of the instance and the iteration of every open loop, as a [P, 1, ...]
 * index (the same in every partition; P partitions so no op broadcasts across partitions).
 */
ir::IndexExpr stream_expr(Trace& t, const Shape& shape) {
  ir::IndexExpr e = ir::IndexExpr::constant_of(0);
  for (std::size_t a = 0; a < t.grid().size(); ++a)
    e = ir::add(ir::scale(e, t.grid()[a]), ir::IndexExpr::symbol({ir::Sym::Kind::program_id, static_cast<int>(a)}));
  for (int l : t.open_loops())
    e = ir::add(ir::scale(e, t.ir().loops.at(static_cast<std::size_t>(l)).trip),
                ir::IndexExpr::symbol({ir::Sym::Kind::loop, l}));
  e.shape = Shape(shape.size(), 1);
  e.shape[0] = shape[0];
  return e;
}

/** The row-major index of each element of a tile of `shape` (partition first). */
ir::IndexExpr position_expr(const Shape& shape) {
  ir::IndexExpr e = ir::IndexExpr::constant_of(0);
  std::int64_t stride = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    if (shape[static_cast<std::size_t>(d)] > 1) e.terms.insert(e.terms.begin(), {{ir::Sym::Kind::axis, d}, stride});
    stride *= shape[static_cast<std::size_t>(d)];
  }
  e.shape = shape;
  return e;
}

void check_result_shape(Trace& t, const Shape& shape, const char* op, const SourceLoc& loc) {
  if (shape.empty()) t.fail("err_invalid_shape", loc, fmt::format("{}: the shape has no dimensions", op));
  for (std::int64_t n : shape) {
    if (n < 1) t.fail("err_invalid_shape", loc, fmt::format("{}: shape {} has a dimension below 1", op, shape_str(shape)));
  }
  if (shape[0] > tile_limits::pmax) {
    t.fail("err_num_partition_exceed_arch_limit", loc,
           fmt::format("number of partitions {} exceeds architecture limitation of {}", shape[0], tile_limits::pmax));
  }
}

/** 32 random bits per element of a uint32 tile of `shape`: one generator call of engine `slot`. */
tile random_bits(Trace& t, const Shape& shape, int slot, const char* op, source_location sl) {
  const SourceLoc loc = SourceLoc::from(sl);
  check_result_shape(t, shape, op, loc);
  check_state(t, slot, shape[0], op, loc);
  auto [p0, p1] = pre_key(t, slot, shape[0], sl);
  ++t.rng_state(slot).calls;
  auto [a, b] = feistel(p0, p1, key_rounds, sl);
  const tile pos = isa::iota(index(position_expr(shape), loc), u32, {}, sl);
  const tile stream = isa::iota(index(stream_expr(t, shape), loc), u32, {}, sl);
  const tile l = bitwise_xor(pos, a, as_u32(), sl);
  const tile r = bitwise_xor(stream, b, as_u32(), sl);
  auto [out, unused] = feistel(operand(l, sl), operand(r, sl), hash_rounds, sl);
  (void)unused;
  return tile(out.tile_id);
}

/** Mantissa bits + 1: how many random bits a uniform value in [0, 1) of `dt` holds exactly. */
int uniform_bits(DType dt) {
  switch (dt) {
    case DType::bf16: return 8;
    case DType::fp16:
    case DType::tf32: return 11;
    case DType::fp8_e4m3:
    case DType::fp8_e4m3fn: return 4;
    case DType::fp8_e5m2: return 3;
    default: return 24;
  }
}

/** Uniform values k * 2^-bits in [0, 1) from the top `bits` of a uint32 tile, in `dt`. */
tile uniform_from(const tile& bits_tile, int bits, DType dt, source_location sl) {
  const tile top = right_shift(bits_tile, 32 - bits, as_u32(), sl);
  return multiply(top, std::ldexp(1.0, -bits), {.dtype = dt}, sl);
}

int slot_of(Trace& t, isa::engine e, const char* op, bool vector_default, const SourceLoc& loc) {
  if (e == isa::engine::unknown) return vector_default ? vector_slot : gpsimd_slot;
  if (e == isa::engine::vector) return vector_slot;
  if (e == isa::engine::gpsimd) return gpsimd_slot;
  t.fail("err_unsupported_engine", loc,
         fmt::format("{}: the random-number generators are on the Vector and GpSimd engines; engine {} has none", op,
                     ir::engine_name(static_cast<ir::Engine>(e))));
}

ir::Engine ir_engine(int slot) { return slot == vector_slot ? ir::Engine::vector : ir::Engine::gpsimd; }

/** A [1, 1] 32-bit integer seed tile, as the seed of the Vector engine's generator. */
void seed_vector_engine(const operand& seed, const char* op, source_location sl) {
  Trace& t = Trace::current(op, sl);
  const SourceLoc loc = SourceLoc::from(sl);
  if (seed.is_scalar()) {
    t.fail("err_scalar_only_operation", loc, fmt::format("{}: the seed must be a [1, 1] tile, got a scalar", op));
  }
  const ir::TileInfo ti = tile_info(t, seed.tile_id);
  if (ti.dtype != DType::int32 && ti.dtype != DType::uint32) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("{}: the seed tile is {}; it must be a 32-bit integer (int32 or uint32)", op,
                       dtype_name(ti.dtype)));
  }
  if (ti.shape != Shape{1, 1}) {
    t.fail("err_invalid_shape", loc, fmt::format("{}: the seed tile is {}; it must be [1, 1]", op, shape_str(ti.shape)));
  }
  const std::size_t begin = t.ir().body.size();
  // Every lane gets the seed's bits as uint32 (an int32 seed wraps), and a second key word that differs from it.
  const tile lanes_seed = tile(seed.tile_id).broadcast_to({tile_limits::pmax, 1}, sl);
  const tile k0 = bitwise_and(lanes_seed, word(0xFFFFFFFFu, sl), as_u32(), sl);
  const tile k1 = bitwise_xor(k0, word(seed_salt, sl), as_u32(), sl);
  one_instruction(t, begin, ir::Engine::vector, nullptr);
  t.rng_state(vector_slot) = {k0.id(), k1.id(), 0};
}

/** A probability operand (scalar in [0, 1] or a [P, 1] tile) checked against data of `partitions`. */
void check_probability(Trace& t, const operand& p, std::int64_t partitions, DType data_dtype, const char* op,
                       const char* role, const SourceLoc& loc) {
  if (p.is_scalar()) {
    if (!(p.scalar >= 0.0 && p.scalar <= 1.0)) {
      t.fail("err_invalid_probability", loc, fmt::format("{}: {} is {}; it must be in [0, 1]", op, role, p.scalar));
    }
    return;
  }
  const ir::TileInfo ti = tile_info(t, p.tile_id);
  if (ti.shape.size() != 2 || ti.shape[1] != 1) {
    t.fail("err_free_dim_mismatch", loc,
           fmt::format("{}: {} is a {} tile; it must be a scalar or a [{}, 1] tile (one value per partition)", op,
                       role, shape_str(ti.shape), partitions));
  }
  if (ti.shape[0] != partitions) {
    t.fail("err_num_partition_mismatch", loc,
           fmt::format("{}: {} has {} partitions; the data has {}", op, role, ti.shape[0], partitions));
  }
  if (!is_float(ti.dtype) || (is_integer(data_dtype) && ti.dtype != DType::fp32)) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("{}: {} is {}; it must be a float tile, and float32 when the data is an integer tile ({})", op,
                       role, dtype_name(ti.dtype), dtype_name(data_dtype)));
  }
}

/** data where a fresh uniform value is >= prob, else 0, in `out` dtype: one Vector instruction. */
tile drop(const operand& data, const operand& prob, DType out, const char* op, source_location sl) {
  Trace& t = Trace::current(op, sl);
  const SourceLoc loc = SourceLoc::from(sl);
  if (data.is_scalar()) t.fail("err_scalar_only_operation", loc, fmt::format("{}: data must be a tile, got a scalar", op));
  const ir::TileInfo ti = tile_info(t, data.tile_id);
  check_probability(t, prob, ti.shape[0], ti.dtype, op, "the drop probability", loc);
  const std::size_t begin = t.ir().body.size();
  const tile u = uniform_from(random_bits(t, ti.shape, vector_slot, op, sl), 24, DType::fp32, sl);
  const tile keep = greater_equal(u, prob, {.dtype = DType::uint8}, sl);
  const tile r = where(keep, data, 0, {.dtype = out}, sl);
  one_instruction(t, begin, ir::Engine::vector, &ti.shape);
  return r;
}

}  // namespace

tile rand(const Shape& shape, DType dtype, buffer buf, source_location sl) {
  Trace& t = Trace::current("rand", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  if (!is_float(dtype)) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("nl::rand: dtype {}; uniform values in [0, 1) need a float dtype", dtype_name(dtype)));
  }
  if (is_hbm(buf)) {
    t.fail("err_unsupported_memory", loc, "nl::rand: the values are made on chip; the buffer must be sbuf or psum");
  }
  const std::size_t begin = t.ir().body.size();
  const tile r = uniform_from(random_bits(t, shape, vector_slot, "nl::rand", sl), uniform_bits(dtype), dtype, sl);
  one_instruction(t, begin, ir::Engine::vector, &shape);
  if (buf == psum) t.ir().tiles.at(static_cast<std::size_t>(r.id())).memory = ir::Memory::psum;
  return r;
}

void random_seed(const operand& seed, source_location sl) { seed_vector_engine(seed, "nl::random_seed", sl); }

tile dropout(const operand& x, const operand& rate, const op_options& o, source_location sl) {
  Trace& t = Trace::current("dropout", sl);
  if (x.is_scalar()) {
    t.fail("err_scalar_only_operation", SourceLoc::from(sl), "nl::dropout: x must be a tile, got a scalar");
  }
  const DType dt = o.dtype.value_or(tile_info(t, x.tile_id).dtype);
  return drop(x, rate, dt, "nl::dropout", sl);
}

}  // namespace nki::language

namespace nki::isa {

using namespace nki::language;  // NOLINT: the helpers above

nl::tile rng(const Shape& shape, const engine_options& o, std::source_location sl) {
  Trace& t = Trace::current("rng", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  const DType dt = o.dtype.value_or(DType::uint32);
  if (!is_integer(dt) || dt == DType::boolean) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("isa::rng: dtype {}; the result must be an integer type (int8, int16, int32, uint8, uint16 "
                       "or uint32)",
                       dtype_name(dt)));
  }
  const int slot = slot_of(t, o.engine, "isa::rng", true, loc);
  const std::size_t begin = t.ir().body.size();
  const nl::tile bits = random_bits(t, shape, slot, "isa::rng", sl);
  // The least significant bits of the 32, as NKI truncates; bitwise ops wrap into the result type.
  const std::uint32_t low = dtype_bytes(dt) >= 4 ? 0xFFFFFFFFu : (1u << (8 * dtype_bytes(dt))) - 1;
  const nl::tile r = nl::bitwise_and(bits, word(low, sl), {.dtype = dt, .mask = o.mask}, sl);
  one_instruction(t, begin, ir_engine(slot), &shape);
  return r;
}

nl::tile rand2(const Shape& shape, const nl::operand& min, const nl::operand& max, const nl::op_options& o,
               std::source_location sl) {
  Trace& t = Trace::current("rand2", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  check_result_shape(t, shape, "isa::rand2", loc);
  for (const auto& [v, role] : {std::pair{&min, "min"}, std::pair{&max, "max"}}) {
    if (v->is_scalar()) continue;
    const ir::TileInfo ti = tile_info(t, v->tile_id);
    if (ti.shape.size() != 2 || ti.shape[1] != 1 || ti.shape[0] != shape[0]) {
      t.fail("err_num_partition_mismatch", loc,
             fmt::format("isa::rand2: {} is a {} tile; it must be a scalar or a [{}, 1] tile", role,
                         shape_str(ti.shape), shape[0]));
    }
  }
  if (min.is_scalar() && max.is_scalar() && !(min.scalar < max.scalar)) {
    t.fail("err_invalid_range", loc,
           fmt::format("isa::rand2: min = {} and max = {}; min must be less than max", min.scalar, max.scalar));
  }
  const std::size_t begin = t.ir().body.size();
  const nl::tile u = uniform_from(random_bits(t, shape, vector_slot, "isa::rand2", sl), 24, DType::fp32, sl);
  // min + u * (max - min) in fp32, then rounded to the result dtype.
  const nl::operand width = min.is_scalar() && max.is_scalar()
                                ? nl::operand(static_cast<double>(static_cast<float>(max.scalar) - static_cast<float>(min.scalar)), sl)
                                : nl::operand(nl::subtract(max, min, {.dtype = DType::fp32}, sl), sl);
  const nl::tile scaled = nl::multiply(u, width, {.dtype = DType::fp32}, sl);
  const nl::tile r = nl::add(scaled, min, {.dtype = o.dtype.value_or(DType::fp32), .mask = o.mask}, sl);
  one_instruction(t, begin, ir::Engine::vector, &shape);
  return r;
}

nl::tile dropout(const nl::operand& data, const nl::operand& prob, const nl::op_options& o, std::source_location sl) {
  Trace& t = Trace::current("dropout", sl);
  if (data.is_scalar()) {
    t.fail("err_scalar_only_operation", SourceLoc::from(sl), "isa::dropout: data must be a tile, got a scalar");
  }
  const DType dt = tile_info(t, data.tile_id).dtype;
  if (o.dtype && *o.dtype != dt) {
    t.fail("err_unsupported_dtype", SourceLoc::from(sl),
           fmt::format("isa::dropout: the result dtype {} must match the data's {}", dtype_name(*o.dtype),
                       dtype_name(dt)));
  }
  return drop(data, prob, dt, "isa::dropout", sl);
}

void set_rng_seed(const nl::operand& src_seeds, std::source_location sl) {
  seed_vector_engine(src_seeds, "isa::set_rng_seed", sl);
}

void rand_set_state(const nl::operand& src_seeds, isa::engine engine, std::source_location sl) {
  Trace& t = Trace::current("rand_set_state", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* op = "isa::rand_set_state";
  const int slot = slot_of(t, engine, op, false, loc);
  if (src_seeds.is_scalar()) {
    t.fail("err_scalar_only_operation", loc, fmt::format("{}: src_seeds must be a tile, got a scalar", op));
  }
  const ir::TileInfo ti = tile_info(t, src_seeds.tile_id);
  if (ti.dtype != DType::uint32) {
    t.fail("err_unsupported_dtype", loc, fmt::format("{}: src_seeds is {}; it must be uint32", op, dtype_name(ti.dtype)));
  }
  if (ti.memory != ir::Memory::sbuf) {
    t.fail("err_unsupported_memory", loc, fmt::format("{}: src_seeds is in {}; it must be in SBUF", op,
                                                      ir::memory_name(ti.memory)));
  }
  const std::int64_t words = state_words(slot);
  if (ti.shape.size() != 2 || ti.shape[1] != words) {
    t.fail("err_invalid_shape", loc,
           fmt::format("{}: src_seeds is {}; the {} engine's state is [P, {}] (P <= 128)", op, shape_str(ti.shape),
                       engine_label(slot), words));
  }
  const std::size_t begin = t.ir().body.size();
  const nl::tile src(src_seeds.tile_id);
  // Even words fold into key0 and odd words into key1, word j rotated by j / 2 so reordered words differ.
  nl::operand keys[2] = {nl::operand(src[nl::_, nl::ds(0, 1)], sl), nl::operand(src[nl::_, nl::ds(1, 1)], sl)};
  for (std::int64_t j = 2; j < words; ++j) {
    const nl::tile w = rotl(src[nl::_, nl::ds(j, 1)], static_cast<int>(j / 2), sl);
    keys[j % 2] = nl::operand(nl::bitwise_xor(keys[j % 2], w, as_u32(), sl), sl);
  }
  one_instruction(t, begin, ir_engine(slot), nullptr);
  t.rng_state(slot) = {keys[0].tile_id, keys[1].tile_id, 0};
}

nl::tile rand_get_state(const Shape& shape, isa::engine engine, std::source_location sl) {
  Trace& t = Trace::current("rand_get_state", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  constexpr const char* op = "isa::rand_get_state";
  const int slot = slot_of(t, engine, op, false, loc);
  const std::int64_t words = state_words(slot);
  check_result_shape(t, shape, op, loc);
  if (shape.size() != 2 || shape[1] != words) {
    t.fail("err_invalid_shape", loc,
           fmt::format("{}: the result is {}; the {} engine's state is [P, {}] (P <= 128)", op, shape_str(shape),
                       engine_label(slot), words));
  }
  check_state(t, slot, shape[0], op, loc);
  const std::size_t begin = t.ir().body.size();
  auto [p0, p1] = pre_key(t, slot, shape[0], sl);
  ir::IndexExpr col = ir::IndexExpr::symbol({ir::Sym::Kind::axis, 1});
  col.shape = shape;
  const nl::tile j = iota(nl::index(col, loc), u32, {}, sl);
  const nl::tile w1 = nl::where(nl::equal(j, 1, {.dtype = DType::uint8}, sl), p1, 0, as_u32(), sl);
  const nl::tile r = nl::where(nl::equal(j, 0, {.dtype = DType::uint8}, sl), p0, w1, as_u32(), sl);
  one_instruction(t, begin, ir_engine(slot), nullptr);
  return r;
}

}  // namespace nki::isa
