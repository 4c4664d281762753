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

#include "nki/cli.h"
#include "test_support.h"
#include "nki/kernels.h"
#include "nki/npy.h"

namespace clitest {

/** How an unknown-kernel error lists the library's kernels (sorted). */
inline const std::string kKnownKernels =
    "attn_fwd_v1, attn_fwd_v10, attn_fwd_v11, attn_fwd_v2, attn_fwd_v3, attn_fwd_v4, attn_fwd_v5, attn_fwd_v6, attn_fwd_v7, attn_fwd_v8, "
    "attn_fwd_v8a, attn_fwd_v9, average_pool2d, layernorm, mamba_v1, mamba_v2, mamba_v3, matmul_basic, matmul_block_free_dimension, matmul_fully_optimized, matmul_hoist_load, "
    "matmul_tiled, mlp, rmsnorm, softmax, tensor_add, tensor_add_nc2, tensor_add_tiled, tensor_parallel_mlp, "
    "transpose2d";

namespace fs = std::filesystem;

using test::read_bytes;
using test::TempDir;
using test::write_bytes;

inline void write_npy(const std::string& path, const nki::Shape& shape, const std::vector<float>& values) {
  write_bytes(path, nki::encode_npy(shape, values));
}

/** A float32 .npy of `shape` holding 0, 1, 2, ... (small integers: exact in every dtype). */
inline void write_iota_npy(const std::string& path, const nki::Shape& shape) {
  std::vector<float> v(static_cast<std::size_t>(nki::shape_elements(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000);
  write_npy(path, shape, v);
}

/** A version 1.0 .npy with a hand-written header dict (e.g. another descr), followed by `data`. */
inline std::string npy_with_header(const std::string& dict, const std::string& data) {
  return nki::frame_npy(1, dict, data);
}

struct CliResult {
  int status = -1;
  std::string out, err;
};

/** The registry the `nki` binary uses, filled once. */
inline const nki::KernelRegistry& library_registry() {
  static const nki::KernelRegistry registry = [] {
    nki::KernelRegistry r;
    nki::cli::register_library_kernels(r);
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
