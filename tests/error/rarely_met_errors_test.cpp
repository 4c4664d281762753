/**
 * \file The user errors no other test reaches, each raised as a user would meet it, with its
 * exact message: nested launches without a grid, kernels returning nothing, registries,
 * kernel definitions, grid ranks, environment variables, registers, step arguments.
 */
#include <cstdlib>

#include "nki/compile_cache.h"
#include "nki/dynamic_control.h"
#include "nki/mpi_world.h"
#include "nki/registry.h"
#include "nki/spmd_guard_rails.h"
#include "test_support.h"

namespace nl = nki::language;
namespace isa = nki::isa;

namespace {

const char* kThisFile = "tests/error/rarely_met_errors_test.cpp";

nki::Tensor input(std::int64_t rows = 128) {
  return nki::Tensor::from_floats({rows, 8}, nki::DType::fp32, test::random_floats(static_cast<std::size_t>(rows * 8), 1));
}

const nki::Kernel& plain_copy() {
  static const nki::Kernel k = nki::jit(
      "plain_copy",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        nl::store(out.all(), nl::load(a.all()));
        return out;
      },
      {"a"});
  return k;
}

/** Sets an environment variable for one test. */
struct EnvFor {
  const char* name;
  EnvFor(const char* n, const char* v) : name(n) { ::setenv(n, v, 1); }
  ~EnvFor() { ::unsetenv(name); }
};

/** Runs f inside `depth` nested sequential_range(1) loops. */
template <class F>
void nested(int depth, const F& f) {
  if (depth == 0) return f();
  for (auto i : nl::sequential_range(1)) {
    (void)i;
    nested(depth - 1, f);
  }
}

}  // namespace

TEST_CASE("err_nested_kernel_call - a kernel body calls another kernel without a grid") {
  static int line = 0;
  const nki::Kernel outer = nki::jit(
      "outer_caller",
      [](nl::tensor a) {
        nki::Tensor host({128, 8}, nki::DType::fp32);
        line = __LINE__ + 1;
        (void)plain_copy()(host);
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        nl::store(out.all(), nl::load(a.all()));
        return out;
      },
      {"a"});
  const nki::Tensor a = input();
  const std::string msg = test::user_error_of([&] { (void)outer(a); });
  CHECK(msg == fmt::format("outer_caller ({}:{}): err_nested_kernel_call: kernel plain_copy is called while kernel "
                           "outer_caller is being traced; a kernel body cannot launch another kernel: put the shared "
                           "code in a C++ function taking nl::tensor arguments and call it from both",
                           kThisFile, line));
}

TEST_CASE("err_no_output - kernel(args) of a kernel that returns nothing; run() gives its details") {
  const nki::Kernel in_place = nki::jit(
      "doubles_in_place",
      [](nl::tensor a) {
        auto t = nl::load(a.all());
        nl::store(a.all(), t + t);
      },
      {"a"});
  nki::Tensor a = input();
  const int line = __LINE__ + 1;
  CHECK(test::user_error_of([&] { (void)in_place(a); }) ==
        fmt::format("doubles_in_place ({}:{}): err_no_output: the kernel returns no tensor; use run() for its details",
                    kThisFile, line));
  nki::Tensor b = input();
  const std::vector<float> before = b.to_floats();
  const nki::LaunchResult r = in_place.launch({}).run({b});
  CHECK(r.outputs.empty());
  CHECK(b.to_floats()[5] == 2 * before[5]);
}

TEST_CASE("err_duplicate_kernel - a second kernel or tunable kernel of one name") {
  nki::KernelRegistry registry;
  const auto no_grid = [](const std::vector<nki::Shape>&) { return nki::GridSpec{}; };
  registry.add({"copy", "a copy", plain_copy(), no_grid});
  CHECK(test::user_error_of([&] { registry.add({"copy", "another copy", plain_copy(), no_grid}); }) ==
        "copy: err_duplicate_kernel: a kernel named \"copy\" is already registered");
  nki::TunableKernel tunable;
  tunable.name = "tuned_copy";
  tunable.description = "a copy with nothing to tune but its name";
  tunable.params = {{"R", "unused", {1}, 1}};
  tunable.make = [](const nki::TuningConfig&) { return plain_copy(); };
  tunable.grid = [](const nki::TuningConfig&, const std::vector<nki::Shape>&) { return nki::GridSpec{}; };
  tunable.forbidden = [](const nki::TuningConfig&, const std::vector<nki::TensorSpec>&, const nki::sim::TargetSpec&) {
    return std::optional<std::string>{};
  };
  registry.add_tunable(tunable);
  CHECK(test::user_error_of([&] { registry.add_tunable(tunable); }) ==
        "tuned_copy: err_duplicate_kernel: a tunable kernel named \"tuned_copy\" is already registered");
}

TEST_CASE("err_invalid_kernel - parameter names that do not match the kernel's arguments") {
  CHECK(test::user_error_of([] {
          (void)nki::jit("two_args", [](nl::tensor a, nl::tensor) { return a; }, {"a"});
        }) == "two_args: err_invalid_kernel: 1 parameter names given for a kernel of 2 arguments");
}

TEST_CASE("err_dtype_mismatch - the 16-bit view of a tensor that is not 16-bit") {
  nki::Tensor t({4}, nki::DType::fp32);
  CHECK(test::user_error_of([&] { (void)t.bits16(); }) ==
        "err_dtype_mismatch: bits16() on a fp32 tensor; it needs a 16-bit dtype");
  nki::Tensor h({4}, nki::DType::bf16);
  CHECK(h.bits16().size() == 4);
}

TEST_CASE("err_grid_rank - a grid of 17 axes is refused by the compiled executor; the interpreter runs it") {
  const nki::Kernel k = nki::jit(
      "seventeen_axes",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        nl::store(out.all(), nl::load(a.all()));
        return out;
      },
      {"a"});
  const nki::GridSpec grid = nki::parse_grid("1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1");
  const nki::Tensor a = input();
  const int line = __LINE__ + 1;
  CHECK(test::user_error_of([&] { (void)k.launch(grid).run({a}); }) ==
        fmt::format("seventeen_axes ({}:{}): err_grid_rank: grids have at most 16 axes", kThisFile, line));
  const nki::LaunchResult r = k.launch(grid).with({nki::Executor::reference, nullptr}).run({a});
  CHECK(test::first_difference(r.outputs.front(), a) == -1);
}

TEST_CASE("err_invalid_env - NKI_SPMD_STRICT and NKI_CACHE_LOCK_TIMEOUT with values they do not take") {
  {
    const EnvFor strict("NKI_SPMD_STRICT", "yes please");
    CHECK(test::user_error_of([] { (void)nki::spmd_strict(); }) ==
          "err_invalid_env: NKI_SPMD_STRICT='yes please'; expected 1 or 0");
  }
  {
    const EnvFor strict("NKI_SPMD_STRICT", "true");
    CHECK(nki::spmd_strict());
  }
  {
    const EnvFor timeout("NKI_CACHE_LOCK_TIMEOUT", "soon");
    CHECK(test::user_error_of([] { (void)nki::cache::lock_timeout_seconds(); }) ==
          "err_invalid_env: NKI_CACHE_LOCK_TIMEOUT='soon'; expected a number of seconds >= 0");
  }
  {
    const EnvFor timeout("NKI_CACHE_LOCK_TIMEOUT", "-1");
    CHECK(test::user_error_of([] { (void)nki::cache::lock_timeout_seconds(); }) ==
          "err_invalid_env: NKI_CACHE_LOCK_TIMEOUT='-1'; expected a number of seconds >= 0");
  }
  const EnvFor timeout("NKI_CACHE_LOCK_TIMEOUT", "2.5");
  CHECK(nki::cache::lock_timeout_seconds() == 2.5);
}

TEST_CASE("err_invalid_register - a register kept from another kernel's trace") {
  static isa::VirtualRegister kept(-1);
  const nki::Kernel first = nki::jit(
      "makes_registers",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        for (int i = 0; i < 3; ++i) kept = isa::register_alloc(i);
        nl::store(out.all(), nl::load(a.all()));
        return out;
      },
      {"a"});
  static int line = 0;
  const nki::Kernel second = nki::jit(
      "uses_a_kept_register",
      [](nl::tensor a) {
        auto out = nl::ndarray({1, 1}, nl::int32, nl::shared_hbm);
        line = __LINE__ + 1;
        isa::register_store(out, kept);
        (void)a;
        return out;
      },
      {"a"});
  const nki::Tensor a = input();
  (void)first(a);
  CHECK(kept.id() == 2);
  const std::string msg = test::user_error_of([&] { (void)second(a); });
  CHECK(msg == fmt::format("uses_a_kept_register ({}:{}): err_invalid_register: isa::register_store: register 2 was not "
                           "made by isa::register_alloc in this kernel",
                           kThisFile, line));
}

TEST_CASE("err_too_many_tensors - a step inside 64 nested loops passes more arguments than the compiled executor takes") {
  const nki::Kernel deep = nki::jit(
      "deeply_nested",
      [](nl::tensor a) {
        auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
        nested(64, [&] { nl::store(out.all(), nl::load(a.all())); });
        return out;
      },
      {"a"});
  const nki::Tensor a = input();
  const std::string msg = test::user_error_of([&] { (void)deep(a); });
  CHECK(msg.starts_with("deeply_nested"));
  CHECK(msg.find("err_too_many_tensors: a step of the kernel reads ") != std::string::npos);
  CHECK(msg.ends_with("the compiled executor passes at most 63 arguments"));
}

TEST_CASE("err_mpi_unavailable - nki::MpiWorld in a build without MPI (the sanitizer lanes build so)") {
  if (nki::MpiWorld::available()) return;  // this build has MPI: tests/mpi makes its world
  CHECK(test::user_error_of([] { nki::MpiWorld world(nullptr, nullptr); }) ==
        "err_mpi_unavailable: this build has no MPI backend; install Open MPI (libopenmpi-dev, scripts/setup.sh does) "
        "and configure with -DNKI_ENABLE_MPI=ON");
}
