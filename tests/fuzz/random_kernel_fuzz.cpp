/**
 * \file libFuzzer target: small random kernels from the fuzzer's bytes, on both executors.
 * The bytes are decoded here (random_kernel::from_bytes is inline), so the fuzzer sees which
 * tiles, grids, dtypes and ops an input reached; the kernel is built and run by the project's
 * own archive (tests/random_kernel), compiled with the project's compiler.
 */
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "random_kernel/random_kernel.h"

// The executors must give the same bytes, or refuse with the same error; a crash or a hang
// (libFuzzer's -timeout) fails too.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string differs = random_kernel::compare_executors(random_kernel::from_bytes(data, size));
  if (!differs.empty()) {
    std::fprintf(stderr, "the executors disagree: %s\n", differs.c_str());
    std::abort();
  }
  return 0;
}
