/** \file `nki` restarts itself with glibc's malloc on transparent huge pages; its inputs may be pipes. */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <thread>

#include "cli/huge_pages.h"
#include "cli_fixture.h"

extern char** environ;

TEST_CASE("cli: GLIBC_TUNABLES gains glibc.malloc.hugetlb=1 unless it sets glibc.malloc.hugetlb") {
  using nki::cli::tunables_with_huge_pages;
  CHECK(tunables_with_huge_pages(nullptr) == "glibc.malloc.hugetlb=1");
  CHECK(tunables_with_huge_pages("") == "glibc.malloc.hugetlb=1");
  CHECK(tunables_with_huge_pages("glibc.malloc.perturb=0") == "glibc.malloc.perturb=0:glibc.malloc.hugetlb=1");
  CHECK(tunables_with_huge_pages("glibc.malloc.hugetlbx=1") == "glibc.malloc.hugetlbx=1:glibc.malloc.hugetlb=1");
  CHECK(tunables_with_huge_pages("glibc.malloc.hugetlb=0") == std::nullopt);
  CHECK(tunables_with_huge_pages("glibc.malloc.perturb=0:glibc.malloc.hugetlb=2") == std::nullopt);
}

TEST_CASE("cli: nki runs with glibc.malloc.hugetlb=1 and reads an --input from a pipe as from a file") {
  clitest::TempDir dir;
  clitest::write_iota_npy(dir.file("x.npy"), {4, 6, 8});
  const std::string fifo = dir.file("pipe.npy");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::vector<std::string> args{test::nki_binary(), "run", "transpose2d", "--input", fifo, "--output",
                                      dir.file("from_pipe.npy")};
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_text{"GLIBC_TUNABLES=glibc.malloc.perturb=0"};
  for (char** e = environ; *e != nullptr; ++e)
    if (!std::string_view(*e).starts_with("GLIBC_TUNABLES=")) env_text.emplace_back(*e);
  std::vector<char*> env;
  for (std::string& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, args[0].c_str(), nullptr, nullptr, argv.data(), env.data()) == 0);

  // nki waits to open the pipe until something writes to it: by then it has started again, with
  // the setting appended to what it was given (which held no such setting). glibc splits the
  // variable's text at ':' in place as it reads it, so the two show as separate entries in
  // /proc/<pid>/environ: look for the setting itself.
  const std::string want = "glibc.malloc.hugetlb=1";
  bool seen = false;
  for (const auto start = std::chrono::steady_clock::now();
       !seen && std::chrono::steady_clock::now() - start < std::chrono::seconds(60);) {
    seen = test::read_bytes(fmt::format("/proc/{}/environ", pid)).find(want) != std::string::npos;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!seen) {  // nothing would open the pipe's other end: stop nki rather than wait on it
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    FAIL("nki did not start again with " << want << " in GLIBC_TUNABLES");
  }
  test::write_bytes(fifo, test::read_bytes(dir.file("x.npy")));  // blocks until nki opens its end
  int status = -1;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);

  const clitest::CliResult r =
      clitest::run_cli({"run", "transpose2d", "--input", dir.file("x.npy"), "--output", dir.file("from_file.npy")});
  REQUIRE(r.status == 0);
  CHECK(test::read_bytes(dir.file("from_pipe.npy")) == test::read_bytes(dir.file("from_file.npy")));
}
