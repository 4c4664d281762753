/** \file `nki run` interrupted by SIGINT: every core stops, no output or temporary is left, exit status 130. */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <thread>

#include "cli_fixture.h"

extern char** environ;

namespace {

/** Threads of process `pid` now, 0 once it is gone. */
std::size_t threads_of(pid_t pid) {
  std::error_code ec;
  std::size_t n = 0;
  for (std::filesystem::directory_iterator it(fmt::format("/proc/{}/task", pid), ec), end; !ec && it != end;
       it.increment(ec))
    ++n;
  return n;
}

}  // namespace

TEST_CASE("cli: SIGINT during a launch stops every core, writes nothing and exits with 130") {
  clitest::TempDir dir;
  // tensor_add_nc2 over [4096, 8192] on the reference executor: 512 instances, 4 batches per core,
  // many seconds of work. Under a sanitizer [2048, 8192]: 2 batches per core, each seconds long,
  // and half the inputs to read (ThreadSanitizer's memcpy and memset check every byte).
  const std::int64_t rows = test::sanitized_build() ? 2048 : 4096;
  clitest::write_iota_npy(dir.file("a.npy"), {rows, 8192});
  clitest::write_iota_npy(dir.file("b.npy"), {rows, 8192});
  const std::string out = dir.file("c.npy"), err = dir.file("stderr.txt");
  const std::vector<std::string> args{test::nki_binary(), "run", "tensor_add_nc2", "--input", dir.file("a.npy"),
                                      "--input", dir.file("b.npy"), "--output", out, "--executor", "reference",
                                      "--schedule", dir.file("s.json")};
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, args[0].c_str(), &actions, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);

  // The launch has begun once the second core's thread exists (the caller runs the first core;
  // the reference executor starts no other threads). Then interrupt it. Reading the 256 MiB of
  // inputs took ~9 s here before nki mapped them and used huge pages, ~3 s since; under
  // ThreadSanitizer half of them took ~50 s.
  const auto start = std::chrono::steady_clock::now();
  const auto patience = std::chrono::seconds(test::sanitized_build() ? 600 : 120);
  while (threads_of(pid) < 2 && std::chrono::steady_clock::now() - start < patience) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE_MESSAGE(threads_of(pid) >= 2, "nki run never started its cores");
  REQUIRE(::kill(pid, SIGINT) == 0);
  const auto sent = std::chrono::steady_clock::now();
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  const double stop_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();

  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(clitest::read_bytes(err) == "nki run: interrupted (SIGINT): every core stopped, no output was written\n");
  CHECK(!std::filesystem::exists(out));
  CHECK(!std::filesystem::exists(dir.file("s.json")));
  CHECK(dir.temporaries().empty());
  // Each core stops before its next batch of 64 instances: well under the whole run. Under a
  // sanitizer a batch of the reference executor is several times slower (TSan took 5.1 s once).
  CHECK(stop_seconds < (test::sanitized_build() ? 20.0 : 5.0));
}
