/** \file A kernel instance that fails on one core stops the launch on every core and leaves nothing behind. */
#include <filesystem>

#include "test_support.h"

namespace nl = nki::language;

namespace {

constexpr const char* kFile = "tests/runtime/instance_failure_test.cpp";
int g_load_line = 0;

/** Threads of this process now (entries of /proc/self/task). */
std::size_t thread_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

/**
 * Grid [nc(2), J]: core c runs instances (c, 0..J-1). Each instance copies row block c of
 * `a` (shifted by one row, rows with ip == 5 masked off) into its own block of `marks`.
 * Each instance repeats a copy 64 times first (busy work: core 0 alone would run for
 * seconds). On core 1 the shifted read passes the end of `a` ([256, 8]) at ip = 127, which the
 * validator cannot prove about (`!=` masks are not bounds), so the reference executor
 * finds it at run time: instance [1,0], core 1's first. Core 0's instances are all valid.
 */
const nki::Kernel& marking_kernel() {
  static const nki::Kernel k = nki::jit(
      "fails_on_core_1",
      [](nl::tensor a, nl::tensor marks) {
        auto [ip, jf] = nl::mgrid(128, 8);
        g_load_line = __LINE__ + 1;
        auto t = nl::load(a[nl::program_id(0) * 128 + ip + 1, jf], {.mask = (ip != 5)});  // (128, 8)
        const std::int64_t per_core = marks.shape()[0] / 256;
        auto row = (nl::program_id(0) * per_core + nl::program_id(1)) * 128 + ip;
        // Busy work, so core 0 cannot finish all its instances before core 1 has started.
        for ([[maybe_unused]] auto r : nl::sequential_range(64)) {
          nl::store(marks[row, jf], nl::load(a[nl::program_id(0) * 128 + ip, jf]));
        }
        nl::store(marks[row, jf], t, {.mask = (ip != 5)});
      },
      {"a", "marks"});
  return k;
}

}  // namespace

TEST_CASE("an instance failing on one core stops every core, names the instance, and leaves no thread or HBM behind") {
  nki::sim::Device chip("trn2", 2);
  const std::int64_t J = 256;  // instances per core: 4 batches of 64, seconds of work for the reference executor
  auto a = nki::Tensor::from_floats({256, 8}, nki::DType::fp32, std::vector<float>(256 * 8, 1.0f), chip);
  auto marks = nki::Tensor::from_floats({2 * J * 128, 8}, nki::DType::fp32,
                                        std::vector<float>(static_cast<std::size_t>(2 * J * 128 * 8), 0.0f), chip);
  auto launch = marking_kernel()[nl::nc(2), J].with({nki::Executor::reference, nullptr});

  // A valid launch first: the parked thread of the second core is made once per process, before the count.
  auto ok = nki::Tensor::from_floats({256 + 1, 8}, nki::DType::fp32, std::vector<float>(257 * 8, 1.0f), chip);
  marking_kernel()[nl::nc(2), 4].with({nki::Executor::reference, nullptr}).run({ok, marks});
  std::fill_n(reinterpret_cast<float*>(marks.data()), marks.elements(), 0.0f);
  const std::size_t threads_before = thread_count();
  const std::int64_t hbm_before = chip.hbm().bytes_in_use();

  const std::string msg = test::user_error_of([&] { launch.run({a, marks}); });
  CHECK(msg == fmt::format("fails_on_core_1 ({}:{}): err_tensor_access_out_of_bound: instance [1,0] at tile coordinate "
                           "[127,0] accesses tensor a [256,8] at index 256 on dimension 0, valid is [0, 255]",
                           kFile, g_load_line));

  // Core 0 was stopped: it had not run all of its instances when the failure reached it.
  const std::vector<float> m = marks.to_floats();
  std::int64_t ran_on_core_0 = 0;
  for (std::int64_t j = 0; j < J; ++j) ran_on_core_0 += m[static_cast<std::size_t>(j * 128 * 8)] == 1.0f ? 1 : 0;
  CAPTURE(ran_on_core_0);
  CHECK(ran_on_core_0 < J);
  for (std::int64_t j = J; j < 2 * J; ++j) REQUIRE(m[static_cast<std::size_t>(j * 128 * 8)] == 0.0f);  // core 1 ran none

  CHECK(thread_count() == threads_before);
  CHECK(chip.hbm().bytes_in_use() == hbm_before);  // the launch's outputs and scratch were freed

  // Nothing is held: the same device runs a valid launch at once, on both cores.
  CHECK_NOTHROW(marking_kernel()[nl::nc(2), 4].with({nki::Executor::reference, nullptr}).run({ok, marks}));
  CHECK(thread_count() == threads_before);
}

TEST_CASE("cores on the calling thread (CoreThreads::caller) run one after the other: NC0 runs every instance before NC1 fails") {
  nki::sim::Device chip("trn2", 2);
  const std::int64_t J = 8;
  auto a = nki::Tensor::from_floats({256, 8}, nki::DType::fp32, std::vector<float>(256 * 8, 1.0f), chip);
  auto marks = nki::Tensor::from_floats({2 * J * 128, 8}, nki::DType::fp32,
                                        std::vector<float>(static_cast<std::size_t>(2 * J * 128 * 8), 0.0f), chip);
  nki::LaunchOptions o{nki::Executor::reference, nullptr};
  o.core_threads = nki::CoreThreads::caller;
  const std::int64_t hbm_before = chip.hbm().bytes_in_use();

  const std::string msg = test::user_error_of([&] { marking_kernel()[nl::nc(2), J].with(o).run({a, marks}); });
  CHECK(msg == fmt::format("fails_on_core_1 ({}:{}): err_tensor_access_out_of_bound: instance [1,0] at tile coordinate "
                           "[127,0] accesses tensor a [256,8] at index 256 on dimension 0, valid is [0, 255]",
                           kFile, g_load_line));
  // NC0 ran first and whole (on threads it is stopped part way: the test above); NC1 failed at its first.
  const std::vector<float> m = marks.to_floats();
  for (std::int64_t j = 0; j < J; ++j) CHECK(m[static_cast<std::size_t>(j * 128 * 8)] == 1.0f);
  for (std::int64_t j = J; j < 2 * J; ++j) CHECK(m[static_cast<std::size_t>(j * 128 * 8)] == 0.0f);
  CHECK(chip.hbm().bytes_in_use() == hbm_before);
}
