/** \file The two SPMD guard rails: warnings by default, errors under NKI_SPMD_STRICT=1. */
#include <cstdlib>

#include "nki/spmd_guard_rails.h"
#include "test_support.h"

namespace nl = nki::language;

namespace {

/** A kernel factory that captured its shard as a C++ integer: the rank baked in at trace time. */
nki::Kernel shard_kernel(int shard, int* line) {
  return nki::jit("baked_shard", [shard, line](nl::tensor a) {
    auto out = nl::ndarray({128, 64}, a.dtype(), nl::shared_hbm);
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(64)[nl::newaxis, nl::_];
    auto t = nl::load(a[nl::program_id(0) * 128 + ip, jf]);
    *line = __LINE__ + 1;
    auto u = nl::load(a[shard * 128 + ip, jf]);
    nl::store(out[ip, jf], t + u);
    return out;
  });
}

struct StrictEnv {
  explicit StrictEnv(const char* v) { ::setenv("NKI_SPMD_STRICT", v, 1); }
  ~StrictEnv() { ::unsetenv("NKI_SPMD_STRICT"); }
};

}  // namespace

TEST_CASE("rank-constant check: a baked shard offset is an error under NKI_SPMD_STRICT=1, naming the constant") {
  StrictEnv strict("1");
  int line = 0;
  const nki::Kernel k = shard_kernel(2, &line);
  auto a = nki::Tensor::from_floats({512, 64}, nki::DType::fp32, test::random_floats(512 * 64, 1));
  const std::string msg = test::user_error_of([&] { k[1](a); });
  CHECK(msg == fmt::format("baked_shard (tests/cache/spmd_guard_rails_test.cpp:{}): err_spmd_rank_constant: index of "
                           "tensor in0 on dimension 0 starts at the constant 256 (tile 2 of 4) while the kernel also "
                           "reads program_id: a rank or program id captured as a C++ integer at trace time gives every "
                           "rank its own artifact; index with nl::program_id instead",
                           line));
}

TEST_CASE("rank-constant check: by default a warning, and the launch runs") {
  int line = 0;
  const nki::Kernel k = shard_kernel(3, &line);
  auto a = nki::Tensor::from_floats({512, 64}, nki::DType::fp32, test::random_floats(512 * 64, 2));
  std::vector<float> out;
  const std::string warned = test::stderr_of([&] { out = k[1](a).to_floats(); });
  CHECK(warned == fmt::format("nki: warning: baked_shard (tests/cache/spmd_guard_rails_test.cpp:{}): index of tensor in0 "
                              "on dimension 0 starts at the constant 384 (tile 3 of 4) while the kernel also reads "
                              "program_id: a rank or program id captured as a C++ integer at trace time gives every "
                              "rank its own artifact; index with nl::program_id instead\n",
                              line));
  const auto in = a.to_floats();
  CHECK(out[5] == in[5] + in[384 * 64 + 5]);
}

TEST_CASE("rank-constant check: offsets from program_id, loops or a whole-tensor access are not flagged") {
  StrictEnv strict("1");
  const nki::Kernel k = nki::jit("honest_spmd", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto ip = nl::arange(128)[nl::_, nl::newaxis];
    auto jf = nl::arange(64)[nl::newaxis, nl::_];
    for (auto l : nl::affine_range(2)) {
      nl::store(out[nl::program_id(0) * 256 + l * 128 + ip, jf], nl::load(a[nl::program_id(0) * 256 + l * 128 + ip, jf]));
    }
    return out;
  });
  auto a = nki::Tensor::from_floats({512, 64}, nki::DType::fp32, test::random_floats(512 * 64, 3));
  CHECK(test::first_difference(k[2](a), a) == -1);
}

TEST_CASE("single-artifact assertion: an MPMD launch splinters, an error under NKI_SPMD_STRICT=1 naming keys and ranks") {
  test::FreshCache cache;
  const nki::Kernel k = nki::jit("splinter", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto i = nl::program_id(0) * 128 + nl::arange(128)[nl::_, nl::newaxis];
    auto j = nl::arange(64)[nl::newaxis, nl::_];
    nl::store(out[i, j], nl::load(a[i, j]));
    return out;
  });
  auto a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 4));
  nki::LaunchOptions mpmd;
  mpmd.mode = nki::CompileMode::mpmd;
  nki::LaunchResult r;
  const std::string warned = test::stderr_of([&] { r = k[nl::nc(2)].with(mpmd).run({a}); });  // default: a warning only
  REQUIRE(r.artifact_keys.size() == 2);
  {
    const std::string k0 = std::min(r.artifact_keys[0], r.artifact_keys[1]), k1 = std::max(r.artifact_keys[0], r.artifact_keys[1]);
    const int r0 = k0 == r.artifact_keys[0] ? 0 : 1;
    CHECK(warned == fmt::format("nki: warning: splinter: kernel IR {} resolved to 2 artifacts instead of one shared by "
                                "every core: {} staged by ranks {}; {} staged by ranks {}; launch SPMD (the default) so "
                                "the rank is a run-time value\n",
                                r.ir_hash, k0, r0, k1, 1 - r0));
  }
  StrictEnv strict("1");
  nki::cache::forget_loaded();
  const int line = __LINE__ + 1;
  const std::string msg = test::user_error_of([&] { k[nl::nc(2)].with(mpmd).run({a}); });
  const auto& keys = r.artifact_keys;
  const std::string k0 = std::min(keys[0], keys[1]), k1 = std::max(keys[0], keys[1]);
  const int r0 = k0 == keys[0] ? 0 : 1;
  CHECK(msg == fmt::format("splinter (tests/cache/spmd_guard_rails_test.cpp:{}): err_spmd_artifact_splinter: kernel IR {} resolved to 2 artifacts instead of one "
                           "shared by every core: {} staged by ranks {}; {} staged by ranks {}; launch SPMD (the "
                           "default) so the rank is a run-time value",
                           line, r.ir_hash, k0, r0, k1, 1 - r0));
  // SPMD under strict: one artifact, no error.
  CHECK(k[nl::nc(2)].run({a}).artifact_keys.size() == 1);
}

TEST_CASE("single-artifact assertion: several kernels pass when each collapses to one artifact") {
  StrictEnv strict("1");
  const std::vector<nki::ArtifactUse> uses{{"irA", "key1", 0}, {"irA", "key1", 1}, {"irB", "key2", 0}, {"irB", "key2", 1}};
  nki::check_single_artifact("two_kernels", uses);
  const std::vector<nki::ArtifactUse> split{{"irA", "key1", 0}, {"irB", "key2", 0}, {"irB", "key3", 1}};
  CHECK(test::user_error_of([&] { nki::check_single_artifact("two_kernels", split); }) ==
        "two_kernels: err_spmd_artifact_splinter: kernel IR irB resolved to 2 artifacts instead of one shared by every "
        "core: key2 staged by ranks 0; key3 staged by ranks 1; launch SPMD (the default) so the rank is a run-time value");
}
