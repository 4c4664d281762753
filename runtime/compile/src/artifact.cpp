/** \file Compiled kernels as shared objects: link, dlopen, and the Halide runtime they share. */
#include "artifact.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "kernel_abi.h"
#include "nki/error.h"

extern char** environ;

namespace nki {

namespace {
thread_local std::string kernel_error;

void on_kernel_error(void*, const char* msg) { kernel_error = msg ? msg : ""; }
}  // namespace

std::shared_ptr<LoadedArtifact> LoadedArtifact::open(const std::filesystem::path& path) {
  (void)kernel_abi_table();  // the functions kernels call must be linked into this program
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = ::dlerror();
    throw std::runtime_error(e ? e : "dlopen failed");
  }
  return std::shared_ptr<LoadedArtifact>(new LoadedArtifact(h));
}

LoadedArtifact::~LoadedArtifact() { ::dlclose(handle_); }

ArgvFunction LoadedArtifact::entry(const std::string& function) const {
  return reinterpret_cast<ArgvFunction>(::dlsym(handle_, (function + "_argv").c_str()));
}

void link_shared_object(const std::filesystem::path& object, const std::filesystem::path& shared) {
  const char* cxx = std::getenv("NKI_CXX");
  std::vector<std::string> argv{cxx && *cxx ? cxx : "c++", "-shared", "-o", shared.string(), object.string()};
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = 0;
  if (::posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) {
    throw std::runtime_error(fmt::format("cannot run the linker '{}'", argv[0]));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waiting for the linker failed");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(fmt::format("the linker '{}' failed linking {} (status {})", argv[0], object.filename().string(), status));
  }
}

void load_halide_runtime(const std::filesystem::path& path) {
  static std::mutex mu;
  static std::string loaded;
  std::lock_guard lock(mu);
  if (!loaded.empty()) return;  // one runtime per process: every cache version builds the same one for this Halide
  // Global: the kernels' undefined halide_* symbols resolve against it. Never closed.
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (h == nullptr) {
    const char* e = ::dlerror();
    throw std::runtime_error(e ? e : "dlopen failed");
  }
  using SetHandler = void (*)(void (*)(void*, const char*));
  auto set = reinterpret_cast<SetHandler>(::dlsym(h, "halide_set_error_handler"));
  if (set == nullptr) throw std::runtime_error("the Halide runtime has no halide_set_error_handler");
  set(&on_kernel_error);
  loaded = path.string();
}

std::string last_kernel_error() { return kernel_error; }

}  // namespace nki
