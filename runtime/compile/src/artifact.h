/** \file Compiled kernels as shared objects: linking an object, loading it, the shared Halide runtime. */
#pragma once

#include <filesystem>
#include <memory>
#include <string>

namespace nki {

/** A step's entry point: int fn(void** args) (Halide's argv calling convention). */
using ArgvFunction = int (*)(void** args);

/** A loaded artifact (dlopen); closed when the last holder lets go. */
class LoadedArtifact {
 public:
  /** Opens `path`; throws std::runtime_error with the loader's message when it cannot. */
  static std::shared_ptr<LoadedArtifact> open(const std::filesystem::path& path);
  ~LoadedArtifact();
  LoadedArtifact(const LoadedArtifact&) = delete;
  LoadedArtifact& operator=(const LoadedArtifact&) = delete;

  /** The argv entry of `function`, or nullptr. */
  ArgvFunction entry(const std::string& function) const;

 private:
  explicit LoadedArtifact(void* handle) : handle_(handle) {}
  void* handle_;
};

/** Links `object` into the shared object `shared` with the system C++ compiler ($NKI_CXX, default c++). */
void link_shared_object(const std::filesystem::path& object, const std::filesystem::path& shared);

/**
 * Loads the shared Halide runtime at `path` into the process (once; later calls with the
 * same path do nothing) and routes its errors to last_kernel_error().
 */
void load_halide_runtime(const std::filesystem::path& path);

/** The message of the last error a compiled kernel reported on this thread. */
std::string last_kernel_error();

}  // namespace nki
