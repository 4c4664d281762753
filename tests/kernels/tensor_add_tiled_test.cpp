/** \file tensor_add_tiled: every tile size computes a + b exactly; what the hardware forbids, and why. */
#include <doctest/doctest.h>

#include <cstring>

#include "nki/kernels.h"
#include "nki/nki.h"
#include "nki/tunable_kernel.h"

namespace nl = nki::language;

namespace {

nki::TuningConfig config(std::int64_t p, std::int64_t f) { return {{{"P", p}, {"F", f}}}; }

std::vector<float> values(std::int64_t n, int salt) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7 + static_cast<std::size_t>(salt)) % 97) - 48;
  return v;
}

/** The rejection from its error name on, after checking it names the kernel's source file; or "accepted". */
std::string located_reason(const nki::TunableKernel& k, const nki::TuningConfig& c,
                           const std::vector<nki::TensorSpec>& args) {
  const std::optional<std::string> why = nki::config_rejection(k, c, args, "trn2");
  if (!why) return "accepted";
  CHECK(why->starts_with("tensor_add_tiled ("));
  CHECK(why->find("kernels/src/tensor_add_tiled.cpp:") != std::string::npos);
  const std::size_t at = why->find("err_");
  return at == std::string::npos ? *why : why->substr(at);
}

}  // namespace

TEST_CASE("tensor_add_tiled - [P,F] tiles on two cores give tensor_add's bits, for several tile sizes") {
  const nki::Shape shape{256, 1024};
  const nki::Tensor a = nki::Tensor::from_floats(shape, nl::bfloat16, values(256 * 1024, 1));
  const nki::Tensor b = nki::Tensor::from_floats(shape, nl::bfloat16, values(256 * 1024, 2));
  const nki::Tensor want = nki::kernels::tensor_add()[2, 2](a, b);
  for (const auto& [p, f] : {std::pair<std::int64_t, std::int64_t>{128, 512}, {32, 64}, {64, 1024}}) {
    CAPTURE(p);
    CAPTURE(f);
    const nki::kernels::TensorAddTiles t{p, f};
    const nki::GridSpec grid = nki::kernels::tensor_add_tiled_grid(t, {shape, shape});
    CHECK(grid.str() == "spmd_dim(" + std::to_string(256 / (2 * p)) + ",nc(2))");
    const nki::LaunchResult r = nki::kernels::tensor_add_tiled(t).launch(grid).run({a, b});
    REQUIRE(r.outputs.size() == 1);
    CHECK(r.cores.size() == 2);
    CHECK(std::memcmp(r.outputs[0].data(), want.data(), static_cast<std::size_t>(want.bytes())) == 0);
  }
}

TEST_CASE("tensor_add_tiled - the tunable kernel's parameters and defaults") {
  const nki::TunableKernel k = nki::kernels::tensor_add_tiled_tunable();
  REQUIRE(k.params.size() == 2);
  CHECK(k.params[0].name == "P");
  CHECK(k.params[0].values == std::vector<std::int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512});
  CHECK(k.params[1].name == "F");
  CHECK(k.params[1].values.back() == 65536);
  CHECK(k.defaults().str() == "P=128 F=512");
  CHECK(k.param("Q") == nullptr);
}

TEST_CASE("tensor_add_tiled - forbidden configurations come with the hardware's reason") {
  const nki::TunableKernel k = nki::kernels::tensor_add_tiled_tunable();
  const std::vector<nki::TensorSpec> args{{{4096, 8192}, nl::bfloat16}, {{4096, 8192}, nl::bfloat16}};
  CHECK(nki::config_rejection(k, config(128, 8192), args, "trn2") == std::nullopt);
  CHECK(nki::config_rejection(k, config(32, 64), args, "trn2") == std::nullopt);
  CHECK(nki::config_rejection(k, config(256, 512), args, "trn2") ==
        "err_num_partition_exceed_arch_limit: P=256 rows exceed the 128 partitions of trn2's SBUF");
  // Tiles over the SBUF of a partition: one tile alone (F=65536 fp32 is 256 KiB), or a, b and
  // their sum together (3 x 128 KiB at F=32768); 192 KiB per partition on trn2.
  const std::vector<nki::TensorSpec> wide{{{256, 65536}, nl::float32}, {{256, 65536}, nl::float32}};
  CHECK(nki::config_rejection(k, config(128, 8192), wide, "trn2") == std::nullopt);
  CHECK(located_reason(k, config(128, 65536), wide) ==
        "err_size_of_dimension_exceed_arch_limit: nl::load of fp32 [128,65536] needs 262144 "
        "bytes per partition; sbuf has 196608 bytes per partition");
  CHECK(located_reason(k, config(128, 32768), wide) ==
        "err_sbuf_out_of_memory: the load result fp32 [128,32768] needs 131072 bytes per "
        "partition of SBUF; 65536 bytes are free of the 196608 per partition on trn2 (131072 live)");
  // A tile the shape is not a multiple of is refused with the grid's message.
  CHECK(nki::config_rejection(k, config(128, 512), {{{128, 1024}, nl::bfloat16}, {{128, 1024}, nl::bfloat16}}, "trn2") ==
        "tensor_add_tiled: err_input_shape_not_tiled: input shape [128,1024] is not a 2-D multiple of [256,512] (P=128 "
        "rows on each of 2 cores, F=512)");
}
