/** \file Autotuning records: stored per kernel, shapes, dtype and target; a changed kernel, shape or target misses. */
#include <doctest/doctest.h>

#include <fstream>

#include "nki/autotune.h"
#include "nki/compile_cache.h"
#include "nki/kernels.h"
#include "nki/nki.h"
#include "test_support.h"

namespace nl = nki::language;

namespace {

nki::TuningConfig config(std::int64_t p, std::int64_t f) { return {{{"P", p}, {"F", f}}}; }

std::vector<nki::TensorSpec> args(nki::Shape shape, nki::DType dtype = nl::bfloat16) {
  return {{shape, dtype}, {shape, dtype}};
}

/** tensor_add_tiled's family under the same name with another body: c = a - b. */
nki::TunableKernel edited_tensor_add_tiled() {
  nki::TunableKernel k = nki::kernels::tensor_add_tiled_tunable();
  k.make = [](const nki::TuningConfig& c) {
    const std::int64_t p = c.at("P"), f = c.at("F");
    return nki::jit(
        "tensor_add_tiled",
        [p, f](nl::tensor a, nl::tensor b) {
          auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
          auto ip = nl::program_id(0) * p + nl::arange(p)[nl::_, nl::newaxis];
          for (auto j : nl::affine_range(a.shape()[1] / f)) {
            auto jf = j * f + nl::arange(f)[nl::newaxis, nl::_];
            nl::store(out[ip, jf], nl::load(a[ip, jf]) - nl::load(b[ip, jf]));
          }
          return out;
        },
        {"a", "b"});
  };
  return k;
}

}  // namespace

TEST_CASE("autotune - a stored best configuration is found for the same kernel, shapes, dtype and target") {
  const test::FreshCache cache;
  const nki::TunableKernel k = nki::kernels::tensor_add_tiled_tunable();
  const auto a = args({512, 2048});
  CHECK(nki::autotune::lookup(k, a, "trn2").miss == "no record");
  nki::autotune::store(k, a, "trn2", {config(64, 1024), "simulated", 12.5});
  const nki::autotune::Lookup l = nki::autotune::lookup(k, a, "trn2");
  REQUIRE(l.record);
  CHECK(l.record->config == config(64, 1024));
  CHECK(l.record->metric == "simulated");
  CHECK(l.record->value == 12.5);
  CHECK(l.miss.empty());
  // It lives in the cache directory; its owner removes it (the compile cache's clear leaves it).
  CHECK(nki::autotune::record_path(k.name, a, "trn2").parent_path() == nki::cache::version_directory() / "autotune");
  CHECK(std::filesystem::exists(nki::autotune::record_path(k.name, a, "trn2")));
  nki::cache::clear();
  CHECK(std::filesystem::exists(nki::autotune::record_path(k.name, a, "trn2")));
  CHECK(nki::autotune::clear() == 1);
  CHECK(nki::autotune::lookup(k, a, "trn2").miss == "no record");
  CHECK(nki::autotune::clear() == 0);
}

TEST_CASE("autotune - a changed shape, dtype or target has no record") {
  const test::FreshCache cache;
  const nki::TunableKernel k = nki::kernels::tensor_add_tiled_tunable();
  nki::autotune::store(k, args({512, 2048}), "trn2", {config(64, 1024), "simulated", 1});
  CHECK(nki::autotune::lookup(k, args({512, 4096}), "trn2").miss == "no record");
  CHECK(nki::autotune::lookup(k, args({512, 2048}, nl::float32), "trn2").miss == "no record");
  CHECK(nki::autotune::lookup(k, args({512, 2048}), "trn1").miss == "no record");
  CHECK(nki::autotune::lookup(k, args({512, 2048}), "trn2").record);
}

TEST_CASE("autotune - a changed kernel invalidates its record") {
  const test::FreshCache cache;
  const auto a = args({512, 2048});
  nki::autotune::store(nki::kernels::tensor_add_tiled_tunable(), a, "trn2", {config(64, 1024), "host", 3});
  const nki::autotune::Lookup l = nki::autotune::lookup(edited_tensor_add_tiled(), a, "trn2");
  CHECK_FALSE(l.record);
  CHECK(l.miss.starts_with("the kernel changed since it was tuned (IR "));
  // The launch then takes the defaults and says why.
  const nki::autotune::TunedLaunch t = nki::autotune::tuned_launch(edited_tensor_add_tiled(), a, "trn2");
  CHECK_FALSE(t.autotuned);
  CHECK(t.config == config(128, 512));
  CHECK(t.miss == l.miss);
}

TEST_CASE("autotune - a launch that asks for autotune runs the recorded configuration") {
  const test::FreshCache cache;
  const nki::TunableKernel k = nki::kernels::tensor_add_tiled_tunable();
  const auto a = args({512, 2048});
  nki::autotune::store(k, a, "trn2", {config(32, 256), "simulated", 1});
  const nki::autotune::TunedLaunch t = nki::autotune::tuned_launch(k, a, "trn2");
  CHECK(t.autotuned);
  CHECK(t.config == config(32, 256));
  CHECK(t.launch.grid().str() == "spmd_dim(8,nc(2))");
  const nki::autotune::TunedLaunch plain = nki::autotune::tuned_launch(k, a, "trn2", false);
  CHECK_FALSE(plain.autotuned);
  CHECK(plain.config == config(128, 512));
  CHECK(plain.launch.grid().str() == "spmd_dim(2,nc(2))");
}

TEST_CASE("autotune - a damaged or foreign record is a miss, never an error") {
  const test::FreshCache cache;
  const nki::TunableKernel k = nki::kernels::tensor_add_tiled_tunable();
  const auto a = args({512, 2048});
  nki::autotune::store(k, a, "trn2", {config(64, 1024), "simulated", 1});
  const std::filesystem::path path = nki::autotune::record_path(k.name, a, "trn2");
  std::ofstream(path, std::ios::trunc) << "{\"key\": ";
  CHECK(nki::autotune::lookup(k, a, "trn2").miss.starts_with("record " + path.filename().string() + " is damaged ("));
  // Another key's record copied over ours.
  nki::autotune::store(k, args({256, 1024}), "trn2", {config(64, 1024), "simulated", 1});
  std::filesystem::copy_file(nki::autotune::record_path(k.name, args({256, 1024}), "trn2"), path,
                             std::filesystem::copy_options::overwrite_existing);
  CHECK(nki::autotune::lookup(k, a, "trn2").miss == "record " + path.filename().string() + " holds another key");
}
