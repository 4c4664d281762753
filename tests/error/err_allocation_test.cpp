/** \file nki.compiler allocation misuse: placements outside the memory, overlapping arrays, unsupported patterns. */
#include "test_support.h"

namespace nl = nki::language;
namespace ncc = nki::compiler;

namespace {
const char* kFile = "tests/error/err_allocation_test.cpp";

auto input() { return nki::Tensor::from_floats({128, 64}, nki::DType::fp32, test::random_floats(128 * 64, 3)); }

/** The message of tracing a kernel whose body allocates through `make` (stored so the kernel has an output). */
template <class Make>
std::string error_of(const char* name, Make make) {
  const nki::Kernel k = nki::jit(name, [make](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    make();
    nl::store(out.all(), nl::load(a.all()));
    return out;
  });
  auto a = input();
  return test::user_error_of([&] { k(a); });
}
}  // namespace

TEST_CASE("err_allocation_out_of_range - an SBUF placement past 192 KiB per partition") {
  static int line = 0;
  const std::string msg = error_of("sbuf_past_end", [] {
    line = __LINE__ + 1;
    nl::ndarray({nl::par_dim(128), 512}, nl::float32, ncc::sbuf::mod_alloc({.base_addr = 195584}), "x");
  });
  CHECK(msg == fmt::format("sbuf_past_end ({}:{}): err_allocation_out_of_range: tensor x fp32[128,512] is placed at "
                           "partitions [0, 128) bytes [195584, 197632): SBUF has 196608 bytes per partition",
                           kFile, line));
}

TEST_CASE("err_allocation_out_of_range - partitions past 128") {
  static int line = 0;
  const std::string msg = error_of("sbuf_past_partitions", [] {
    line = __LINE__ + 1;
    nl::ndarray({nl::par_dim(128), 64}, nl::float32, ncc::sbuf::mod_alloc({.base_addr = 0, .base_partition = 64}), "x");
  });
  CHECK(msg == fmt::format("sbuf_past_partitions ({}:{}): err_allocation_out_of_range: tensor x fp32[128,64] is placed "
                           "at partitions [64, 192) bytes [0, 256): SBUF has 128 partitions",
                           kFile, line));
}

TEST_CASE("err_allocation_out_of_range - PSUM blocks past bank 7 and a block past its bank's 2 KiB") {
  static int line = 0;
  std::string msg = error_of("psum_past_banks", [] {
    line = __LINE__ + 1;
    nl::ndarray({4, nl::par_dim(128), 512}, nl::float32, ncc::psum::mod_alloc({.base_bank = 6, .num_bank_tiles = {4}}), "acc");
  });
  CHECK(msg == fmt::format("psum_past_banks ({}:{}): err_allocation_out_of_range: tensor acc fp32[4,128,512] is placed "
                           "at partitions [0, 128) banks [6, 10) bytes [0, 2048) of each bank: PSUM has 8 banks",
                           kFile, line));
  msg = error_of("psum_past_bank_bytes", [] {
    line = __LINE__ + 1;
    nl::ndarray({nl::par_dim(128), 512}, nl::float32, ncc::psum::mod_alloc({.base_bank = 0, .base_addr = 1024}), "acc");
  });
  CHECK(msg == fmt::format("psum_past_bank_bytes ({}:{}): err_allocation_out_of_range: tensor acc fp32[128,512] is "
                           "placed at partitions [0, 128) banks [0, 1) bytes [1024, 3072) of each bank: a PSUM bank has "
                           "2048 bytes per partition",
                           kFile, line));
}

TEST_CASE("err_allocation_overlap - two SBUF arrays sharing bytes, while side by side they are accepted") {
  static int line_a = 0, line_b = 0;
  const std::string msg = error_of("sbuf_overlap", [] {
    line_a = __LINE__ + 1;
    nl::ndarray({nl::par_dim(128), 512}, nl::float32, ncc::sbuf::mod_alloc({.base_addr = 0}), "a");
    line_b = __LINE__ + 1;
    nl::ndarray({2, nl::par_dim(128), 256}, nl::bfloat16, ncc::sbuf::mod_alloc({.base_addr = 1024, .num_free_tiles = {2}}), "b");
  });
  CHECK(msg == fmt::format("sbuf_overlap ({}:{}): err_allocation_overlap: tensor b bf16[2,128,256] at partitions "
                           "[0, 128) bytes [1024, 2048) of SBUF overlaps tensor a fp32[128,512] at partitions [0, 128) "
                           "bytes [0, 2048) (placed at {}:{}); the executors keep arrays apart, so placed arrays must "
                           "not share memory",
                           kFile, line_b, kFile, line_a));
  const nki::Kernel apart = nki::jit("sbuf_side_by_side", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    nl::ndarray({nl::par_dim(128), 512}, nl::float32, ncc::sbuf::mod_alloc({.base_addr = 0}), "a");
    nl::ndarray({2, nl::par_dim(128), 256}, nl::bfloat16, ncc::sbuf::mod_alloc({.base_addr = 2048, .num_free_tiles = {2}}), "b");
    nl::store(out.all(), nl::load(a.all()));
    return out;
  });
  CHECK_NOTHROW(apart.trace({{128, 64}}, {nki::DType::fp32}, nki::GridSpec{}));
}

TEST_CASE("err_invalid_allocation - a tile count of 0 and a negative address") {
  static int line = 0;
  std::string msg = error_of("zero_tiles", [] {
    line = __LINE__ + 1;
    nl::ndarray({2, nl::par_dim(128), 64}, nl::float32, ncc::sbuf::mod_alloc({.base_addr = 0, .num_free_tiles = {0}}));
  });
  CHECK(msg == fmt::format("zero_tiles ({}:{}): err_invalid_allocation: nki.compiler.sbuf.mod_alloc for nl::ndarray: "
                           "num_free_tiles (0) has a count of 0; each must be >= 1",
                           kFile, line));
  msg = error_of("negative_addr", [] {
    line = __LINE__ + 1;
    nl::ndarray({nl::par_dim(128), 64}, nl::float32, ncc::psum::mod_alloc({.base_bank = 1, .base_addr = -8}));
  });
  CHECK(msg == fmt::format("negative_addr ({}:{}): err_invalid_allocation: nki.compiler.psum.mod_alloc for nl::ndarray: "
                           "base_bank 1, base_addr -8, base_partition 0; each must be >= 0",
                           kFile, line));
}

TEST_CASE("err_unsupported_allocation - num_par_tiles, and alloc(func) neither modulo nor one-to-one") {
  static int line = 0;
  std::string msg = error_of("par_tiles", [] {
    line = __LINE__ + 1;
    nl::ndarray({2, nl::par_dim(64), 64}, nl::float32, ncc::sbuf::mod_alloc({.base_addr = 0, .num_par_tiles = {2}}));
  });
  CHECK(msg == fmt::format("par_tiles ({}:{}): err_unsupported_allocation: nki.compiler.sbuf.mod_alloc for nl::ndarray: "
                           "num_par_tiles (2) tiles blocks along partitions, which is not supported; leave it empty",
                           kFile, line));
  const std::string tail =
      "; supported are a modulo placement (block b at b mod n along each block dimension) and a one-to-one placement "
      "of the blocks side by side";
  msg = error_of("half_overlap", [] {
    line = __LINE__ + 1;
    nl::ndarray({4, nl::par_dim(128), 64}, nl::float32, ncc::sbuf::alloc([](std::span<const std::int64_t> b, std::int64_t, std::int64_t f) {
      return std::pair<std::int64_t, std::int64_t>{0, b[0] * f / 2};
    }));
  });
  CHECK(msg == fmt::format("half_overlap ({}:{}): err_unsupported_allocation: nki.compiler.sbuf.alloc: the blocks' "
                           "addresses are not side by side: after 0 comes 128, one block (256 bytes) further is 256{}",
                           kFile, line, tail));
  msg = error_of("not_modulo", [] {
    line = __LINE__ + 1;
    nl::ndarray({4, nl::par_dim(128), 64}, nl::float32, ncc::sbuf::alloc([](std::span<const std::int64_t> b, std::int64_t, std::int64_t f) {
      return std::pair<std::int64_t, std::int64_t>{0, (b[0] == 0 ? 0 : b[0] == 3 ? 2 : 1) * f};
    }));
  });
  CHECK(msg == fmt::format("not_modulo ({}:{}): err_unsupported_allocation: nki.compiler.sbuf.alloc: blocks [1] and [2] "
                           "share address 256 but differ modulo [4]{}",
                           kFile, line, tail));
  msg = error_of("par_blocks", [] {
    line = __LINE__ + 1;
    nl::ndarray({2, nl::par_dim(64), 64}, nl::float32, ncc::psum::alloc([](std::span<const std::int64_t> b, std::int64_t, std::int64_t) {
      return std::tuple<std::int64_t, std::int64_t, std::int64_t>{0, b[0] * 64, 0};
    }));
  });
  CHECK(msg == fmt::format("par_blocks ({}:{}): err_unsupported_allocation: nki.compiler.psum.alloc: block [1] starts at "
                           "partition 64, block 0 at 0: blocks tiled along partitions are not supported{}",
                           kFile, line, tail));
}

TEST_CASE("err_block_index_not_scalar - a window across the blocks that mod_alloc wraps") {
  static int line = 0;
  const nki::Kernel k = nki::jit("window_across_blocks", [](nl::tensor a) {
    auto out = nl::ndarray({4, 8}, nl::float32, nl::shared_hbm, "out");
    auto buf = nl::ndarray({4, nl::par_dim(1), 8}, nl::float32, ncc::sbuf::mod_alloc({.base_addr = 0, .num_free_tiles = {2}}), "buf");
    for (auto i : nl::sequential_range(4)) buf[i, nl::_, nl::_] = nl::load(a[nl::ds(i, 1), nl::ds(0, 8)]);
    auto ib = nl::arange(4)[nl::_, nl::newaxis];
    auto jf = nl::arange(8)[nl::newaxis, nl::_];
    line = __LINE__ + 1;
    nl::store(out.all(), buf[ib, 0, jf]);
    return out;
  });
  auto a = input();
  const std::string msg = test::user_error_of([&] { k(a); });
  CHECK(msg ==
        fmt::format("window_across_blocks ({}:{}): err_block_index_not_scalar: tensor buf fp32[4,1,8] has 2 physical "
                    "blocks along block dimension 0 (mod_alloc); its index i0 varies over the tile: index one block at "
                    "a time",
                    kFile, line));
}
