/** \file The persistent compile cache: keys, one compile across processes, locks, damage, SPMD and MPMD. */
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "nki/compile.h"
#include "nki/ir/passes.h"
#include "nki/kernels.h"
#include "test_support.h"

namespace nl = nki::language;
namespace fs = std::filesystem;

namespace {

nki::Kernel scale_kernel() {
  return nki::jit("cache_scale", [](nl::tensor a) {
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto i = nl::program_id(0) * 128 + nl::arange(128)[nl::_, nl::newaxis];
    auto j = nl::arange(64)[nl::newaxis, nl::_];
    nl::store(out[i, j], nl::load(a[i, j]) * 3);
    return out;
  });
}

nki::CompileReport compile_scale(const nki::Kernel& k, nki::DType dt, nki::CompileOptions o = {}, std::int64_t rows = 256) {
  return nki::compile(k[nl::nc(2)], {{rows, 64}}, {dt}, o);
}

/** The versioned root of the cache directory (one subdirectory per project and Halide version). */
fs::path version_root(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().starts_with("v")) return e.path();
  FAIL("no versioned directory in the cache");
  return {};
}

/** Runs the nki binary with `args`, in the environment plus NKI_CACHE_DIR=dir; returns its exit status. */
int run_nki(const std::vector<std::string>& args, const fs::path& dir, const std::string& out_file) {
  const std::string binary = test::nki_binary();  // before the fork: the child only execs
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("NKI_CACHE_DIR", dir.c_str(), 1);
    const int fd = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> argv{const_cast<char*>(binary.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

/** A child process that takes an exclusive flock on `lock` and waits; returns once it holds it. */
pid_t hold_lock_in_child(const fs::path& lock) {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  if (child == 0) {
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);
    ::flock(fd, LOCK_EX);
    const char c = 1;
    (void)::write(ready[1], &c, 1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  return child;
}

int wait_status(int pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("SPMD: every core uses one cache key, and the key does not depend on the grid's sizes or the cores") {
  test::FreshCache cache;
  const nki::Kernel k = scale_kernel();
  const nki::CompileReport r = compile_scale(k, nki::DType::fp32);
  REQUIRE(r.busy.size() == 2);
  CHECK(r.busy[0].key == r.busy[1].key);
  CHECK(r.compiled == 1);
  CHECK(r.reused == 0);
  // Same IR (same grid rank), other sizes and placement: the same artifact.
  const nki::CompileReport again = nki::compile(k[2], {{256, 64}}, {nki::DType::fp32}, {});
  CHECK(again.busy[0].key == r.busy[0].key);
  CHECK(again.compiled == 0);
  CHECK(again.reused == 1);
}

TEST_CASE("the cache key changes with the signature, the target, the mode and the kernel") {
  test::FreshCache cache;
  const nki::Kernel k = scale_kernel();
  const std::string base = compile_scale(k, nki::DType::fp32).busy[0].key;
  CHECK(compile_scale(k, nki::DType::bf16).busy[0].key != base);                // dtype
  CHECK(compile_scale(k, nki::DType::fp32, {}, 512).busy[0].key != base);       // shape
  nki::CompileOptions trn1;
  trn1.target = "trn1";
  trn1.cores = 2;
  CHECK(compile_scale(k, nki::DType::fp32, trn1).busy[0].key != base);          // target
  nki::CompileOptions mpmd;
  mpmd.mode = nki::CompileMode::mpmd;
  const nki::CompileReport m = compile_scale(k, nki::DType::fp32, mpmd);
  CHECK(m.busy[0].key != base);                                                 // mode
  CHECK(m.busy[0].key != m.busy[1].key);                                        // MPMD: the rank is keyed
  CHECK(m.compiled == 2);
  const nki::Kernel other = nki::jit("cache_scale", [](nl::tensor a) {         // same name, other body
    auto out = nl::ndarray(a.shape(), a.dtype(), nl::shared_hbm);
    auto i = nl::program_id(0) * 128 + nl::arange(128)[nl::_, nl::newaxis];
    auto j = nl::arange(64)[nl::newaxis, nl::_];
    nl::store(out[i, j], nl::load(a[i, j]) * 4);
    return out;
  });
  CHECK(compile_scale(other, nki::DType::fp32).busy[0].key != base);
}

TEST_CASE("a new process finds the artifact on disk under the same key and compiles nothing") {
  test::FreshCache cache;
  const nki::Kernel k = scale_kernel();
  const std::string key = compile_scale(k, nki::DType::fp32).busy[0].key;
  nki::cache::forget_loaded();  // as a new process would: nothing in memory
  const std::int64_t before = nki::compile_count();
  auto a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 3));
  const nki::LaunchResult r = k[nl::nc(2)].run({a});
  CHECK(r.compiled == 0);
  CHECK(r.reused == 1);
  CHECK(r.artifact_keys == std::vector<std::string>{key});
  CHECK(nki::compile_count() == before);
  const auto in = a.to_floats(), out = r.outputs[0].to_floats();
  for (std::size_t x = 0; x < in.size(); ++x) REQUIRE(out[x] == in[x] * 3.0f);
  const nki::cache::Stats s = nki::cache::stats();
  CHECK(s.entries == 1);
  CHECK(s.compiles == 1);
  CHECK(s.misses == 1);
  CHECK(s.hits == 1);
  CHECK(s.bytes > 0);
}

TEST_CASE("four processes compiling the same kernel at once compile it once") {
  test::FreshCache cache;
  std::vector<int> pids;
  for (int p = 0; p < 4; ++p) {
    pids.push_back(run_nki({"compile", "tensor_add_nc2", "--shape", "512x1024", "--shape", "512x1024", "--dtype", "bf16",
                            "--spmd"},
                           cache.dir().path(), cache.dir().file(fmt::format("out{}.txt", p))));
  }
  int compiled_lines = 0;
  for (int p = 0; p < 4; ++p) {
    CHECK(wait_status(pids[static_cast<std::size_t>(p)]) == 0);
    const std::string out = test::read_bytes(cache.dir().file(fmt::format("out{}.txt", p)));
    if (out.find("1 artifact compiled, 0 reused") != std::string::npos) ++compiled_lines;
    else CHECK(out.find("0 artifacts compiled, 1 reused") != std::string::npos);
  }
  CHECK(compiled_lines == 1);
  const nki::cache::Stats s = nki::cache::stats();
  CHECK(s.compiles == 1);
  CHECK(s.entries == 1);
  CHECK(fs::is_empty(version_root(cache.dir().path()) / "tmp"));  // nothing half-written left behind
}

TEST_CASE("a compiler killed while holding the lock does not block the next one") {
  test::FreshCache cache;
  const nki::Kernel k = scale_kernel();
  std::string key;
  {
    test::FreshCache other;  // learn the key (it does not depend on the directory)
    key = compile_scale(k, nki::DType::fp32).busy[0].key;
  }
  nki::cache::set_directory(cache.dir().path());
  // A child takes the key's lock in the fresh directory and is killed while holding it.
  compile_scale(k, nki::DType::bf16);  // creates the versioned layout
  const fs::path lock = version_root(cache.dir().path()) / "locks" / (key + ".lock");
  const pid_t child = hold_lock_in_child(lock);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::setenv("NKI_CACHE_LOCK_TIMEOUT", "10", 1);
  const nki::CompileReport r = compile_scale(k, nki::DType::fp32);
  ::unsetenv("NKI_CACHE_LOCK_TIMEOUT");
  CHECK(r.compiled == 1);
  CHECK(r.busy[0].key == key);
}

TEST_CASE("a waiter gives up after the lock timeout, naming the key it waited for") {
  test::FreshCache cache;
  const nki::Kernel k = scale_kernel();
  std::string key;
  {
    test::FreshCache other;
    key = compile_scale(k, nki::DType::fp32).busy[0].key;
  }
  nki::cache::set_directory(cache.dir().path());
  compile_scale(k, nki::DType::bf16);
  const fs::path lock = version_root(cache.dir().path()) / "locks" / (key + ".lock");
  const pid_t child = hold_lock_in_child(lock);
  ::setenv("NKI_CACHE_LOCK_TIMEOUT", "0.3", 1);
  const std::string msg = test::user_error_of([&] { compile_scale(k, nki::DType::fp32); });
  ::unsetenv("NKI_CACHE_LOCK_TIMEOUT");
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  CHECK(msg.starts_with("cache_scale: err_cache_lock_timeout: waited 0 s for another process compiling cache key " + key +
                        " (lock " + key + ".lock); raise NKI_CACHE_LOCK_TIMEOUT or remove a stuck compiler"));
}

TEST_CASE("damaged cache entries are detected, rebuilt and give right results") {
  const nki::Kernel k = scale_kernel();
  auto a = nki::Tensor::from_floats({256, 64}, nki::DType::fp32, test::random_floats(256 * 64, 9));
  const auto in = a.to_floats();
  struct Damage {
    const char* what;
    std::function<void(const fs::path&)> apply;
  };
  const Damage cases[] = {
      {"truncated artifact", [](const fs::path& e) { fs::resize_file(e / "kernel.so", 100); }},
      {"garbage artifact", [](const fs::path& e) { test::write_bytes((e / "kernel.so").string(), std::string(4096, 'x')); }},
      {"missing marker", [](const fs::path& e) { fs::remove(e / "complete"); }},
      {"checksum mismatch", [](const fs::path& e) {
         std::ofstream f(e / "plan.json", std::ios::app);
         f << " ";
       }},
      {"garbage plan with a matching checksum", [](const fs::path& e) {
         test::write_bytes((e / "plan.json").string(), "{\"steps\": 7}\n");
         const std::string so = test::read_bytes((e / "kernel.so").string());
         test::write_bytes((e / "complete").string(),
                           nki::ir::hash_text(so) + " " + nki::ir::hash_text("{\"steps\": 7}\n") + "\n");
       }},
      {"a plan field past its integer range, with a matching checksum", [](const fs::path& e) {
         // Too long for 64 bits, the number reads as a double; a cast of it to int is undefined.
         std::string plan = test::read_bytes((e / "plan.json").string());
         const std::size_t at = plan.find("\"scratch\":");
         REQUIRE(at != std::string::npos);
         plan.insert(at + 10, "-99999999999999999999999999");
         plan.erase(at + 10 + 27, plan.find(',', at + 10 + 27) - (at + 10 + 27));
         test::write_bytes((e / "plan.json").string(), plan);
         const std::string so = test::read_bytes((e / "kernel.so").string());
         test::write_bytes((e / "complete").string(), nki::ir::hash_text(so) + " " + nki::ir::hash_text(plan) + "\n");
       }},
  };
  for (const Damage& d : cases) {
    CAPTURE(d.what);
    test::FreshCache cache;
    const std::string key = compile_scale(k, nki::DType::fp32).busy[0].key;
    nki::cache::forget_loaded();  // unload first: writers never change a loaded artifact in place
    d.apply(version_root(cache.dir().path()) / "entries" / key);
    const nki::LaunchResult r = k[nl::nc(2)].run({a});
    CHECK(r.compiled == 1);  // rebuilt
    const auto out = r.outputs[0].to_floats();
    for (std::size_t x = 0; x < in.size(); ++x) REQUIRE(out[x] == in[x] * 3.0f);
    CHECK(nki::cache::stats().compiles == 2);
    nki::cache::forget_loaded();
    CHECK(k[nl::nc(2)].run({a}).compiled == 0);  // the rebuilt entry is whole
  }
}

TEST_CASE("MPMD compiles one artifact per core, and the launch still computes the same result") {
  test::FreshCache cache;
  const nki::Kernel k = scale_kernel();
  auto a = nki::Tensor::from_floats({512, 64}, nki::DType::fp32, test::random_floats(512 * 64, 10));
  nki::LaunchOptions mpmd;
  mpmd.mode = nki::CompileMode::mpmd;
  const nki::LaunchResult m = k[nl::spmd_dim(2, nl::nc(2))].with(mpmd).run({a});
  CHECK(m.compiled == 2);
  CHECK(m.artifact_keys.size() == 2);
  const nki::LaunchResult s = k[nl::spmd_dim(2, nl::nc(2))].run({a});
  CHECK(s.compiled == 1);
  CHECK(s.artifact_keys.size() == 1);
  CHECK(test::first_difference(m.outputs[0], s.outputs[0]) == -1);
}

TEST_CASE("a full disk while writing a cache entry fails the compile cleanly and leaves the cache usable") {
  test::FreshCache cache;
  const nki::Kernel k = scale_kernel();
  compile_scale(k, nki::DType::bf16);  // the shared runtime and the layout exist
  const pid_t child = ::fork();
  if (child == 0) {  // files may not grow past 1 KiB here: every write of the entry fails
    const struct rlimit small{1024, 1024};
    ::setrlimit(RLIMIT_FSIZE, &small);
    ::signal(SIGXFSZ, SIG_IGN);
    try {
      compile_scale(k, nki::DType::fp32);
    } catch (const nki::UserError& e) {
      ::_exit(e.name() == "err_cache_write_failed" &&
                      std::string(e.what()).find("; nothing of it was kept") != std::string::npos
                  ? 0
                  : 2);
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(4);
  }
  CHECK(wait_status(child) == 0);
  const fs::path root = version_root(cache.dir().path());
  CHECK(fs::is_empty(root / "tmp"));
  CHECK(nki::cache::stats().entries == 1);  // only the bf16 entry
  const nki::CompileReport r = compile_scale(k, nki::DType::fp32);  // with room again: compiles
  CHECK(r.compiled == 1);
  CHECK(nki::cache::stats().entries == 2);
}
