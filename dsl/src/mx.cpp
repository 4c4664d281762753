/** \file isa.quantize_mx and isa.nc_matmul_mx: argument checks in NKI's words, then their IR ops. */
#include <fmt/format.h>

#include "nki/language.h"
#include "nki/trace.h"

namespace nki::isa {

namespace {



/** A 2-D SBUF tile operand (both instructions read SBUF only). */
int sbuf_2d(Trace& t, const nl::operand& x, const char* op, const char* role, const SourceLoc& loc) {
  if (x.is_scalar()) t.fail("err_scalar_only_operation", loc, fmt::format("{}: {} is a scalar; it must be a tile", op, role));
  const ir::TileInfo& ti = tile_info(t, x.tile_id);
  if (ti.memory != ir::Memory::sbuf) {
    t.fail("err_unsupported_memory", loc,
           fmt::format("{} reads {} from SBUF; tile %t{} is in {}", op, role, x.tile_id, ir::memory_name(ti.memory)));
  }
  if (ti.shape.size() != 2) {
    t.fail("err_unsupported_tile_rank", loc,
           fmt::format("{}: {} must be a 2-D tile [P, F], got shape {}", op, role, shape_str(ti.shape)));
  }
  return x.tile_id;
}

/** MX data spans whole 32-partition quadrants: P a multiple of 32, at most 128. */
void check_quadrants(Trace& t, std::int64_t p, const char* op, const char* role, const Shape& s, const SourceLoc& loc) {
  if (p % 32 != 0 || p > 128 || p == 0) {
    t.fail("err_num_partition_exceed_arch_limit", loc,
           fmt::format("{}: {} {} has {} partitions; MX data needs a multiple of 32, at most 128", op, role,
                       shape_str(s), p));
  }
}

void check_scale(Trace& t, int scale, const Shape& want, const char* op, const char* role, const SourceLoc& loc) {
  const ir::TileInfo& ti = tile_info(t, scale);
  if (ti.dtype != DType::fp8_e8m0fnu && ti.dtype != DType::uint8) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("{}: {} is {}; it must be fp8_e8m0fnu or uint8", op, role, dtype_name(ti.dtype)));
  }
  if (ti.shape != want) {
    t.fail("err_invalid_shape", loc,
           fmt::format("{}: {} has shape {}; one scale per 8 partitions x 1 packed element of its data is {}", op,
                       role, shape_str(ti.shape), shape_str(want)));
  }
}

}  // namespace

mx_tiles quantize_mx(const nl::operand& src, DType dtype, const quantize_mx_options& o, std::source_location sl) {
  Trace& t = Trace::current("quantize_mx", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  const char* op = "isa::quantize_mx";
  const int x = sbuf_2d(t, src, op, "src", loc);
  const ir::TileInfo& ti = tile_info(t, x);
  const Shape s = ti.shape;
  if (ti.dtype != DType::fp16 && ti.dtype != DType::bf16) {
    t.fail("err_unsupported_dtype", loc, fmt::format("{}: src is {}; it must be fp16 or bf16", op, dtype_name(ti.dtype)));
  }
  if (dtype != DType::fp8_e5m2_x4 && dtype != DType::fp8_e4m3fn_x4) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("{}: dst dtype {}; it must be fp8_e5m2_x4 or fp8_e4m3fn_x4", op, dtype_name(dtype)));
  }
  if (o.scale_dtype != DType::fp8_e8m0fnu && o.scale_dtype != DType::uint8) {
    t.fail("err_unsupported_dtype", loc,
           fmt::format("{}: scale dtype {}; it must be fp8_e8m0fnu or uint8", op, dtype_name(o.scale_dtype)));
  }
  check_quadrants(t, s[0], op, "src", s, loc);
  if (s[1] % 4 != 0) {
    t.fail("err_invalid_shape", loc,
           fmt::format("{}: src {} has {} values per partition; it must be a multiple of 4 (4 per packed element)", op,
                       shape_str(s), s[1]));
  }
  const int data = t.add_tile({s[0], s[1] / 4}, dtype, ir::Memory::sbuf);
  t.emit(ir::QuantizeMxOp{data, x, dtype, false, loc});
  const int scale = t.add_tile({s[0] / 8, s[1] / 4}, o.scale_dtype, ir::Memory::sbuf);
  t.emit(ir::QuantizeMxOp{scale, x, dtype, true, loc});
  return {nl::tile(data), nl::tile(scale)};
}

nl::tile nc_matmul_mx(const nl::operand& stationary, const nl::operand& moving, const nl::operand& stationary_scale,
                      const nl::operand& moving_scale, const matmul_mx_options& o, std::source_location sl) {
  Trace& t = Trace::current("nc_matmul_mx", sl);
  const SourceLoc loc = SourceLoc::from(sl);
  const char* op = "isa::nc_matmul_mx";
  const int st = sbuf_2d(t, stationary, op, "stationary", loc);
  const int mv = sbuf_2d(t, moving, op, "moving", loc);
  const int st_scale = sbuf_2d(t, stationary_scale, op, "stationary_scale", loc);
  const int mv_scale = sbuf_2d(t, moving_scale, op, "moving_scale", loc);
  const Shape ss = tile_info(t, st).shape, ms = tile_info(t, mv).shape;
  for (auto [tile, role] : {std::pair{st, "stationary"}, std::pair{mv, "moving"}}) {
    const DType d = tile_info(t, tile).dtype;
    if (!is_packed_x4(d)) {
      t.fail("err_unsupported_dtype", loc,
             fmt::format("{}: {} is {}; it must be fp8_e5m2_x4, fp8_e4m3fn_x4 or fp4_e2m1fn_x4", op, role,
                         dtype_name(d)));
    }
  }
  const DType out = o.dtype.value_or(DType::fp32);
  if (out != DType::fp32 && out != DType::bf16) {
    t.fail("err_unsupported_dtype", loc, fmt::format("{}: result dtype {}; it must be fp32 or bf16", op, dtype_name(out)));
  }
  if (ss[0] != ms[0]) {
    t.fail("err_num_partition_mismatch", loc,
           fmt::format("{}: the contraction (partition) sizes differ: stationary {} has K={}, moving {} has K={}", op,
                       shape_str(ss), ss[0], shape_str(ms), ms[0]));
  }
  check_quadrants(t, ss[0], op, "stationary", ss, loc);
  if (ss[1] % 2 != 0 || ss[1] > 128) {
    t.fail("err_size_of_dimension_exceed_arch_limit", loc,
           fmt::format("{}: stationary free size {} must be even and at most 128 (stationary shape {})", op, ss[1],
                       shape_str(ss)));
  }
  const std::int64_t nmax = out == DType::fp32 ? 4096 : 8192;  // the whole PSUM: 8 banks
  if (ms[1] > nmax) {
    t.fail("err_size_of_dimension_exceed_arch_limit", loc,
           fmt::format("{}: moving free size {} exceeds {} for a {} result (moving shape {})", op, ms[1], nmax,
                       dtype_name(out), shape_str(ms)));
  }
  check_scale(t, st_scale, {ss[0] / 8, ss[1]}, op, "stationary_scale", loc);
  check_scale(t, mv_scale, {ms[0] / 8, ms[1]}, op, "moving_scale", loc);
  const int result = t.add_tile({ss[1], ms[1]}, out, ir::Memory::psum);
  t.emit(ir::MatmulMxOp{result, st, mv, st_scale, mv_scale, loc});
  return nl::tile(result);
}

}  // namespace nki::isa
