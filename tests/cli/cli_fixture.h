/** \file Helpers of the `nki` command tests: a fresh directory per test, in-process runs, .npy files. */
#pragma once

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "nki/kernels.h"
#include "nki/npy.h"

namespace clitest {

namespace fs = std::filesystem;

/** A new empty directory under the system temp directory, removed with everything in it at the end. */
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    std::random_device rd;
    for (int attempt = 0;; ++attempt) {
      path_ = fs::temp_directory_path() / fmt::format("nki-cli-test-{}-{}-{:08x}", ::getpid(), counter++, rd());
      if (fs::create_directory(path_)) break;
      REQUIRE_MESSAGE(attempt < 100, "cannot make a fresh temporary directory");
    }
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /** The path of `name` inside the directory, as a string for argv. */
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }

  /** Names of the entries whose name contains ".tmp" (temporaries left behind). */
  std::vector<std::string> temporaries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(path_)) {
      const std::string name = e.path().filename().string();
      if (name.find(".tmp") != std::string::npos) out.push_back(name);
    }
    return out;
  }

 private:
  fs::path path_;
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

inline void write_npy(const std::string& path, const nki::Shape& shape, const std::vector<float>& values) {
  write_bytes(path, nki::encode_npy(shape, values));
}

/** A float32 .npy of `shape` holding 0, 1, 2, ... (small integers: exact in every dtype). */
inline void write_iota_npy(const std::string& path, const nki::Shape& shape) {
  std::vector<float> v(static_cast<std::size_t>(nki::shape_elements(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000);
  write_npy(path, shape, v);
}

/**
 * A version 1.0 .npy with a hand-written header dict (e.g. another descr), padded like
 * NumPy's, followed by `data`.
 */
inline std::string npy_with_header(const std::string& dict, const std::string& data) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  return out + header + data;
}

struct CliResult {
  int status = -1;
  std::string out, err;
};

/** The registry the `nki` binary uses, filled once. */
inline const nki::KernelRegistry& library_registry() {
  static const nki::KernelRegistry registry = [] {
    nki::KernelRegistry r;
    nki::kernels::register_library_kernels(r);
    return r;
  }();
  return registry;
}

/** Runs `nki ARGS...` in-process. */
inline CliResult run_cli(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"nki"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  CliResult r;
  r.status = nki::cli::run(static_cast<int>(argv.size()), argv.data(), library_registry(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

/**
 * Checks that a run was refused as bad input: exit status 2, stderr exactly
 * `line` + "\n", nothing on stdout, no `output` file and no temporary in `dir`.
 */
inline void check_refused(const CliResult& r, const std::string& line, const TempDir& dir, const std::string& output) {
  CHECK(r.status == nki::cli::kExitBadInput);
  CHECK(r.err == line + "\n");
  CHECK(r.out.empty());
  CHECK_MESSAGE(!fs::exists(output), output << " was written");
  CHECK(dir.temporaries().empty());
}

}  // namespace clitest
