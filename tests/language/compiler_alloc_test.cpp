/** \file nki.compiler's allocators: blocks that share memory alias in both executors; capacity counts physical blocks. */
#include "lang_support.h"
#include "nki/traced_kernel.h"

namespace nl = nki::language;
namespace isa = nki::isa;
namespace ncc = nki::compiler;
using nki::DType;

namespace {

/**
 * buf [4, par_dim(128), F] placed by `alloc`; a sequential loop writes buf[i] = a rows of block
 * i, then out block j = buf[j]. With two physical blocks, blocks 0 and 1 read what 2 and 3 wrote.
 */
nki::Kernel reuse_kernel(const char* name, ncc::allocation alloc) {
  return nki::jit(name, [alloc](nl::tensor a) {
    const std::int64_t f = a.shape()[1];
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto buf = nl::ndarray({4, nl::par_dim(128), f}, a.dtype(), alloc, "buf");
    for (auto i : nl::sequential_range(4)) buf[i, nl::_, nl::_] = nl::load(a[nl::ds(i * 128, 128), nl::_]);
    for (auto j : nl::sequential_range(4)) nl::store(out[nl::ds(j * 128, 128), nl::_], buf[j, nl::_, nl::_]);
    return out;
  });
}

/** The host: out block j = a block (j mod blocks) + 4 - blocks when a wrap of `blocks` keeps the last writes. */
std::vector<double> reuse_want(const std::vector<float>& av, std::int64_t f, std::int64_t blocks) {
  std::vector<double> want(av.size());
  const std::int64_t per = 128 * f;
  for (std::int64_t j = 0; j < 4; ++j) {
    const std::int64_t src = 4 - blocks + (j % blocks);  // the last block written into j's memory
    for (std::int64_t e = 0; e < per; ++e) want[static_cast<std::size_t>(j * per + e)] = av[static_cast<std::size_t>(src * per + e)];
  }
  return want;
}

}  // namespace

TEST_CASE("sbuf mod_alloc with 2 tiles for 4 blocks: blocks 0 and 1 read what blocks 2 and 3 wrote, in both executors") {
  const nki::Kernel wrapped = reuse_kernel("mod_alloc_reuse", ncc::sbuf::mod_alloc({.base_addr = 0, .num_free_tiles = {2}}));
  const nki::Kernel whole = reuse_kernel("mod_alloc_whole", ncc::sbuf::mod_alloc({.base_addr = 4096, .num_free_tiles = {4}}));
  for (DType dt : {DType::fp32, DType::bf16}) {
    CAPTURE(nki::dtype_name(dt));
    const std::int64_t f = 24;
    auto a = lt::make({512, f}, dt, test::random_floats(static_cast<std::size_t>(512 * f), 71));
    const auto av = a.to_floats();
    lt::check_both(wrapped, lt::no_grid(), {a}, reuse_want(av, f, 2), "mod_alloc_reuse");
    lt::check_both(whole, lt::no_grid(), {a}, reuse_want(av, f, 4), "mod_alloc_whole");
  }
}

TEST_CASE("sbuf alloc(func) read as a modulo placement aliases as mod_alloc, and a permutation of blocks does not alias") {
  const nki::Kernel modulo = reuse_kernel("alloc_func_modulo", ncc::sbuf::alloc([](std::span<const std::int64_t> b, std::int64_t,
                                                                                     std::int64_t fbytes) {
    return std::pair<std::int64_t, std::int64_t>{0, 8192 + (b[0] % 2) * fbytes};
  }));
  const nki::Kernel reversed = reuse_kernel("alloc_func_reversed", ncc::sbuf::alloc([](std::span<const std::int64_t> b, std::int64_t,
                                                                                         std::int64_t fbytes) {
    return std::pair<std::int64_t, std::int64_t>{0, (3 - b[0]) * fbytes};
  }));
  const std::int64_t f = 16;
  auto a = lt::make({512, f}, DType::fp32, lt::random_ints(static_cast<std::size_t>(512 * f), 72, -50, 50));
  const auto av = a.to_floats();
  lt::check_both(modulo, lt::no_grid(), {a}, reuse_want(av, f, 2), "alloc_func_modulo");
  lt::check_both(reversed, lt::no_grid(), {a}, reuse_want(av, f, 4), "alloc_func_reversed");
}

TEST_CASE("psum mod_alloc with one bank tile and psum alloc(func) into one bank: an accumulation into block 1 adds to what block 0 holds") {
  // acc = zeros [2, par_dim(64), 32] in PSUM; acc[0] = x0^T y; acc[1] += x1^T y; out = acc[1].
  // One bank tile: acc[1] is acc[0]'s memory, so out = x0^T y + x1^T y; two tiles: out = x1^T y.
  // psum::alloc placing both blocks in bank 5 is the one-tile case.
  auto kernel = [](const char* name, ncc::allocation alloc) {
    return nki::jit(name, [alloc](nl::tensor x0, nl::tensor x1, nl::tensor y) {
      auto out = nl::ndarray({64, 32}, nl::float32, nl::shared_hbm, "out");
      auto acc = nl::zeros({2, nl::par_dim(64), 32}, nl::float32, alloc, "acc");
      auto yt = nl::load(y.all());
      acc[0, nl::_, nl::_] = isa::nc_matmul(nl::load(x0.all()), yt);
      acc[1, nl::_, nl::_] += isa::nc_matmul(nl::load(x1.all()), yt);
      nl::store(out.all(), isa::tensor_copy(acc[1, nl::_, nl::_], {.dtype = nl::float32}));
      return out;
    });
  };
  const nki::Kernel shared = kernel("psum_one_bank", ncc::psum::mod_alloc({.base_bank = 2, .num_bank_tiles = {1}}));
  const nki::Kernel apart = kernel("psum_two_banks", ncc::psum::mod_alloc({.base_bank = 2, .num_bank_tiles = {2}}));
  const nki::Kernel by_func = kernel("psum_alloc_one_bank", ncc::psum::alloc([](std::span<const std::int64_t>, std::int64_t,
                                                                                std::int64_t) {
    return std::tuple<std::int64_t, std::int64_t, std::int64_t>{5, 0, 256};
  }));
  for (std::uint32_t seed : {81u, 82u}) {
    CAPTURE(seed);
    const auto v0 = lt::random_ints(128 * 64, seed, -4, 4), v1 = lt::random_ints(128 * 64, seed + 10, -4, 4);
    const auto vy = lt::random_ints(128 * 32, seed + 20, -4, 4);
    auto x0 = lt::make({128, 64}, DType::bf16, v0), x1 = lt::make({128, 64}, DType::bf16, v1);
    auto y = lt::make({128, 32}, DType::bf16, vy);
    std::vector<double> want_shared(64 * 32), want_apart(64 * 32);
    for (std::size_t m = 0; m < 64; ++m) {
      for (std::size_t n = 0; n < 32; ++n) {
        double s0 = 0, s1 = 0;  // small integers: exact in any order
        for (std::size_t k = 0; k < 128; ++k) {
          s0 += static_cast<double>(v0[k * 64 + m]) * vy[k * 32 + n];
          s1 += static_cast<double>(v1[k * 64 + m]) * vy[k * 32 + n];
        }
        want_shared[m * 32 + n] = s0 + s1;
        want_apart[m * 32 + n] = s1;
      }
    }
    lt::check_both(shared, lt::no_grid(), {x0, x1, y}, want_shared, "psum_one_bank");
    lt::check_both(apart, lt::no_grid(), {x0, x1, y}, want_apart, "psum_two_banks");
    lt::check_both(by_func, lt::no_grid(), {x0, x1, y}, want_shared, "psum_alloc_one_bank");
  }
}

TEST_CASE("an SBUF array that fits only through mod_alloc is accepted, and refused without it") {
  // [8, par_dim(1), 12288] fp32 is 384 KiB per partition; two physical blocks are 96 KiB.
  auto kernel = [](const char* name, bool placed) {
    return nki::jit(name, [placed](nl::tensor a) {
      auto out = nl::ndarray({2, 12288}, nl::float32, nl::shared_hbm, "out");
      auto buf = placed ? nl::ndarray({8, nl::par_dim(1), 12288}, nl::float32,
                                      ncc::sbuf::mod_alloc({.base_addr = 0, .num_free_tiles = {2}}), "buf")
                        : nl::ndarray({8, nl::par_dim(1), 12288}, nl::float32, nl::sbuf, "buf");
      for (auto i : nl::sequential_range(8)) buf[i, nl::_, nl::_] = nl::load(a[nl::ds(i, 1), nl::_]);
      for (auto j : nl::sequential_range(2)) nl::store(out[nl::ds(j, 1), nl::_], buf[j, nl::_, nl::_]);
      return out;
    });
  };
  const nki::Kernel placed = kernel("fits_by_mod_alloc", true);
  auto a = lt::make({8, 12288}, DType::fp32, test::random_floats(8 * 12288, 91));
  const auto av = a.to_floats();
  std::vector<double> want(av.begin() + 6 * 12288, av.end());  // blocks 0 and 1 hold what 6 and 7 wrote
  lt::check_both(placed, lt::no_grid(), {a}, want, "fits_by_mod_alloc");

  const nki::Kernel plain = kernel("too_big_without_mod_alloc", false);
  const std::string msg = test::user_error_of([&] { plain(a); });
  CHECK(msg.find("err_size_of_dimension_exceed_arch_limit: nl::ndarray of fp32 [8,1,12288] in sbuf needs 393216 bytes "
                 "per partition; sbuf has 196608 bytes per partition") != std::string::npos);
}

TEST_CASE("a placed array prints its placement, so that two placements compile apart") {
  auto kernel = [](const char* name, std::int64_t tiles) {
    return nki::jit(name, [tiles](nl::tensor a) {
      auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
      auto buf = nl::ndarray({2, nl::par_dim(128), a.shape()[1]}, a.dtype(),
                             ncc::sbuf::mod_alloc({.base_addr = 512, .num_free_tiles = {tiles}}), "buf");
      buf[0, nl::_, nl::_] = nl::load(a.all());
      nl::store(out.all(), buf[0, nl::_, nl::_]);
      return out;
    });
  };
  auto a = lt::make({128, 8}, DType::fp32, test::random_floats(128 * 8, 5));
  const std::string one = kernel("print_one", 1).trace({a.shape()}, {a.dtype()}, lt::no_grid())->text;
  const std::string two = kernel("print_one", 2).trace({a.shape()}, {a.dtype()}, lt::no_grid())->text;
  CHECK(one.find("tensor %buf : fp32[2,128,8] sbuf par_dim(1) at(partition 0, byte 512, storage [1,128,8])") !=
        std::string::npos);
  CHECK(two.find("tensor %buf : fp32[2,128,8] sbuf par_dim(1) at(partition 0, byte 512, storage [2,128,8])") !=
        std::string::npos);
}
