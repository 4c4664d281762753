/** \file Whole-or-nothing output files (temporary + rename). */
#include "cli/pending_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "nki/error.h"

namespace nki::cli {

namespace fs = std::filesystem;

PendingFile::PendingFile(std::string path) : path_(std::move(path)) {
  if (path_.empty()) throw UserError("err_output_not_writable", "", {}, "the output path is empty");
  std::error_code ec;
  if (fs::is_directory(path_, ec)) fail("is a directory; expected a file path");
  // A name of our own (O_EXCL): never truncate a file someone else put there.
  for (int n = 0; fd_ < 0 && n < 1000; ++n) {
    tmp_ = fmt::format("{}.tmp{}-{}", path_, ::getpid(), n);
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  if (fd_ < 0) {
    const int e = errno;
    tmp_.clear();
    const fs::path parent = fs::path(path_).parent_path();
    if (e == ENOENT && !parent.empty() && !fs::exists(parent, ec)) {
      fail(fmt::format("the directory \"{}\" does not exist", parent.string()));
    }
    if (e == ENOTDIR) fail(fmt::format("\"{}\" is not a directory", parent.string()));
    fail(std::strerror(e));
  }
}

PendingFile::~PendingFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void PendingFile::fail(const std::string& why) {
  throw UserError("err_output_not_writable", "", {}, fmt::format("{}: cannot write: {}", path_, why));
}

void PendingFile::write(const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) fail(std::strerror(errno));
  written_ = true;
}

void PendingFile::commit() {
  if (!written_) throw InternalError(fmt::format("PendingFile::commit of {} before write", path_));
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) fail(std::strerror(errno));
  tmp_.clear();  // it is the output now
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const std::filesystem::path x = std::filesystem::weakly_canonical(a, ea), y = std::filesystem::weakly_canonical(b, eb);
  return ea || eb ? a == b : x == y;
}

}  // namespace nki::cli
