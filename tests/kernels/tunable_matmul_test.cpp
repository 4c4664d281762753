/** \file matmul_fully_optimized as a tunable kernel: its parameters, forbidden blockings, and a sweep of them. */
#include <doctest/doctest.h>

#include "cli/cli_fixture.h"
#include "nki/kernels.h"
#include "nki/nki.h"
#include "nki/tunable_kernel.h"

namespace nl = nki::language;

namespace {

nki::TuningConfig blocks(std::int64_t m, std::int64_t n, std::int64_t k) {
  return {{{"tiles_m", m}, {"tiles_n", n}, {"tiles_k", k}}};
}

/** lhsT [K, M] and rhs [K, N] in bf16. */
std::vector<nki::TensorSpec> matmul_args(std::int64_t k, std::int64_t m, std::int64_t n) {
  return {{{k, m}, nl::bfloat16}, {{k, n}, nl::bfloat16}};
}

/** The rejection from its error name on (the kernel's source line aside), or "accepted". */
std::string reason(const nki::TuningConfig& c, const std::vector<nki::TensorSpec>& args) {
  const std::optional<std::string> why =
      nki::config_rejection(nki::kernels::matmul_fully_optimized_tunable(), c, args, "trn2");
  if (!why) return "accepted";
  const std::size_t at = why->find("err_");
  return at == std::string::npos ? *why : why->substr(at);
}

}  // namespace

TEST_CASE("matmul_fully_optimized tunable - parameters, defaults and the two-core grid") {
  const nki::TunableKernel k = nki::kernels::matmul_fully_optimized_tunable();
  CHECK(k.defaults().str() == "tiles_m=16 tiles_n=2 tiles_k=8");
  CHECK(k.params[1].values == std::vector<std::int64_t>{1, 2, 4, 8});
  CHECK(k.grid(k.defaults(), {{1024, 2048}, {1024, 2048}}).str() == "spmd_dim(1,nc(2))");
  CHECK(k.result_tolerance == 1.0 / 64);
}

TEST_CASE("matmul_fully_optimized tunable - blockings the matrices or the SBUF do not allow are forbidden") {
  const auto small = matmul_args(1024, 2048, 2048);
  CHECK(reason(blocks(16, 2, 8), small) == "accepted");
  CHECK(reason(blocks(32, 2, 8), small) == "err_input_shape_not_tiled: lhsT [1024,2048] and rhs [1024,2048]: K must be a "
                                          "multiple of 1024, M of 4096 and N of 1024");
  CHECK(reason(blocks(16, 4, 8), small) ==
        "err_input_shape_not_tiled: rhs [1024,2048]: 1 N blocks of 2048 do not split evenly over 2 instances");
  // result_tiles holds M/128 x tiles_n bf16 [128, 512] tiles per partition: 32 x 8 x 1 KiB = 256 KiB here.
  const auto large = matmul_args(8192, 4096, 8192);
  CHECK(reason(blocks(16, 8, 8), large) == "err_size_of_dimension_exceed_arch_limit: nl::zeros of bf16 [2,16,8,128,512] in "
                                          "sbuf needs 262144 bytes per partition; sbuf has 196608 bytes per partition");
  // 128 KiB of result tiles, 32 KiB of rhs tiles and 32 KiB of lhsT tiles fill the SBUF: no room for a load's tile.
  CHECK(reason(blocks(16, 4, 8), large) ==
        "err_sbuf_out_of_memory: the load result bf16 [128,2048] needs 4096 bytes per partition of SBUF; 0 bytes are "
        "free of the 196608 per partition on trn2 (196608 live)");
  CHECK(reason(blocks(16, 2, 16), large) == "accepted");
}

TEST_CASE("nki bench - a sweep of matmul K blockings: their results agree within the kernel's tolerance") {
  const test::FreshCache cache;
  const clitest::CliResult r =
      clitest::run_cli({"bench", "matmul_fully_optimized", "--sweep", "tiles_m=1;tiles_n=1;tiles_k=1,2", "--shape",
                        "256x256", "--shape", "256x1024", "--dtype", "bf16", "--iters", "1"});
  REQUIRE(r.status == 0);
  CHECK(r.out.starts_with("matmul_fully_optimized [256,256] [256,1024] bf16 on trn2: 2 configurations, 0 forbidden; "
                          "sorted by simulated latency\n      tiles_m tiles_n tiles_k  simulated_us      host_us  host_GBps  "
                          "sim_TFLOPs     hfu  tensor_util  host_GFLOPs\nbest "));
}
