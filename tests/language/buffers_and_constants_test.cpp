/** \file Buffer queries (nl::is_hbm, ...), the nl::tile_size limits, empty_like and shared_identity_matrix. */
#include "lang_support.h"

namespace nl = nki::language;
using nki::DType;

TEST_CASE("nl::is_hbm, is_sbuf, is_psum and is_on_chip classify buffers and a tensor's memory") {
  static_assert(nl::is_hbm(nl::shared_hbm) && nl::is_hbm(nl::private_hbm) && nl::is_hbm(nl::hbm));
  static_assert(!nl::is_hbm(nl::sbuf) && !nl::is_hbm(nl::psum));
  static_assert(nl::is_sbuf(nl::sbuf) && !nl::is_sbuf(nl::psum) && !nl::is_sbuf(nl::shared_hbm));
  static_assert(nl::is_psum(nl::psum) && !nl::is_psum(nl::sbuf));
  static_assert(nl::is_on_chip(nl::sbuf) && nl::is_on_chip(nl::psum) && !nl::is_on_chip(nl::private_hbm));
  std::vector<std::string> seen;
  const nki::Kernel k = nki::jit("buffer_queries", [&seen](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    auto s = nl::ndarray({128, 4}, DType::fp32, nl::sbuf);
    auto p = nl::ndarray({128, 4}, DType::fp32, nl::psum);
    for (const nl::tensor& t : {a, out, s, p})
      seen.push_back(fmt::format("{}{}{}{}", nl::is_hbm(t.memory()) ? "H" : "-", nl::is_sbuf(t.memory()) ? "S" : "-",
                                 nl::is_psum(t.memory()) ? "P" : "-", nl::is_on_chip(t.memory()) ? "C" : "-"));
    nl::store(out.all(), nl::load(a.all()));
    return out;
  });
  k(nki::Tensor::from_floats({128, 4}, DType::fp32, test::random_floats(128 * 4, 3)));
  CHECK(seen == std::vector<std::string>{"H---", "H---", "-S-C", "--PC"});
}

TEST_CASE("nl::tile_size holds the NeuronCore's limits in NKI's names") {
  CHECK(nl::tile_size::pmax == 128);
  CHECK(nl::tile_size::psum_fmax == 512);
  CHECK(nl::tile_size::psum_bank_fmax == 512);
  CHECK(nl::tile_size::psum_bank_fmax_bytes == 2048);
  CHECK(nl::tile_size::psum_num_banks == 8);
  CHECK(nl::tile_size::gemm_stationary_fmax == 128);
  CHECK(nl::tile_size::gemm_moving_fmax == 512);
  CHECK(nl::tile_size::bn_stats_fmax == 512);
  CHECK(nl::tile_size::sbuf_fmax_bytes == 192 * 1024);
  CHECK(nl::tile_size::sbuf_fmax == 48 * 1024);
  CHECK(nl::tile_size::sbuf_size_bytes == 24 * 1024 * 1024);
  CHECK(nl::tile_size::total_available_sbuf_size == 192 * 1024);
}

TEST_CASE("nl::shared_identity_matrix is the identity in the dtype asked for, and empty_like takes shape and dtype") {
  for (DType dt : {DType::uint8, DType::fp32, DType::bf16}) {
    CAPTURE(nki::dtype_name(dt));
    const nki::Kernel k = nki::jit("identity_plus", [dt](nl::tensor a) {
      // out = a + I, through an empty_like SBUF array of a's tile.
      auto out = nl::ndarray(a.shape(), DType::fp32, nl::shared_hbm, "out");
      auto x = nl::load(a.all());
      auto buf = nl::empty_like(x);
      auto eye = nl::shared_identity_matrix(a.shape()[0], dt);
      REQUIRE(eye.dtype() == dt);
      REQUIRE(buf.shape() == a.shape());
      REQUIRE(buf.dtype() == a.dtype());
      REQUIRE(buf.memory() == nki::ir::Memory::sbuf);
      buf.all() = nl::add(x, eye, {.dtype = DType::fp32});
      nl::store(out.all(), buf.all());
      return out;
    });
    const std::int64_t n = 96;
    auto a = lt::make({n, n}, DType::fp32, lt::random_ints(static_cast<std::size_t>(n * n), 4, -9, 9));
    const auto av = a.to_floats();
    std::vector<double> want(av.size());
    for (std::int64_t r = 0; r < n; ++r)
      for (std::int64_t c = 0; c < n; ++c) {
        const auto x = static_cast<std::size_t>(r * n + c);
        want[x] = av[x] + (r == c ? 1.0 : 0.0);
      }
    lt::check_both(k, lt::no_grid(), {a}, want, "identity_plus");
  }
}

TEST_CASE("nl::shared_identity_matrix of more than 128 rows is refused by name") {
  static int line = 0;
  const nki::Kernel k = nki::jit("big_identity", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm, "out");
    line = __LINE__ + 1;
    [[maybe_unused]] auto eye = nl::shared_identity_matrix(256);
    nl::store(out.all(), nl::load(a.all()));
    return out;
  });
  const std::string msg =
      test::user_error_of([&] { k(nki::Tensor::from_floats({128, 4}, DType::fp32, test::random_floats(512, 1))); });
  CHECK(msg == fmt::format("big_identity (tests/language/buffers_and_constants_test.cpp:{}): "
                           "err_num_partition_exceed_arch_limit: nl::shared_identity_matrix(256): n must be in 1..128 "
                           "(the partitions of an SBUF tile)",
                           line));
}
