/** \file Helpers shared by tests: random data, running both executors, exact error capture. */
#pragma once

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "nki/compile_cache.h"
#include "nki/nki.h"

// Defined by the sanitizer runtimes a sanitized build links into the test binary; null otherwise.
// Read at run time, not from a macro, so the asan lane can link the normal lane's test objects.
extern "C" void __asan_init() __attribute__((weak));
extern "C" void __tsan_init() __attribute__((weak));

namespace test {

/**
 * Under the sanitizer lanes (.ci/run), a test that repeats the code of another at a larger shape
 * is skipped (`* doctest::skip(test::sanitized_build())`): it finds nothing new there and costs
 * minutes under AddressSanitizer.
 */
inline bool sanitized_build() { return __asan_init != nullptr || __tsan_init != nullptr; }

/** The `nki` command of the build tree this test binary belongs to (<build>/tests/nki_tests). */
inline std::string nki_binary() {
  return (std::filesystem::canonical("/proc/self/exe").parent_path().parent_path() / "runtime" / "nki").string();
}

inline std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float lo = -8.0f, float hi = 8.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

/** The what() of the nki::UserError `f` throws; fails the test when it throws nothing or something else. */
inline std::string user_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const nki::UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("expected nki::UserError, got: " << e.what());
  }
  FAIL("expected nki::UserError, nothing was thrown");
  return {};
}

/** Raw bits of a tensor's storage (any dtype), for bit-exact comparison. */
/**
 * What `f` writes to the process's stderr (file descriptor 2, stdio and iostreams alike), less
 * the lines a sanitizer's runtime adds ("==PID==WARNING: ..."), which come once per process
 * wherever it first meets what they note, and the cache's "nki: waiting for another compile"
 * lines, which come when another test process compiles the same key into the shared test
 * cache at that moment (on a fresh cache, the Halide runtime every kernel links).
 */
inline std::string stderr_of(const std::function<void()>& f) {
  std::fflush(stderr);
  char path[] = "/tmp/nki_stderr_XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  const int saved = ::dup(2);
  ::dup2(fd, 2);
  try {
    f();
  } catch (...) {
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    ::close(fd);
    ::unlink(path);
    throw;
  }
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  ::close(fd);
  std::ifstream in(path, std::ios::binary);
  std::string text, line;
  while (std::getline(in, line)) {
    const bool sanitizer = line.size() > 2 && line.starts_with("==") && line.find("==", 2) != std::string::npos &&
                           std::isdigit(static_cast<unsigned char>(line[2]));
    const bool waited = line.starts_with("nki: waiting for another compile of ");
    if (!sanitizer && !waited) text += line + "\n";
  }
  ::unlink(path);
  return text;
}

inline std::vector<std::uint8_t> bytes_of(const nki::Tensor& t) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(t.data());
  return {p, p + t.bytes()};
}

/** Index of the first differing element (by bytes of one element), or -1. */
inline std::int64_t first_difference(const nki::Tensor& a, const nki::Tensor& b) {
  const int eb = nki::dtype_bytes(a.dtype());
  const auto x = bytes_of(a), y = bytes_of(b);
  for (std::int64_t i = 0; i < a.elements(); ++i)
    if (std::memcmp(x.data() + i * eb, y.data() + i * eb, static_cast<std::size_t>(eb)) != 0) return i;
  return -1;
}

/** A new empty directory under the system temp directory, removed with everything in it at the end. */
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    std::random_device rd;
    for (int attempt = 0;; ++attempt) {
      path_ = std::filesystem::temp_directory_path() /
              fmt::format("nki-test-{}-{}-{:08x}", ::getpid(), counter++, rd());
      if (std::filesystem::create_directory(path_)) break;
      REQUIRE_MESSAGE(attempt < 100, "cannot make a fresh temporary directory");
    }
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /** The path of `name` inside the directory, as a string for argv. */
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

  /** Names of the entries whose name contains ".tmp" (temporaries left behind). */
  std::vector<std::string> temporaries() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(path_)) {
      const std::string name = e.path().filename().string();
      if (name.find(".tmp") != std::string::npos) out.push_back(name);
    }
    return out;
  }

 private:
  std::filesystem::path path_;
};

/** A fresh, empty compile cache for this process while alive (then back to the environment's). */
class FreshCache {
 public:
  FreshCache() {
    nki::cache::set_directory(dir_.path());
    nki::cache::clear();
  }
  ~FreshCache() {
    nki::cache::clear();
    nki::cache::set_directory(std::nullopt);
  }
  FreshCache(const FreshCache&) = delete;
  FreshCache& operator=(const FreshCache&) = delete;
  const TempDir& dir() const { return dir_; }

 private:
  TempDir dir_;
};

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  REQUIRE_MESSAGE(f.good(), "cannot write " << path);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(f.good());
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE_MESSAGE(f.good(), "cannot read " << path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

/**
 * Runs `k` ungridded on the compiled executor (loops unrolled by `unroll`) and on the interpreter,
 * requires the same bits in every output, and returns the compiled launch.
 */
inline nki::LaunchResult same_bits_on_both(const nki::Kernel& k, const std::vector<nki::Tensor>& args, int unroll = 1) {
  nki::LaunchOptions compiled{nki::Executor::halide};
  compiled.layer_unroll_factor = unroll;
  const nki::LaunchResult h = k.launch(nki::GridSpec{}).with(compiled).run(args);
  const nki::LaunchResult r = k.launch(nki::GridSpec{}).with({nki::Executor::reference}).run(args);
  REQUIRE(h.outputs.size() == r.outputs.size());
  for (std::size_t i = 0; i < h.outputs.size(); ++i) CHECK(first_difference(h.outputs[i], r.outputs[i]) == -1);
  return h;
}

/** The plan.json of the one artifact a launch ran (its entry in the compile cache). */
inline std::string plan_of(const nki::LaunchResult& r) {
  REQUIRE(r.artifact_keys.size() == 1);
  return read_bytes((nki::cache::entry_directory(r.artifact_keys[0]) / "plan.json").string());
}

}  // namespace test
