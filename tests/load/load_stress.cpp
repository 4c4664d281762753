/**
 * \file The load test: host threads launching different library kernels at once, for a while.
 * Every result is compared byte for byte with the reference interpreter's output for the same
 * inputs, and the resident memory after warm-up must stay flat.
 *
 *   nki_load_stress [--seconds S] [--threads T]      (defaults: 30 s, 8 threads)
 *
 * Prints one summary line (launches, their rate, resident memory after warm-up and at the end)
 * and exits 0; a wrong result, an error or memory that grows prints what happened and exits 1.
 */
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nki/cli.h"
#include "nki/nki.h"

namespace {

/** One kind of launch the threads repeat: a registered kernel on fixed inputs. */
struct Job {
  std::string kernel;
  std::vector<nki::Shape> shapes;
  nki::DType dtype;
  nki::Executor executor = nki::Executor::halide;
  bool checked = false;
  std::vector<nki::Tensor> inputs{};
  nki::GridSpec grid{};
  std::vector<std::vector<std::byte>> expected{};  ///< the reference interpreter's outputs
};

std::vector<Job> jobs() {
  using nki::DType;
  return {
      {"tensor_add", {{256, 1024}, {256, 1024}}, DType::bf16},
      {"tensor_add_nc2", {{512, 1024}, {512, 1024}}, DType::bf16},
      {"tensor_add_nc2", {{256, 512}, {256, 512}}, DType::fp32, nki::Executor::reference},
      {"tensor_add", {{128, 512}, {128, 512}}, DType::fp32, nki::Executor::reference, true},
      {"softmax", {{200, 256}}, DType::fp32},
      {"rmsnorm", {{130, 256}, {256}}, DType::fp32},
      {"layernorm", {{128, 256}, {1, 256}, {1, 256}}, DType::fp32},
      {"matmul_tiled", {{128, 128}, {128, 512}}, DType::bf16},
      {"matmul_fully_optimized", {{256, 256}, {256, 1024}}, DType::bf16},
      {"transpose2d", {{8, 16, 32}}, DType::fp32},
      {"average_pool2d", {{16, 32, 32}}, DType::fp32},
  };
}

std::vector<std::byte> bytes_of(const nki::Tensor& t) {
  return {t.data(), t.data() + t.bytes()};
}

/** Resident memory in bytes (/proc/self/statm). */
std::int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::int64_t>(::sysconf(_SC_PAGESIZE));
}

nki::LaunchResult launch(const nki::RegisteredKernel& k, const Job& j, nki::Executor executor, bool checked) {
  nki::LaunchOptions o;
  o.executor = executor;
  o.checked = checked;
  return k.kernel.launch(j.grid).with(o).run(j.inputs);
}

/** The first difference from the expected bytes, or "". */
std::string difference(const Job& j, const nki::LaunchResult& r) {
  if (r.outputs.size() != j.expected.size())
    return fmt::format("{} outputs, expected {}", r.outputs.size(), j.expected.size());
  for (std::size_t o = 0; o < r.outputs.size(); ++o) {
    const std::vector<std::byte> got = bytes_of(r.outputs[o]);
    if (got == j.expected[o]) continue;
    const auto at = std::mismatch(got.begin(), got.end(), j.expected[o].begin()).first - got.begin();
    return fmt::format("output {} differs from the reference interpreter's at byte {}", o, at);
  }
  return {};
}

int parse_int(const char* flag, const char* text, int lo, int hi) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > hi) {
    std::fprintf(stderr, "nki_load_stress: %s \"%s\": expected a whole number from %d to %d\n", flag, text, lo, hi);
    std::exit(2);
  }
  return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
  int seconds = 30, threads = 8;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--seconds" || a == "--threads") && i + 1 < argc) {
      (a == "--seconds" ? seconds : threads) = parse_int(argv[i], argv[i + 1], 1, a == "--seconds" ? 86400 : 256);
      ++i;
    } else {
      std::fprintf(stderr, "nki_load_stress: unknown argument \"%s\"; expected --seconds S and --threads T\n", argv[i]);
      return 2;
    }
  }
#ifdef NKI_TEST_CACHE_DIR
  ::setenv("NKI_CACHE_DIR", NKI_TEST_CACHE_DIR, 0);
#endif
  nki::KernelRegistry registry;
  nki::cli::register_library_kernels(registry);
  std::vector<Job> work = jobs();
  std::vector<const nki::RegisteredKernel*> kernels;
  std::uint32_t seed = 1;
  for (Job& j : work) {
    const nki::RegisteredKernel& k = registry.at(j.kernel);
    kernels.push_back(&k);
    for (const nki::Shape& s : j.shapes) {
      std::int64_t n = 1;
      for (std::int64_t d : s) n *= d;
      std::mt19937 rng(seed++);
      std::uniform_real_distribution<float> u(-2.0f, 2.0f);
      std::vector<float> v(static_cast<std::size_t>(n));
      for (float& x : v) x = u(rng);
      j.inputs.push_back(nki::Tensor::from_floats(s, j.dtype, v));
    }
    j.grid = k.default_grid(j.shapes);
    for (const nki::Tensor& t : launch(k, j, nki::Executor::reference, false).outputs) j.expected.push_back(bytes_of(t));
  }

  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> launches{0};
  std::mutex failure_mutex;
  std::string failure;
  auto fail = [&](std::string what) {
    std::lock_guard lock(failure_mutex);
    if (failure.empty()) failure = std::move(what);
    stop = true;
  };
  // Each thread walks the jobs from its own start, so different kernels run at the same time.
  auto worker = [&](std::size_t t) {
    for (std::size_t n = t; !stop; ++n) {
      const std::size_t i = n % work.size();
      try {
        const std::string d = difference(work[i], launch(*kernels[i], work[i], work[i].executor, work[i].checked));
        if (!d.empty()) fail(fmt::format("thread {}: {}: {}", t, work[i].kernel, d));
        ++launches;
      } catch (const std::exception& e) {
        fail(fmt::format("thread {}: {}: {}", t, work[i].kernel, e.what()));
      }
    }
  };
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto warm_end = start + std::chrono::seconds(seconds) / 4;  // the first quarter warms up
  const auto end = start + std::chrono::seconds(seconds);
  std::vector<std::jthread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker, static_cast<std::size_t>(t));
  std::int64_t warm = 0, peak = 0, warm_launches = 0;
  while (!stop && clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (warm == 0 && clock::now() >= warm_end) {
      warm = resident_bytes();
      warm_launches = launches;
    }
    if (warm != 0) peak = std::max(peak, resident_bytes());
  }
  stop = true;
  pool.clear();  // every thread joined
  const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
  if (!failure.empty()) {
    std::fprintf(stderr, "nki_load_stress: %s\n", failure.c_str());
    return 1;
  }
  const std::int64_t final_rss = resident_bytes();
  constexpr double MiB = 1024.0 * 1024.0;
  std::printf("nki_load_stress: %d threads, %.1f s, %lld launches of %zu kinds (%.0f per second), all equal to the "
              "reference interpreter; resident memory %.0f MiB after warm-up (%lld launches), peak %.0f MiB, %.0f MiB "
              "at the end\n",
              threads, elapsed, static_cast<long long>(launches.load()), work.size(),
              static_cast<double>(launches.load()) / elapsed, static_cast<double>(warm) / MiB,
              static_cast<long long>(warm_launches), static_cast<double>(peak) / MiB,
              static_cast<double>(final_rss) / MiB);
  // Flat: what the allocator keeps for reuse may move a little, a leak of even one tensor per
  // launch grows past this within seconds.
  const std::int64_t allowed = std::max<std::int64_t>(warm / 10, 32 * 1024 * 1024);
#ifdef NKI_SANITIZED_BUILD
  const bool judged = false;  // AddressSanitizer's quarantine holds freed memory: growth is its, not ours
#else
  const bool judged = true;
#endif
  if (judged && peak - warm > allowed) {
    std::fprintf(stderr, "nki_load_stress: resident memory grew by %.0f MiB after warm-up (more than %.0f MiB)\n",
                 static_cast<double>(peak - warm) / MiB, static_cast<double>(allowed) / MiB);
    return 1;
  }
  return 0;
}
