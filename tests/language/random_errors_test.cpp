/** \file Misuse of the random-number ops: each error's name, the user's line and the exact message. */
#include "lang_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;
using nki::DType;

TEST_CASE("random ops: misuse errors name the op, the values and the user's line") {
  const char* kFile = "tests/language/random_errors_test.cpp";
  static int line = 0;
  static int which = 0;
  const std::pair<const char*, const char*> expect[] = {
      {"err_unsupported_dtype", "nl::rand: dtype int32; uniform values in [0, 1) need a float dtype"},
      {"err_unsupported_memory", "nl::rand: the values are made on chip; the buffer must be sbuf or psum"},
      {"err_unsupported_dtype",
       "isa::rng: dtype fp32; the result must be an integer type (int8, int16, int32, uint8, uint16 or uint32)"},
      {"err_unsupported_engine",
       "isa::rng: the random-number generators are on the Vector and GpSimd engines; engine scalar has none"},
      {"err_invalid_shape", "isa::rand_set_state: src_seeds is [128,24]; the GpSimd engine's state is [P, 6] (P <= 128)"},
      {"err_invalid_range", "isa::rand2: min = 3 and max = 3; min must be less than max"},
      {"err_invalid_probability", "isa::dropout: the drop probability is 1.5; it must be in [0, 1]"},
      {"err_unsupported_dtype",
       "isa::dropout: the drop probability is bf16; it must be a float tile, and float32 when the data is an integer "
       "tile (int32)"},
      {"err_num_partition_mismatch", "isa::dropout: the drop probability has 64 partitions; the data has 128"},
      {"err_unsupported_dtype", "nl::random_seed: the seed tile is fp32; it must be a 32-bit integer (int32 or uint32)"},
      {"err_invalid_shape", "nl::random_seed: the seed tile is [1,2]; it must be [1, 1]"},
      {"err_local_variable_used_out_of_scope",
       "nl::rand: the Vector engine's random state was set inside a loop that has ended; set the seed or state "
       "outside the loop"},
      {"err_invalid_shape", "isa::rand_get_state: the result is [128,6]; the Vector engine's state is [P, 24] (P <= 128)"},
      {"err_num_partition_mismatch", "isa::rng: the GpSimd engine's random state holds 64 partitions; the tile has 128"},
  };
  auto fa = nki::Tensor::from_floats({128, 8}, DType::fp32, test::random_floats(1024, 31, 0.0f, 1.0f));
  auto ia = nki::Tensor::from_floats({128, 8}, DType::int32, std::vector<float>(1024, 3.0f));
  for (which = 0; which < static_cast<int>(std::size(expect)); ++which) {
    CAPTURE(which);
    const std::string name = fmt::format("random_misuse{}", which);
    const nki::Kernel k = nki::jit(name, [](nl::tensor f, nl::tensor i) {
      auto out = nl::ndarray({128, 8}, nl::float32, nl::shared_hbm, "out");
      auto x = nl::load(f.all());   // (128, 8) fp32
      auto xi = nl::load(i.all());  // (128, 8) int32
      auto ip = nl::arange(128)[nl::_, nl::newaxis];
      auto s24 = isa::iota(ip * 24 + nl::arange(24)[nl::newaxis, nl::_], nl::uint32);  // (128, 24)
      auto s6 = isa::iota(nl::arange(64)[nl::_, nl::newaxis] * 6 + nl::arange(6)[nl::newaxis, nl::_], nl::uint32);  // (64, 6)
      nl::tile r = x;
      line = __LINE__ + 2;
      switch (which) {
        case 0: r = nl::rand({128, 8}, nl::int32); break;
        case 1: r = nl::rand({128, 8}, nl::float32, nl::hbm); break;
        case 2: r = isa::rng({128, 8}, {.dtype = nl::float32}); break;
        case 3: r = isa::rng({128, 8}, {.engine = isa::scalar_engine}); break;
        case 4: isa::rand_set_state(s24, isa::gpsimd_engine); break;
        case 5: r = isa::rand2({128, 8}, 3.0, 3.0); break;
        case 6: r = isa::dropout(x, 1.5); break;
        case 7: r = isa::dropout(xi, nl::load(f[nl::_, nl::ds(0, 1)], {.dtype = nl::bfloat16})); break;
        case 8: r = isa::dropout(x, nl::load(f[nl::ds(0, 64), nl::ds(0, 1)])); break;
        case 9: nl::random_seed(nl::load(f[nl::ds(0, 1), nl::ds(0, 1)])); break;
        case 10: nl::random_seed(nl::load(i[nl::ds(0, 1), nl::ds(0, 2)])); break;
        case 11: { for (auto l : nl::affine_range(2)) { (void)l; nl::random_seed(nl::load(i[nl::ds(0, 1), nl::ds(0, 1)])); } r = nl::rand({128, 8}, nl::float32); } break;  // NOLINT
        case 12: r = isa::rand_get_state({128, 6}, isa::vector_engine); break;
        case 13: { isa::rand_set_state(s6); r = isa::rng({128, 8}, {.engine = isa::gpsimd_engine}); } break;
        default: break;
      }
      nl::store(out.all(), r);
      return out;
    });
    const std::string msg = test::user_error_of([&] { k(fa, ia); });
    const auto [err, detail] = expect[which];
    CHECK(msg == fmt::format("{} ({}:{}): {}: {}", name, kFile, line + which, err, detail));
  }
}
